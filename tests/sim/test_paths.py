"""Every path through the saga, per settlement mode, use case and outcome.

Spec, "States and transitions" (the table, rules 1-3), "Conformance" (rejected, failed,
silence and their pass criteria) and "Transaction (full form)" (details, saga steps, reason,
fee status). Each path runs on ``example_world(0)`` and is checked against a small model of
what the spec says it must end in: state, details, saga, reason, fee, the public events in
order, and every balance it may move (member wallets, token supply, RTGS accounts), with the
money invariants checked on every log record.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest
from attrs import frozen

from clearing_sim.domain.errors import NotAllowed
from clearing_sim.domain.ids import CommandId, instruction_idempotency_key
from clearing_sim.domain.initiation import InitiateRequest
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.transaction import Transaction, UseCase, cancel_action
from clearing_sim.sim.examples import Cast, example_world, issuer_profile, redeem, swap
from tests.sim.simkit import (
    INTAKE_MS,
    holdings,
    instruction_ids,
    state_events,
    step_until,
    steps,
    watch_invariants,
)

AMOUNT = Decimal("100.00")
FEE = Decimal("0.10")  # 10 bps of 100.00 (default FeeSchedule)
RECEIVE = AMOUNT - FEE
FIX_COMMAND = CommandId("6f1c2a9e-3b1d-4c55-9a87-0d2e4b6c8f10")

ARMED = {"rejected": Outcome.REJECTED, "failed": Outcome.FAILED, "silence": Outcome.SILENCE,
         "fix_after_failed": Outcome.FAILED, "fix_after_silence": Outcome.SILENCE}
OUTCOMES = ("happy", "cancel_at_lock", "cancel_at_earmark", *ARMED)
SWAPS = ((2, 3), (3, 2), (1, 2), (2, 1), (1, 3), (3, 1))
CHAIN_WHILE_PARKED_ON_BURN = {2: "Locked", 3: "TransferredToIssuer"}


@frozen
class Path:
    use_case: UseCase
    src: int
    dst: int | None
    outcome: str

    @property
    def id(self) -> str:
        legs = f"m{self.src}" if self.dst is None else f"{self.src}to{self.dst}"
        return f"{self.use_case.value}-{legs}-{self.outcome}"

    def request(self, cast: Cast) -> InitiateRequest:
        if self.dst is None:
            return redeem(cast.asset(self.src))
        return swap(cast.asset(self.src), cast.asset(self.dst))

    @property
    def armed(self) -> Outcome | None:
        return ARMED.get(self.outcome)

    @property
    def armed_leg(self) -> str | None:
        """The leg an armed outcome lands on: the first leg whose issuer decides, burn first;
        a Mode 1 burn is co-signed after every decision (sim/saga.py ``plan``)."""
        if self.armed is None:
            return None
        return "mint" if self.src == 1 else "burn"

    @property
    def refunded(self) -> bool:
        """A Mode 3 burn parked on silence: the issuer refunds the transferred tokens."""
        return self.outcome == "silence" and self.armed_leg == "burn" and self.src == 3

    @property
    def armed_mode(self) -> int | None:
        return None if self.armed_leg is None else self.src if self.armed_leg == "burn" \
            else self.dst

    @property
    def end(self) -> str:
        if self.outcome in ("happy", "fix_after_failed", "fix_after_silence"):
            return "settled"
        if self.outcome.startswith("cancel"):
            return self.outcome
        if self.outcome == "rejected":  # States rule 3: REJECTED always unwinds
            return "unwound"
        return "parked"


PATHS = [Path(UseCase.REDEEM, 1, None, o) for o in OUTCOMES[:3]]
PATHS += [Path(UseCase.REDEEM, m, None, o) for m in (2, 3) for o in OUTCOMES]
PATHS += [Path(UseCase.SWAP, s, d, o) for s, d in SWAPS for o in OUTCOMES]


# the model --------------------------------------------------------------------------------
_DONE = "done"
_STEPS = {
    "settled": ([_DONE] * 6, 5),
    "cancel_at_lock": ([_DONE, _DONE, "cancelled", "cancelled", "cancelled"], 4),
    "cancel_at_earmark": ([_DONE, _DONE, _DONE, "cancelled", "cancelled"], 4),
    "unwound": ([_DONE] * 4 + ["cancelled", "cancelled"], 4),
    "parked": ([_DONE] * 4 + ["current", "pending"], 4),
}
_FULL = ("Received", "Validated", "Lock", "Earmarked", "Burning", "Settled")
_CANCELLED = ("Received", "Validated", "Lock", "Earmarked", "Cancelled")


def expected(path: Path) -> dict[str, Any]:
    """What the spec says the transaction looks like at the end of ``path``."""
    end = path.end
    statuses, index = _STEPS[end]
    names = _CANCELLED if end.startswith("cancel") else _FULL
    parked_reason = {"failed": "issuer_failed", "silence": "approval_sla_exceeded"}
    events = {"settled": ["received", "in_flight", "settled"],
              "unwound": ["received", "in_flight", "failed"],
              "parked": ["received", "in_flight", "parked"]}.get(end)
    if end.startswith("cancel"):
        events = ["received", "in_flight", "cancelled"]
    if path.outcome.startswith("fix_"):
        events = ["received", "in_flight", "parked", "in_flight", "settled"]
    if end == "parked" and path.refunded:
        chain = "ReturnedToSender"  # the Mode 3 refund after parking returned the tokens
    elif end == "parked":  # a mint's issuer decides before the Mode 1 burn: Locked
        chain = "Locked" if path.armed_leg == "mint" else CHAIN_WHILE_PARKED_ON_BURN[path.src]
    else:  # a cancel shows the spec's values whatever step it interrupted
        chain = {"settled": "Minted" if path.dst else "Burned"}.get(end, "ReturnedToSender")
    return {
        "lifecycleStatus": {"settled": "settled", "unwound": "failed", "parked": "failed"}
        .get(end, "cancelled"),
        "parked": end == "parked",
        "terminal": True,
        "chain": chain,
        "rtgs": {"settled": "Settled", "parked": "Earmarked"}.get(end, "Cancelled"),
        "sagaPath": "cancelled" if end.startswith("cancel") else "full",
        "steps": list(zip(names, statuses, strict=True)),
        "currentStepIndex": index,
        "reason": {"settled": None, "unwound": "issuer_rejected", "parked":
                   parked_reason.get(path.outcome)}.get(end, "operator_cancelled"),
        "feeStatus": {"settled": "collected", "parked": "pending"}.get(end, "waived"),
        "events": events,
        "cancelAllowed": False,
    }


def expected_deltas(cast: Cast, path: Path) -> dict[tuple[str, str], Decimal]:
    """How each balance moves by the end of ``path`` (absent keys do not move)."""
    src = cast.asset(path.src).code
    src_issuer = cast.issuers[path.src].name
    end = path.end
    if end == "settled":
        creditor = cast.member.name if path.dst is None else cast.issuers[path.dst].name
        deltas = {("wallet", src): -AMOUNT, ("supply", src): -AMOUNT,
                  ("rtgs", src_issuer): -AMOUNT, ("rtgs", creditor): RECEIVE,
                  ("rtgs", "operator:fees"): FEE}
        if path.dst is not None:
            dst = cast.asset(path.dst).code
            deltas |= {("wallet", dst): RECEIVE, ("supply", dst): RECEIVE}
        return deltas
    if end != "parked":
        return {}  # cancelled or unwound: everything back where it was
    deltas = {("rtgs", src_issuer): -AMOUNT}  # still earmarked
    return deltas | ({} if path.refunded else {("wallet", src): -AMOUNT})


# the driver -------------------------------------------------------------------------------
def drive(cast: Cast, path: Path) -> Transaction:
    world = cast.world
    tx = world.initiate(cast.member.id, path.request(cast))
    if path.outcome == "cancel_at_lock":
        world.run_until(tx.initiated_at_ms + INTAKE_MS)
        now = world.transactions[tx.id]
        assert (now.lifecycle_status.value, now.saga.current.name.value) == ("in-flight", "Lock")
        world.cancel(tx.id)
    elif path.outcome == "cancel_at_earmark":
        step_until(world, "ledger.lock", transactionId=tx.id)
        assert world.transactions[tx.id].saga.current.name.value == "Earmarked"
        world.cancel(tx.id)
    elif path.armed is not None:
        world.arm(tx.id, path.armed)
    world.run_all()
    if path.outcome.startswith("fix_"):
        assert world.transactions[tx.id].parked
        world.resolve(tx.id, FIX_COMMAND)
        world.run_all()
    return world.transactions[tx.id]


def observed(world: Any, tx: Transaction) -> dict[str, Any]:
    return {
        "lifecycleStatus": tx.lifecycle_status.value,
        "parked": tx.parked,
        "terminal": tx.terminal,
        "chain": tx.chain.value,
        "rtgs": tx.rtgs.value,
        "sagaPath": tx.saga.path.value,
        "steps": steps(tx),
        "currentStepIndex": tx.saga.current_index,
        "reason": tx.reason_code,
        "feeStatus": tx.fee_status.value,
        "events": state_events(world, tx.id),
        "cancelAllowed": cancel_action(tx).allowed,
    }


# the matrix -------------------------------------------------------------------------------
@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.id)
def test_path_ends_as_the_states_and_transitions_table_says(path: Path) -> None:
    """Spec, "States and transitions": state, parked, terminal, details, saga steps, reason,
    fee status and the public events in order; Conformance pass criteria: no balance
    discrepancy, the locked asset back in the sender wallet after an unwind."""
    cast = example_world(0)
    world = cast.world
    before = holdings(cast)
    final_check = watch_invariants(world)

    tx = drive(cast, path)

    assert observed(world, tx) == expected(path)
    deltas = expected_deltas(cast, path)
    assert holdings(cast) == {k: v + deltas.get(k, Decimal(0)) for k, v in before.items()}
    final_check()
    assert tx.saga.total == (5 if path.end.startswith("cancel") else 6)
    for step in tx.saga.steps:  # done and cancelled steps carry their time, the others not
        assert (step.happened_at_ms is not None) == (step.status.value in ("done", "cancelled"))
    _EXTRA[path.end](world, tx, path)


def _settled(world: Any, tx: Transaction, path: Path) -> None:
    """Settlement follows proof-backed issuer events: each Burned/Minted carries the hash of
    the ledger's burn/mint; RTGS pays the creditor the amount less the fee."""
    for leg, event in (("burn", "Burned"), ("mint", "Minted")):
        if leg == "mint" and path.dst is None:
            continue
        proofs = world.log.select("saga.event", transactionId=tx.id, event=event)
        moves = world.log.select(f"ledger.{leg}", transactionId=tx.id)
        assert len(proofs) == len(moves) == 1
        assert proofs[0]["txHash"] == moves[0]["txHash"]
    [settle] = world.log.select("rtgs.settle", transactionId=tx.id)
    assert (settle["amountGbp"], settle["feeGbp"]) == (f"{RECEIVE:f}", f"{FEE:f}")
    assert settle["creditor"] == tx.creditor.participant_id
    if path.src == 1 and path.dst in (None, 1):  # Rule 1: Mode 1 has no instruction step
        assert not world.log.select("saga.instruction_sent", transactionId=tx.id)
    if path.outcome.startswith("fix_"):
        _fixed(world, tx, path)


