"""List cursors: opaque, bound to the caller and the query, unforgeable (issue 13)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.service.cursors import CURSOR_LENGTH_MAX, CursorCodec, Position
from tests.service.conftest import Service

ITEM = Position("7af86bc6-f9ce-4b1e-8a47-0c1c0b7a1d2e", 1_234)
SCOPE = CursorCodec.query_scope("/api/v1/transactions", (("limit", "1"),), 1)


def _code(codec: CursorCodec, text: str, who: str = "p1", scope: str = SCOPE) -> str:
    with pytest.raises(InvalidRequest) as caught:
        codec.decode(text, who, scope)
    return caught.value.problems[0].code


def test_a_cursor_round_trips_for_its_caller_and_query() -> None:
    codec = CursorCodec(b"k" * 32)
    text = codec.encode(ITEM, "p1", SCOPE)
    assert len(text) <= CURSOR_LENGTH_MAX and text.isascii()
    assert codec.decode(text, "p1", SCOPE) == ITEM


def test_another_participant_query_or_key_is_invalid_cursor() -> None:
    codec = CursorCodec(b"k" * 32)
    text = codec.encode(ITEM, "p1", SCOPE)
    other_scope = CursorCodec.query_scope("/api/v1/transactions", (), 20)
    assert _code(codec, text, who="p2") == "invalid_cursor"
    assert _code(codec, text, scope=other_scope) == "invalid_cursor"
    assert _code(CursorCodec(b"j" * 32), text) == "invalid_cursor"


def test_the_cursor_does_not_show_a_position_in_plain_text() -> None:
    text = CursorCodec(b"k" * 32).encode(ITEM, "p1", SCOPE)
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    assert b"txc1" not in raw and str(ITEM.at_ms).encode() not in raw


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80) | st.sampled_from(["9" * 5000, "dHhjMTo5OTk5OTk", ""]),
       flip=st.integers(0, 53))
def test_nothing_but_an_issued_cursor_decodes(text: str, flip: int) -> None:
    codec = CursorCodec(b"k" * 32)
    issued = codec.encode(ITEM, "p1", SCOPE)
    assert _code(codec, text) == "invalid_cursor" if text != issued else True
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    changed = issued[:flip] + alphabet[(alphabet.index(issued[flip]) + 1) % 64] \
        + issued[flip + 1:]
    assert _code(codec, changed) == "invalid_cursor"


def test_a_served_list_pages_with_cursors_and_refuses_a_foreign_one(svc: Service) -> None:
    ids = [svc.call("POST", "/api/v1/transactions", svc.member.key,
                    svc.redeem_body(reference=f"R-{i}")).json()["data"]["id"] for i in range(3)]
    seen: list[str] = []
    target = "/api/v1/transactions?limit=2"
    while True:
        page = svc.call("GET", target, svc.member.key).json()
        seen += [item["id"] for item in page["data"]]
        if page["meta"]["nextCursor"] is None:
            break
        cursor = page["meta"]["nextCursor"]
        foreign = svc.call("GET", f"/api/v1/transactions?limit=2&cursor={cursor}",
                           svc.other.key)
        assert foreign.json()["errors"][0]["code"] == "invalid_cursor"
        target = f"/api/v1/transactions?limit=2&cursor={cursor}"
    assert seen == ids[::-1]
