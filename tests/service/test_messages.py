"""Answers as values: the bytes are the answer; ``payload`` is the value they encode, kept
for a caller in the same process (the workload driver), never part of equality."""

from __future__ import annotations

from clearing_sim.service.messages import Response, encode_json


def test_payload_is_not_compared_and_answers_from_bytes_have_none() -> None:
    payload = {"data": {"id": "t1"}, "meta": {"commandId": "c"}}
    built = Response(201, (), encode_json(payload), payload)
    from_bytes = Response(201, (), encode_json(payload))
    assert built == from_bytes
    assert from_bytes.payload is None
    assert built.payload == built.json() == from_bytes.json()
    assert "payload" not in repr(built)
