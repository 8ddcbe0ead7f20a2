"""The webhook signature (spec, "Events": ``Service-Signature: t=<unix_seconds>,v1=<hex>``,
lowercase hex HMAC-SHA256 with the signing secret over ``<t>.<raw body>``; receivers reject
``|now - t| > 300`` s; Limits: replay window 5 minutes)."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.signing import REPLAY_WINDOW_S, sign, signature_header, verify

SECRET = "whsec_test"
T = 1_767_225_600
BODY = b'{"id":"evt_1"}'
#: HMAC-SHA256(b"whsec_test", b'1767225600.{"id":"evt_1"}'), computed once with hmac/hashlib.
VECTOR = "45b40331de0325606dc5400202ade162460fbe48daf9401adfdcd0d7b4f35470"
HEADER = f"t={T},v1={VECTOR}"


def test_sign_matches_the_fixed_vector() -> None:
    independent = hmac.new(SECRET.encode(), f"{T}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert independent == VECTOR
    assert sign(SECRET, T, BODY) == VECTOR


def test_sign_of_an_empty_body() -> None:
    assert sign(SECRET, T, b"") == (
        "bc5f22c68024f86d3be1b4ddd6417a119940e00ea9c5f409f8e48b2b4c7c771f")


def test_signature_header_format() -> None:
    assert signature_header(SECRET, T, BODY) == HEADER
    assert VECTOR.lower() == VECTOR


def test_replay_window_is_300_seconds() -> None:
    assert REPLAY_WINDOW_S == 300


@pytest.mark.parametrize("now", [T, T + 1, T + 300, T - 300])
def test_verify_accepts_a_valid_header_within_the_window(now: int) -> None:
    assert verify(SECRET, HEADER, BODY, now)


@pytest.mark.parametrize("now", [T + 301, T - 301, T + 86_400, 0])
def test_verify_rejects_a_timestamp_more_than_300_s_away(now: int) -> None:
    assert not verify(SECRET, HEADER, BODY, now)


def test_verify_rejects_a_wrong_secret() -> None:
    assert not verify("whsec_other", HEADER, BODY, T)


@pytest.mark.parametrize("body", [b'{"id":"evt_2"}', b'{"id": "evt_1"}', b"", BODY + b"\n"])
def test_verify_rejects_a_tampered_body(body: bytes) -> None:
    assert not verify(SECRET, HEADER, body, T)


@pytest.mark.parametrize("header", [None, ""])
def test_verify_rejects_a_missing_header(header: str | None) -> None:
    assert not verify(SECRET, header, BODY, T)


@pytest.mark.parametrize("header", [
    "garbage",
    VECTOR,
    f"v1={VECTOR}",                       # no t
    f"t={T}",                             # no v1
    f"t={T},v1=",                         # empty v1
    f"t=abc,v1={VECTOR}",                 # t not a number
    f"t=-{T},v1={VECTOR}",                # signed t
    f"t={T}.0,v1={VECTOR}",
    f"t={T + 1},v1={VECTOR}",             # t changed without re-signing
    f"t={T},v1={VECTOR.upper()}",         # spec: lowercase hex
    f"t={T},v1={VECTOR[:-1]}",            # truncated
    f"t={T};v1={VECTOR}",                 # wrong separator
    f"t={T},v0={VECTOR}",                 # wrong scheme
], ids=repr)
def test_verify_rejects_a_malformed_header(header: str) -> None:
    assert not verify(SECRET, header, BODY, T)


def test_verify_tolerates_spaces_after_commas() -> None:
    assert verify(SECRET, f"t={T}, v1={VECTOR}", BODY, T)


@pytest.mark.parametrize("header", [f"t=²,v1={VECTOR}", f"t={T},v1=é"], ids=repr)
def test_verify_rejects_a_non_ascii_header_without_raising(header: str) -> None:
    assert verify(SECRET, header, BODY, T) is False


@settings(max_examples=100)
@given(st.lists(st.tuples(st.sampled_from(["whsec_a", "whsec_b"]), st.integers(0, 3),
                          st.sampled_from([b"", b"{}", b'{"a":1}'])), min_size=1, max_size=8))
def test_sign_kept_from_the_last_call_is_the_hmac_of_every_call(
        calls: list[tuple[str, int, bytes]]) -> None:
    """``sign`` keeps its last answer (issue 18: a simulated webhook is signed and verified
    with one HMAC); any sequence of calls still gets each call's own HMAC."""
    for secret, t, body in calls:
        expected = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256)
        assert sign(secret, t, body) == expected.hexdigest()
        assert verify(secret, signature_header(secret, t, body), body, t)