def _fixed(world: Any, tx: Transaction, path: Path) -> None:
    """Operator fix: in-flight again, the old instruction read first, then a new instruction
    with a new idempotency key (UUIDv5 of the fix's command id and the leg)."""
    leg = path.armed_leg
    assert leg is not None
    first, second = world.log.select("saga.instruction_sent", transactionId=tx.id, leg=leg)
    assert first["idempotencyKey"] != second["idempotencyKey"]
    assert second["idempotencyKey"] == instruction_idempotency_key(FIX_COMMAND, leg)
    old, new = instruction_ids(world, tx.id, leg)
    back = world.log.select("transaction.state", transactionId=tx.id)[3]
    assert back["trigger"] == "operator_fix"
    reads = [r for r in world.log.select("issuer.request", route="GET /instructions/{id}",
                                         instructionId=old) if r.seq > back.seq]
    assert reads and reads[0].seq < second.seq
    assert len(world.log.select("issuer.armed_applied", instructionId=new)) == 0


def _parked(world: Any, tx: Transaction, path: Path) -> None:
    """FAILED and silence park with nothing undone; silence parks at the deadline of the
    request the SLA counts from (Mode 2: the execute call; Mode 3: the instruction); a Mode 3
    burn leg asks the issuer for a refund after parking on silence."""
    [parked] = world.log.select("transaction.state", transactionId=tx.id,
                                event="transaction.parked")
    kind = "saga.execute_sent" if path.armed_mode == 2 else "saga.instruction_sent"
    sent = world.log.select(kind, transactionId=tx.id, leg=path.armed_leg)[0]
    refunds = world.log.select("issuer.refund", transactionId=tx.id)
    if path.outcome == "silence":
        assert parked.at_ms == sent["deadlineMs"] == sent.at_ms + 900_000
        if path.refunded:
            [refund] = refunds
            assert (refund["reason"], refund["status"]) == ("instruction_expired", "refunded")
            assert refund.at_ms > parked.at_ms
            return
    assert not refunds
    assert not world.log.select("ledger.return", transactionId=tx.id)
    assert not world.log.select("rtgs.release", transactionId=tx.id)


