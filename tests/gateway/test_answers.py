"""Answers from a real gateway are untrusted: the readers return a value or a sentence for
any bytes at all, never raise (spec, "Issuer-side contract"; the hostile-input rule)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.gateway.answers import read_created, read_refund, read_snapshot, step_allowed
from clearing_sim.gateway.transport import Call
from clearing_sim.sim.issuer import Snapshot
from tests.strategies import HOSTILE_RAW

_S = InstructionStatus
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                   max_size=5), max_leaves=12)
bodies = st.one_of(
    json_values.map(json.dumps),
    st.fixed_dictionaries({"instructionId": st.one_of(st.just("i-1"), json_values),
                           "status": st.one_of(st.sampled_from([s.value for s in _S]),
                                               json_values),
                           "onchain": json_values, "transactionId": json_values,
                           "refundTxHash": json_values}).map(json.dumps),
    st.text(max_size=200),
    st.sampled_from(HOSTILE_RAW).map(lambda raw: raw.decode("utf-8", "replace")))


@given(bodies, st.sampled_from([200, 201, 404, 500, 503]))
def test_readers_never_raise(body: str, status: int) -> None:
    call = Call("GET", "http://gateway.test/x", status=status, response_body=body)
    assert isinstance(read_created(call), tuple | str)
    assert isinstance(read_snapshot(call, "i-1"), Snapshot | str)
    assert isinstance(read_refund(call, "t-1"), tuple | str)


def test_completed_needs_its_proof() -> None:
    def read(onchain: object) -> Snapshot | str:
        body = {"instructionId": "i-1", "status": "COMPLETED", "onchain": onchain}
        return read_snapshot(Call("GET", "u", status=200, response_body=json.dumps(body)),
                             "i-1")

    assert read({"txHash": "ab", "ledgerSequence": 7}) == Snapshot("i-1", _S.COMPLETED, "ab", 7)
    assert "no proof" in str(read({"txHash": None, "ledgerSequence": 7}))
    assert "no proof" in str(read({"txHash": "ab", "ledgerSequence": True}))


def test_statuses_only_move_forward() -> None:
    assert step_allowed(_S.RECEIVED, _S.PENDING_APPROVAL)
    assert step_allowed(_S.PENDING_APPROVAL, _S.REJECTED)
    assert not step_allowed(_S.APPROVED, _S.RECEIVED)
    assert not step_allowed(_S.COMPLETED, _S.FAILED)
    assert not step_allowed(_S.REJECTED, _S.APPROVED)


@pytest.mark.parametrize("instruction_id", ["a\u0007b", "x\n", "\u0085", ".", "..",
                                            "unanswered:k", "conflicted:k", "i" * 201, ""])
def test_an_instruction_id_that_cannot_be_one_is_a_malformed_creation(
        instruction_id: str) -> None:
    call = Call("POST", "http://gateway.test/x", status=201, response_body=json.dumps(
        {"instructionId": instruction_id, "status": "RECEIVED"}))
    assert isinstance(read_created(call), str)
