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