def _unwound(world: Any, tx: Transaction, path: Path) -> None:
    """REJECTED: automatic unwind. A lock is returned; a Mode 3 burn's transferred tokens
    come back through the refund endpoint (they already sit in the issuer's treasury); an
    instruction never executed is closed at its issuer; the earmark is released. Only the
    rejecting leg was executed (a Mode 2 issuer decides after its execute)."""
    refunds = world.log.select("issuer.refund", transactionId=tx.id)
    returns = world.log.select("ledger.return", transactionId=tx.id)
    if path.armed_leg == "burn" and path.src == 3:
        [refund] = refunds
        assert (refund["reason"], refund["status"]) == ("instruction_rejected", "refunded")
        assert not returns
    else:
        assert len(returns) == 1 and not refunds
    assert len(world.log.select("rtgs.release", transactionId=tx.id)) == 1
    assert not world.log.select("ledger.burn", transactionId=tx.id)
    assert not world.log.select("ledger.mint", transactionId=tx.id)
    rejected = {r["instructionId"] for r in world.log.select(
        "issuer.instruction", transactionId=tx.id, status="REJECTED")}
    assert len(rejected) == 1
    for instruction_id in instruction_ids(world, tx.id):
        if instruction_id not in rejected:
            assert world.log.select("issuer.expired", instructionId=instruction_id)
    executed = [r["leg"] for r in world.log.select("saga.execute_sent", transactionId=tx.id)]
    assert executed == ([path.armed_leg] if path.armed_mode == 2 else [])


