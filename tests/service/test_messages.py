"""Answers as values: the bytes are the answer; ``payload`` is the value they encode, kept
for a caller in the same process (the workload driver), never part of equality."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.service.messages import Response, _split_target, encode_json


def test_payload_is_not_compared_and_answers_from_bytes_have_none() -> None:
    payload = {"data": {"id": "t1"}, "meta": {"commandId": "c"}}
    built = Response(201, (), encode_json(payload), payload)
    from_bytes = Response(201, (), encode_json(payload))
    assert built == from_bytes
    assert from_bytes.payload is None
    assert built.payload == built.json() == from_bytes.json()
    assert "payload" not in repr(built)


def test_a_deferred_answer_encodes_its_payload_once_when_read_the_same_bytes() -> None:
    payload = {"data": {"id": "t1", "text": "café"}, "meta": {"commandId": "c"}}
    eager = Response(201, (("Content-Type", "application/json"),), encode_json(payload),
                     payload)
    deferred = Response.deferred(201, (("Content-Type", "application/json"),), payload)
    assert deferred.payload is payload
    assert deferred.body == eager.body == encode_json(payload)
    assert deferred.body is deferred.body  # encoded once, then kept
    assert deferred == eager and hash(deferred) == hash(eager)
    assert repr(deferred) == repr(eager)
    assert deferred.json() == payload
    assert deferred != Response(201, (), encode_json(payload))


@given(st.one_of(st.text(max_size=30), st.text(max_size=30).map(lambda t: "/" + t),
                 st.sampled_from(["/api/v1/transactions", "/a?b=1&c=", "/a#f", "//h/p",
                                  "/a\tb", " /a", "/a b", "/é", "/a:b", "/a\x00"])))
@settings(max_examples=500)
def test_a_requests_path_and_query_are_urlsplits_and_parse_qsls(target: str) -> None:
    """``Request.build`` reads a target as ``urlsplit`` and ``parse_qsl`` do, plain paths
    included (they skip the parsers)."""
    try:
        parts = urlsplit(target)
        expected: object = (parts.path,
                            tuple(parse_qsl(parts.query, keep_blank_values=True)))
    except ValueError as refused:
        expected = ValueError, str(refused)
    try:
        got: object = _split_target(target)
    except ValueError as refused:
        got = ValueError, str(refused)
    assert got == expected
