"""Answers from a real gateway are untrusted: the readers return a value or a sentence for
any bytes at all, never raise (spec, "Issuer-side contract"; the hostile-input rule)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.gateway.answers import (
    moved_before_execute,
    read_created,
    read_refund,
    read_snapshot,
    step_allowed,
    step_problem,
)
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
    assert read({"txHash": None, "ledgerSequence": 7}) == \
        "COMPLETED must carry onchain.txHash (its proof), not None"
    assert read({"txHash": "ab", "ledgerSequence": True}) == \
        "onchain.ledgerSequence must be an integer, not True"
    assert read({"txHash": "ab", "ledgerSequence": "1001"}) == \
        "onchain.ledgerSequence must be an integer, not '1001'"
    assert read({"txHash": "ab"}) == "COMPLETED must carry onchain.ledgerSequence (an integer)"


def test_a_status_outside_the_spec_s_seven_is_named_with_the_field() -> None:
    """Spec, issuer instruction statuses: RECEIVED, PENDING_APPROVAL, APPROVED, EXECUTING,
    COMPLETED, REJECTED, FAILED. A lowercase one is not one of them."""
    def read(status: object) -> Snapshot | str:
        body = {"instructionId": "i-1", "status": status}
        return read_snapshot(Call("GET", "u", status=200, response_body=json.dumps(body)),
                             "i-1")

    assert str(read("completed")).startswith("status 'completed' is not one of the spec's seven")
    assert str(read(None)).startswith("status is missing")
    assert read("APPROVED") == Snapshot("i-1", _S.APPROVED)


def test_a_forbidden_step_names_its_rule() -> None:
    assert step_problem(_S.APPROVED, _S.REJECTED).startswith("REJECTED after APPROVED: ")
    assert step_problem(_S.COMPLETED, _S.EXECUTING) == \
        "EXECUTING after COMPLETED: a final status never changes"
    assert step_problem(_S.EXECUTING, _S.APPROVED) == \
        "EXECUTING → APPROVED: a status never moves backwards"


def test_what_says_the_asset_moved_before_execute() -> None:
    """In Mode 2 nothing moves before execute: EXECUTING, COMPLETED (any case) or an
    on-chain hash say it did; a holding status without a hash does not."""
    assert moved_before_execute({"status": "EXECUTING"}) is not None
    assert moved_before_execute({"status": "completed"}) is not None
    assert moved_before_execute({"status": "APPROVED", "onchain": {"txHash": "ab"}}) is not None
    assert moved_before_execute({"status": "PENDING_APPROVAL",
                                 "onchain": {"txHash": None}}) is None
    assert moved_before_execute("not an object") is None


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