def _cancelled(world: Any, tx: Transaction, path: Path) -> None:
    """Cancel is instant and final: the asset returns at once, the interrupted lock or
    earmark never lands, and nothing of the transaction happens afterwards."""
    [cancel] = world.log.select("transaction.state", transactionId=tx.id,
                                event="transaction.cancelled")
    after = [r for r in world.log if r.get("transactionId") == tx.id and r.seq > cancel.seq]
    assert after == []
    assert not world.log.select("rtgs.earmark", transactionId=tx.id)
    assert not world.log.select("issuer.request", reference=uuid.UUID(tx.id).hex)
    returns = world.log.select("ledger.return", transactionId=tx.id)
    if path.outcome == "cancel_at_lock":
        assert not world.log.select("ledger.lock", transactionId=tx.id) and not returns
    else:
        [returned] = returns
        assert returned.at_ms == cancel.at_ms


_EXTRA = {"settled": _settled, "parked": _parked, "unwound": _unwound,
          "cancel_at_lock": _cancelled, "cancel_at_earmark": _cancelled}


# Rule 1 -----------------------------------------------------------------------------------
def _second_mode_1_issuer(cast: Cast) -> Any:
    world = cast.world
    lumen = world.add_issuer("Lumen Pound", issuer_profile(1), ("GBPL",),
                             Decimal("10000000.00"))
    world.fund(cast.member, lumen.assets[0], Decimal("10000.00"))
    return lumen


@pytest.mark.parametrize("outcome", [Outcome.REJECTED, Outcome.FAILED, Outcome.SILENCE])
@pytest.mark.parametrize("use_case", ["redeem", "swap"])
def test_mode_1_transactions_cannot_be_armed(cast: Cast, use_case: str,
                                             outcome: Outcome) -> None:
    """Rule 1: Mode 1 transactions have no issuer instruction step and cannot be armed; the
    refusal changes nothing and the transaction settles as if never armed."""
    world = cast.world
    if use_case == "redeem":
        request = redeem(cast.asset(1))
    else:
        request = swap(cast.asset(1), _second_mode_1_issuer(cast).assets[0])
    tx = world.initiate(cast.member.id, request)
    with pytest.raises(NotAllowed) as refused:
        world.arm(tx.id, outcome)
    assert refused.value.problems[0].code == "no_issuer_instruction"
    assert not world.log.select("issuer.armed")
    world.run_all()
    assert world.transactions[tx.id].lifecycle_status.value == "settled"
    assert not world.log.select("saga.instruction_sent")


@pytest.mark.parametrize("src", [2, 3])
def test_swap_into_mode_1_cannot_be_armed_once_its_burn_is_done(cast: Cast, src: int) -> None:
    """Rule 1 per leg: after the instructed burn completed, only the Mode 1 mint is left."""
    world = cast.world
    tx = world.initiate(cast.member.id, swap(cast.asset(src), cast.asset(1)))
    step_until(world, "saga.event", transactionId=tx.id, event="Burned")
    with pytest.raises(NotAllowed):
        world.arm(tx.id, Outcome.FAILED)
    world.run_all()
    assert world.transactions[tx.id].lifecycle_status.value == "settled"


# paths the matrix does not reach ----------------------------------------------------------
def test_cancel_while_received_returns_nothing_and_publishes_cancelled(cast: Cast) -> None:
    """Open transaction + cancel → cancelled, with the spec's cancel values
    (ReturnedToSender, Cancelled); before intake nothing was locked, so nothing moves."""
    world = cast.world
    before = holdings(cast)
    tx = world.initiate(cast.member.id, redeem(cast.asset(2)))
    world.run_until(INTAKE_MS - 1)
    world.cancel(tx.id)
    world.run_all()
    tx = world.transactions[tx.id]
    assert (tx.lifecycle_status.value, tx.chain.value, tx.rtgs.value) == (
        "cancelled", "ReturnedToSender", "Cancelled")
    assert state_events(world, tx.id) == ["received", "cancelled"]
    assert steps(tx)[-1] == ("Cancelled", "cancelled")
    assert holdings(cast) == before


@pytest.mark.parametrize("mode", [1, 2, 3])
def test_cancel_not_allowed_once_burning_started(cast: Cast, mode: int) -> None:
    """actions.cancel: refused from the Burning step on (settlement_in_progress), after
    settlement (409 on settled) and once failed; a refusal changes nothing."""
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(mode)))
    step_until(world, "rtgs.earmark", transactionId=tx.id)
    burning = world.transactions[tx.id]
    assert burning.saga.current.name.value == "Burning"
    assert cancel_action(burning).reason == "settlement_in_progress"
    with pytest.raises(NotAllowed) as refused:
        world.cancel(tx.id)
    assert refused.value.problems[0].code == "settlement_in_progress"
    assert world.transactions[tx.id] == burning
    world.run_all()
    with pytest.raises(NotAllowed) as refused:
        world.cancel(tx.id)
    assert refused.value.problems[0].code == "already_settled"
    assert world.transactions[tx.id].lifecycle_status.value == "settled"


def test_cancel_not_allowed_on_parked_or_cancelled(cast: Cast) -> None:
    """Cancel needs an open transaction: parked (failed) and cancelled ones refuse it."""
    world = cast.world
    parked = world.initiate(cast.member.id, redeem(cast.asset(2)))
    world.arm(parked.id, Outcome.FAILED)
    cancelled = world.initiate(cast.member.id, redeem(cast.asset(3), reference="INV-0002"))
    world.cancel(cancelled.id)
    world.run_all()
    for tx_id, code in ((parked.id, "transaction_failed"), (cancelled.id, "already_cancelled")):
        with pytest.raises(NotAllowed) as refused:
            world.cancel(tx_id)
        assert refused.value.problems[0].code == code


@pytest.mark.parametrize("mode", [1, 2, 3])
def test_lock_refused_fails_with_insufficient_funds(cast: Cast, mode: int) -> None:
    """Ours (semantics.md): the chain refuses the lock → failed, not parked, nothing moved."""
    world = cast.world
    before = holdings(cast)
    tx = world.initiate(cast.member.id, redeem(cast.asset(mode), "20000.00"))
    world.run_all()
    tx = world.transactions[tx.id]
    assert (tx.lifecycle_status.value, tx.parked, tx.reason_code, tx.fee_status.value) == (
        "failed", False, "insufficient_funds", "waived")
    assert (tx.chain.value, tx.rtgs.value) == ("None", "None")
    assert steps(tx)[2:] == [(n, "cancelled") for n in _FULL[2:]]
    assert state_events(world, tx.id) == ["received", "in_flight", "failed"]
    assert holdings(cast) == before


@pytest.mark.parametrize("mode", [2, 3])
def test_earmark_refused_returns_the_asset(cast: Cast, mode: int) -> None:
    """Ours (semantics.md): the issuer cannot cover the fiat → asset returned, failed."""
    world = cast.world
    poor = world.add_issuer("Poor Pound", issuer_profile(mode), ("GBPP",), Decimal("50.00"))
    world.fund(cast.member, poor.assets[0], Decimal("1000.00"))
    before = holdings(cast)
    check = watch_invariants(world)
    tx = world.initiate(cast.member.id, redeem(poor.assets[0]))
    world.run_all()
    tx = world.transactions[tx.id]
    assert (tx.lifecycle_status.value, tx.parked, tx.reason_code) == ("failed", False,
                                                                      "earmark_refused")
    assert (tx.chain.value, tx.rtgs.value, tx.fee_status.value) == ("ReturnedToSender", "None",
                                                                    "waived")
    assert steps(tx)[2:] == [("Lock", "done"), ("Earmarked", "cancelled"),
                             ("Burning", "cancelled"), ("Settled", "cancelled")]
    assert len(world.log.select("rtgs.refused", transactionId=tx.id)) == 1
    assert holdings(cast) == before
    check()


@pytest.mark.parametrize(("src", "dst"), [(2, 3), (3, 2), (1, 2), (1, 3), (2, 1), (3, 1)])
def test_swap_mint_rejected_at_its_decision_unwinds_with_nothing_moved(cast: Cast, src: int,
                                                                      dst: int) -> None:
    """States rule 3, the REJECTED row: a rejection armed on the mint's decision (or the
    burn's, where the mint has no issuer) ends failed, parked false, transaction.failed,
    the sender's value back and no discrepancy. The target decides before anything
    irrevocable: nothing was burned or minted."""
    world = cast.world
    before = holdings(cast)
    check = watch_invariants(world)
    tx = world.initiate(cast.member.id, swap(cast.asset(src), cast.asset(dst)))
    step_until(world, "rtgs.earmark", transactionId=tx.id)
    world.arm(tx.id, Outcome.REJECTED)
    world.run_all()
    done = world.transactions[tx.id]
    assert (done.lifecycle_status.value, done.parked, done.terminal, done.reason_code) == (
        "failed", False, True, "issuer_rejected")
    assert (done.chain.value, done.rtgs.value) == ("ReturnedToSender", "Cancelled")
    assert state_events(world, tx.id) == ["received", "in_flight", "failed"]
    assert not world.log.select("ledger.burn", transactionId=tx.id)
    assert not world.log.select("ledger.mint", transactionId=tx.id)
    assert holdings(cast) == before
    check()


def _second_mode_3_issuer(cast: Cast) -> Any:
    world = cast.world
    other = world.add_issuer("Treasury Pound", issuer_profile(3), ("GBPT",),
                             Decimal("10000000.00"))
    world.fund(cast.member, other.assets[0], Decimal("10000.00"))
    return other


def test_swap_mint_rejected_after_a_mode_3_burn_is_compensated(cast: Cast) -> None:
    """States rule 3 where single-phase legs on both sides leave no decision-first order:
    the Mode 3 burn completes, then the Mode 3 mint is REJECTED. The unwind is a
    compensating action, logged as such: the source issuer returns the sender's value
    (``/treasury/refunds``, reason ``mint_rejected``). Failed, parked false, one
    transaction.failed, every balance back where it was."""
    world = cast.world
    target = _second_mode_3_issuer(cast)
    before = holdings(cast)
    check = watch_invariants(world)
    tx = world.initiate(cast.member.id, swap(cast.asset(3), target.assets[0]))
    step_until(world, "saga.event", transactionId=tx.id, event="Burned")
    world.arm(tx.id, Outcome.REJECTED)
    world.run_all()
    done = world.transactions[tx.id]
    assert (done.lifecycle_status.value, done.parked, done.reason_code) == (
        "failed", False, "issuer_rejected")
    assert (done.chain.value, done.rtgs.value) == ("ReturnedToSender", "Cancelled")
    assert state_events(world, tx.id) == ["received", "in_flight", "failed"]
    [compensation] = world.log.select("saga.compensation", transactionId=tx.id)
    [refund] = world.log.select("issuer.refund", transactionId=tx.id)
    assert (refund["reason"], refund["status"]) == ("mint_rejected", "refunded")
    assert compensation["refundTxHash"] == refund["refundTxHash"]
    assert holdings(cast) == before  # burned then re-issued: wallet and supply as before
    check()


def test_operator_fix_during_the_mode_3_refund_waits_for_it(cast: Cast) -> None:
    """A fix at the very instant of parking: the refund finishes first, then the saga locks
    and transfers again before re-instructing; the money stays whole."""
    world = cast.world
    before = holdings(cast)
    check = watch_invariants(world)
    tx = world.initiate(cast.member.id, redeem(cast.asset(3)))
    world.arm(tx.id, Outcome.SILENCE)
    sent = step_until(world, "saga.instruction_sent", transactionId=tx.id)
    world.run_until(int(str(sent["deadlineMs"])))
    assert world.transactions[tx.id].parked
    world.resolve(tx.id)
    world.run_all()
    assert world.transactions[tx.id].lifecycle_status.value == "settled"
    [refund] = world.log.select("saga.refund", transactionId=tx.id)
    relock = world.log.select("ledger.lock", transactionId=tx.id)[1]
    assert refund.seq < relock.seq
    assert len(world.log.select("ledger.transfer", transactionId=tx.id)) == 3
    code = cast.asset(3).code
    assert holdings(cast)[("wallet", code)] == before[("wallet", code)] - AMOUNT
    check()


def test_resolve_requires_a_parked_transaction(cast: Cast) -> None:
    """Rule 2: only a parked transaction is for the operator to fix."""
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(2)))
    with pytest.raises(NotAllowed) as refused:
        world.resolve(tx.id)
    assert refused.value.problems[0].code == "not_parked"
    world.arm(tx.id, Outcome.REJECTED)
    world.run_all()
    with pytest.raises(NotAllowed):
        world.resolve(tx.id)  # failed but resolved (parked false): nothing to fix


# compensation -----------------------------------------------------------------------------
def _mint_rejected_after_the_burn(cast: Cast, source: int, target: int) -> Transaction:
    """A swap whose mint is rejected once the burn has completed: armed when the mint's
    decisive request goes out (Mode 2: its execute; Mode 3: its instruction)."""
    world = cast.world
    tx = world.initiate(cast.member.id, swap(cast.asset(source), cast.asset(target)))
    kind = "saga.execute_sent" if target == 2 else "saga.instruction_sent"
    step_until(world, kind, transactionId=tx.id, leg="mint")
    world.arm(tx.id, Outcome.REJECTED)
    return tx


@pytest.mark.parametrize(("source", "target"), [(2, 3), (3, 2)])
def test_a_mint_rejected_after_the_burn_is_compensated_by_the_source_issuer(
        source: int, target: int) -> None:
    """States rule 3 and the REJECTED row: the unwind gives the sender's value back even when
    the burn already happened: the source issuer re-issues the burned amount (a Mode 3 one
    through its refund endpoint, reason mint_rejected; a Mode 2 one, which need not have
    that endpoint, by a mint instruction executed at once). Failed, parked false, every
    balance as it was."""
    cast = example_world(0)
    world = cast.world
    before = holdings(cast)
    final_check = watch_invariants(world)
    tx = _mint_rejected_after_the_burn(cast, source, target)
    world.run_all()
    tx = world.transactions[tx.id]
    assert (tx.lifecycle_status.value, tx.parked, tx.reason_code) == (
        "failed", False, "issuer_rejected")
    assert (tx.chain.value, tx.rtgs.value) == ("ReturnedToSender", "Cancelled")
    assert state_events(world, tx.id) == ["received", "in_flight", "failed"]
    assert holdings(cast) == before
    final_check()
    [burn] = world.log.select("ledger.burn", transactionId=tx.id)
    [compensation] = world.log.select("saga.compensation", transactionId=tx.id)
    assert compensation["reason"] == "mint_rejected" and compensation.seq > burn.seq
    by_instruction = world.log.select("saga.instruction_sent", transactionId=tx.id,
                                      leg="compensation")
    if source == 2:
        [sent] = by_instruction
        assert sent["issuerId"] == cast.issuers[2].id
        assert sent["idempotencyKey"] == instruction_idempotency_key(tx.command_id,
                                                                     "compensation")
        [execute] = world.log.select("saga.execute_sent", transactionId=tx.id,
                                     leg="compensation")
        [mint] = world.log.select("ledger.mint", transactionId=tx.id,
                                  asset=cast.asset(2).code)
        assert compensation["txHash"] == mint["txHash"] and execute.seq < mint.seq
    else:
        assert not by_instruction
        [refund] = world.log.select("issuer.refund", transactionId=tx.id)
        assert (refund["reason"], refund["status"]) == ("mint_rejected", "refunded")


def test_a_compensation_that_does_not_complete_parks_unwind_failed() -> None:
    """Where the source issuer does not give the burned value back (its compensating mint
    FAILED), the value is not where it should be: failed, parked true, ``unwind_failed``,
    the earmark kept, for a person to settle (docs/semantics.md)."""
    cast = example_world(0)
    world = cast.world
    tx = _mint_rejected_after_the_burn(cast, 2, 3)
    step_until(world, "saga.instruction_sent", transactionId=tx.id, leg="compensation")
    world.issuers[cast.issuers[2].id].arm(tx.id, Outcome.FAILED)
    world.run_all()
    tx = world.transactions[tx.id]
    assert (tx.lifecycle_status.value, tx.parked, tx.terminal, tx.reason_code) == (
        "failed", True, True, "unwind_failed")
    assert state_events(world, tx.id) == ["received", "in_flight", "parked"]
    assert not world.log.select("saga.compensation", transactionId=tx.id)
    [failed] = world.log.select("saga.compensation_failed", transactionId=tx.id)
    assert failed["outcome"] == "failed"
    assert not world.log.select("rtgs.release", transactionId=tx.id)
