"""A stateful model of the world: random commands, every invariant checked after every step.

``WorldMachine`` (Hypothesis ``RuleBasedStateMachine``, STYLE.md "Compare against a model")
drives ``example_world``'s cast through the world's commands — initiate a redeem or a swap
(amounts up to more than the wallet holds), bad initiations, cancel, arm an outcome, resolve
a parked transaction, advance the clock by 0 ms to 2 h, run to the end — and holds the engine
against a model after each step:

- tokens conserved: for every issued asset on every ledger, supply = Σ balances + Σ locked;
- fiat conserved: the RTGS total (balances + earmarks, fees in ``operator:fees``) never moves;
- the log replays to the state (``_replay.LogReplay``): ledgers, RTGS, public states;
- every ``transaction.state`` event is a row of the transition table, consecutive pairs
  chained, and the ``cancel`` / ``operator_fix`` triggers appear exactly as often as the
  machine cancelled / resolved;
- ``terminal`` ⇔ status in settled, cancelled, failed; ``actions.cancel`` agrees with our
  model of it (docs/semantics.md) and is never allowed on a terminal transaction;
- a terminal transaction never changes unless an operator resolved it;
- earmarks are exactly those of transactions whose rtgs is Earmarked; a settled, cancelled
  or unwound transaction holds no lock and no earmark.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import event, note, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from clearing_sim.domain.errors import InvalidRequest, NotAllowed
from clearing_sim.domain.initiation import AssetRef, InitiateRequest, LegRequest
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.lifecycle import LifecycleStatus, Trigger
from clearing_sim.domain.profile import Ledger, SettlementMode
from clearing_sim.domain.saga import SagaPath, StepName
from clearing_sim.domain.transaction import (
    ChainState,
    FeeStatus,
    RtgsState,
    Transaction,
    UseCase,
    cancel_action,
)
from clearing_sim.sim.examples import example_world, redeem, swap

from ._replay import LogReplay, expected_cancel_allowed, open_instruction_legs
from ._workload import AMOUNTS, MODES, OUTCOMES

_S = LifecycleStatus
_RESOLVED_ENDS = (_S.SETTLED, _S.CANCELLED)
_REFUSALS = {_S.SETTLED: "already_settled", _S.CANCELLED: "already_cancelled",
             _S.FAILED: "transaction_failed"}
HOUR_MS = 3_600_000
#: Fine steps hit the intake (200 ms), lock and earmark windows; coarse ones cross the SLA.
DELAYS = st.one_of(st.sampled_from([0, 1, 199, 200, 900_000]), st.integers(0, 10_000),
                   st.integers(0, 2 * HOUR_MS))


#: Requests ``initiate`` must refuse (built against the cast in ``initiate_invalid``).
BAD_REQUESTS = st.sampled_from(["amount_mismatch", "unknown_asset", "fiat_source",
                                "redeem_to_coin", "same_asset", "zero", "negative", "exponent",
                                "too_precise", "blank_reference", "long_reference"])


def _event(label: str) -> None:
    """Count a label in ``--hypothesis-show-statistics`` (a no-op outside a Hypothesis run)."""
    if currently_in_test_context():
        event(label)


class WorldMachine(RuleBasedStateMachine):
    """One world, one member, three issuers (one per mode); see the module docstring."""

    transactions = Bundle("transactions")
    approval_sla_s = 900
    #: When true, the machine resolves a Mode 3 transaction parked on silence only when the
    #: wallet can re-lock its refunded tokens (a narrower search). Off: the engine fails such
    #: a transaction cleanly (``insufficient_funds``), and the machine explores that too.
    guard_relock = False

    @initialize(seed=st.integers(0, 2**32 - 1))
    def build(self, seed: int) -> None:
        self.cast = example_world(seed, approval_sla_s=self.approval_sla_s)
        self.world = self.cast.world
        self.member = self.cast.member
        self.replay = LogReplay()
        self.replay.feed(self.world.log)
        self.fiat_total = self.world.rtgs.total()
        self.frozen: dict[str, Transaction] = {}
        self.cancels: Counter[str] = Counter()
        self.resolves: Counter[str] = Counter()
        self.references = itertools.count()

    def _reference(self, prefix: str) -> str:
        return f"{prefix}-{next(self.references):04d}"

    # initiation ---------------------------------------------------------------------------
    @rule(target=transactions, mode=st.sampled_from(MODES), amount=st.sampled_from(AMOUNTS))
    def initiate_redeem(self, mode: int, amount: str) -> str:
        request = redeem(self.cast.asset(mode), amount, self._reference("R"))
        return self._initiate(request)

    @rule(target=transactions, modes=st.permutations(MODES), use_case=st.sampled_from(UseCase),
          amount=st.sampled_from(AMOUNTS), outcome=st.sampled_from(OUTCOMES))
    def initiate_armed(self, modes: list[int], use_case: UseCase, amount: str,
                       outcome: Outcome) -> str:
        """The conformance pattern: initiate, then arm at once. A redeem uses an instructed
        mode; a swap out of Mode 1 arms its mint leg. (The next rule is often a long advance,
        so parked transactions and their fixes get explored.)"""
        if use_case is UseCase.SWAP:
            request = swap(self.cast.asset(modes[0]), self.cast.asset(modes[1]), amount,
                           self._reference("AS"))
        else:
            mode = next(m for m in modes if m != 1)
            request = redeem(self.cast.asset(mode), amount, self._reference("AR"))
        tx_id = self._initiate(request)
        self.arm(tx_id, outcome)
        return tx_id

    @rule(target=transactions, modes=st.permutations(MODES), amount=st.sampled_from(AMOUNTS))
    def initiate_swap(self, modes: list[int], amount: str) -> str:
        source, target = self.cast.asset(modes[0]), self.cast.asset(modes[1])
        return self._initiate(swap(source, target, amount, self._reference("S")))

    def _initiate(self, request: InitiateRequest) -> str:
        tx = self.world.initiate(self.member.id, request)
        assert tx.lifecycle_status is _S.RECEIVED and not tx.parked and not tx.terminal
        assert tx.saga.current.name is StepName.LOCK and tx.fee_status is FeeStatus.PENDING
        assert tx.quote.debit_amount == tx.source.amount.amount
        assert tx.quote.receive_amount + tx.quote.platform_fee_amount == tx.quote.debit_amount
        return tx.id

    @rule(kind=BAD_REQUESTS, mode=st.sampled_from(MODES))
    def initiate_invalid(self, kind: str, mode: int) -> None:
        """Bad input is refused with a structured error and changes nothing (DESIGN.md)."""
        asset = self.cast.asset(mode)
        other = self.cast.asset(mode % 3 + 1)
        ref = AssetRef(asset.code, asset.issuer)
        fiat = AssetRef("GBP")

        def leg(amount: str, to: AssetRef = fiat) -> LegRequest:
            return LegRequest(amount, to)

        requests = {
            "amount_mismatch": InitiateRequest(UseCase.REDEEM, "BAD", leg("100.00", ref),
                                               leg("99.00")),
            "unknown_asset": InitiateRequest(UseCase.REDEEM, "BAD",
                                             leg("1.00", AssetRef("NOPE", asset.issuer)),
                                             leg("1.00")),
            "fiat_source": InitiateRequest(UseCase.REDEEM, "BAD", leg("1.00"), leg("1.00")),
            "redeem_to_coin": InitiateRequest(UseCase.REDEEM, "BAD", leg("1.00", ref),
                                              leg("1.00", AssetRef(other.code, other.issuer))),
            "same_asset": InitiateRequest(UseCase.SWAP, "BAD", leg("1.00", ref),
                                          leg("1.00", ref)),
            "zero": redeem(asset, "0.00", "BAD"),
            "negative": redeem(asset, "-1.00", "BAD"),
            "exponent": redeem(asset, "1E+2", "BAD"),
            "too_precise": redeem(asset, "1.001", "BAD"),
            "blank_reference": redeem(asset, "1.00", "   "),
            "long_reference": redeem(asset, "1.00", "R" * 141),
        }
        before, count = len(self.world.log), len(self.world.transactions)
        with pytest.raises(InvalidRequest) as refused:
            self.world.initiate(self.member.id, requests[kind])
        assert refused.value.problems and all(p.code for p in refused.value.problems)
        assert len(self.world.log) == before and len(self.world.transactions) == count

    # commands on a transaction ------------------------------------------------------------
    def _open(self) -> bool:
        return any(not tx.terminal for tx in self.world.transactions)

    @precondition(_open)
    @rule(tx_id=transactions)
    def cancel(self, tx_id: str) -> None:
        tx = self.world.transactions[tx_id]
        action = cancel_action(tx)
        assert action.allowed == expected_cancel_allowed(tx), (tx.state, tx.saga.current)
        if not action.allowed:
            expected = _REFUSALS.get(tx.lifecycle_status, "settlement_in_progress")
            assert action.reason == expected
            _event(f"cancel refused: {action.reason}")
            self._refused(tx, lambda: self.world.cancel(tx_id), action.reason)
            return
        _event(f"cancel at step {tx.saga.current.name.value}")
        after = self.world.cancel(tx_id)
        self.cancels[tx_id] += 1
        assert after == self.world.transactions[tx_id]
        assert after.lifecycle_status is _S.CANCELLED and after.terminal and not after.parked
        assert after.saga.path is SagaPath.CANCELLED and after.saga.current.name is \
            StepName.CANCELLED
        assert after.reason_code == "operator_cancelled"
        assert after.fee_status is FeeStatus.WAIVED
        # The spec's cancel values whatever step was interrupted (a lock or earmark still
        # being written is withdrawn: docs/semantics.md, "Cancel").
        assert (after.chain, after.rtgs) == (ChainState.RETURNED_TO_SENDER, RtgsState.CANCELLED)
        assert tx_id not in self.world.rtgs.earmarks
        assert all(tx_id not in chain.locks for chain in self.world.ledgers.values())

    @rule(tx_id=transactions, outcome=st.sampled_from(OUTCOMES))
    def arm(self, tx_id: str, outcome: Outcome) -> None:
        self.replay.feed(self.world.log)
        tx = self.world.transactions[tx_id]
        legs = [] if tx.terminal else open_instruction_legs(tx, self.replay.tx(tx_id), outcome)
        if not legs:
            _event("arm refused")
            self._refused(tx, lambda: self.world.arm(tx_id, outcome), None)
            return
        _event(f"arm {outcome.value} on {legs[0].leg} leg (mode {legs[0].mode.number})")
        self.world.arm(tx_id, outcome)
        armed = self.world.log.select("issuer.armed", transactionId=tx_id)[-1]
        assert armed["issuerId"] == legs[0].issuer_id and armed["outcome"] == outcome.value

    @precondition(lambda self: any(tx.parked for tx in self.world.transactions))
    @rule(tx_id=transactions)
    def resolve(self, tx_id: str) -> None:
        tx = self.world.transactions[tx_id]
        if not tx.parked:
            self._refused(tx, lambda: self.world.resolve(tx_id), "not_parked")
            return
        _event(f"resolve {tx.reason_code}")
        relock = self._relocks(tx)
        if relock and self.guard_relock and not self._wallet_covers(tx):
            _event("resolve skipped by the re-lock guard")
            if currently_in_test_context():
                note(f"skipped resolve of {tx_id}: re-lock guard (wallet cannot re-lock it)")
            return
        after = self.world.resolve(tx_id)
        self.resolves[tx_id] += 1
        self.frozen.pop(tx_id, None)
        assert after.lifecycle_status is _S.IN_FLIGHT and not after.parked
        assert not after.terminal and after.reason_code is None
        assert not cancel_action(after).allowed  # Burning: past the irrevocable signal
        if relock and self.guard_relock:
            self._until_relocked(tx_id)

    def _relocks(self, tx: Transaction) -> bool:
        """A Mode 3 burn parked on silence: its tokens were (or are being) refunded to the
        wallet, so the resumed saga locks them again."""
        burn = tx.legs[0]
        return (burn.mode is SettlementMode.MODE_3 and tx.reason_code == "approval_sla_exceeded"
                and "burn" not in self.replay.tx(tx.id).proofs)

    def _wallet_covers(self, tx: Transaction) -> bool:
        """The member's wallet covers this re-lock and every lock still to come from it."""
        asset = tx.source.amount.asset
        chain, wallet = self.world.source_wallet(tx)
        pending = sum((o.source.amount.amount for o in self.world.transactions
                       if o.source.amount.asset == asset and not o.terminal
                       and o.chain is ChainState.NONE), Decimal(0))
        return chain.balance(wallet, asset).amount >= tx.source.amount.amount + pending

    def _until_relocked(self, tx_id: str) -> None:
        """Advance until the resumed saga has re-locked (or the transaction moved on), so no
        lock started later can take the tokens first (re-lock guard)."""
        start = len(self.world.log)
        for _ in range(120):
            if any(r.kind in ("ledger.lock", "ledger.refused", "transaction.state")
                   and r.get("transactionId") == tx_id
                   for r in itertools.islice(self.world.log, start, None)):
                return
            self.world.advance(500)

    def _refused(self, tx: Transaction, command: Callable[[], object],
                 code: str | None) -> None:
        """A refused command raises NotAllowed and changes nothing."""
        before = len(self.world.log)
        with pytest.raises(NotAllowed) as refused:
            command()
        if code is not None:
            assert refused.value.problems[0].code == code
        assert self.world.transactions[tx.id] == tx and len(self.world.log) == before

    # time ---------------------------------------------------------------------------------
    @rule(delay_ms=DELAYS)
    def advance(self, delay_ms: int) -> None:
        start = self.world.now_ms
        self.world.advance(delay_ms)
        assert self.world.now_ms == start + delay_ms

    @rule()
    def advance_to_next_event(self) -> None:
        """Walk the schedule one instant at a time, so commands land in every short window
        (a lock done and its earmark pending, a refund under way)."""
        due = self.world.env.peek()
        if due != float("inf"):
            self.world.run_until(int(due))

    @rule()
    def run_to_the_end(self) -> None:
        """With nothing more from outside, every transaction reaches a terminal state."""
        self.world.run_all()
        stuck = [(tx.id, tx.state) for tx in self.world.transactions if not tx.terminal]
        assert stuck == []
        for tx in self.world.transactions:
            _event(f"end: {tx.lifecycle_status.value}{' parked' if tx.parked else ''} "
                  f"{tx.reason_code or ''}".strip())

    # invariants ---------------------------------------------------------------------------
    @invariant()
    def tokens_conserved(self) -> None:
        for ledger in Ledger:
            chain = self.world.ledgers[ledger]
            assert chain.conserved(), f"{ledger.value}: supply ≠ Σ balances + Σ locked"
            assert all(v >= 0 for held in chain.balances.values() for v in held.values())

    @invariant()
    def fiat_conserved(self) -> None:
        rtgs = self.world.rtgs
        assert rtgs.total() == self.fiat_total
        assert all(v >= 0 for v in rtgs.balances.values())
        settled = [tx for tx in self.world.transactions if tx.rtgs is RtgsState.SETTLED]
        assert rtgs.balances["operator:fees"] == sum(
            (tx.quote.platform_fee_amount for tx in settled), Decimal(0))

    @invariant()
    def log_replays_to_state(self) -> None:
        self.replay.feed(self.world.log)
        assert self.replay.violations == []
        assert self.replay.mismatches(self.world) == []
        for tx in self.world.transactions:
            triggers = self.replay.tx(tx.id).triggers
            assert triggers[Trigger.CANCEL.value] == self.cancels[tx.id]
            assert triggers[Trigger.OPERATOR_FIX.value] == self.resolves[tx.id]
            assert triggers[Trigger.INITIATED.value] == 1

    @invariant()
    def derived_fields_agree(self) -> None:
        for tx in self.world.transactions:
            assert tx.terminal == (tx.lifecycle_status in (_S.SETTLED, _S.CANCELLED, _S.FAILED))
            assert not tx.parked or tx.lifecycle_status is _S.FAILED
            action = cancel_action(tx)
            assert action.allowed == expected_cancel_allowed(tx)
            assert not (action.allowed and tx.terminal)
            assert action.allowed or action.reason
            if tx.lifecycle_status is _S.SETTLED:
                assert tx.rtgs is RtgsState.SETTLED and tx.fee_status is FeeStatus.COLLECTED
            if tx.lifecycle_status is _S.CANCELLED or (tx.lifecycle_status is _S.FAILED
                                                       and not tx.parked):
                assert tx.fee_status is FeeStatus.WAIVED

    @invariant()
    def terminal_transactions_frozen(self) -> None:
        for tx in self.world.transactions:
            if not tx.terminal:
                assert tx.id not in self.frozen
                continue
            first = self.frozen.setdefault(tx.id, tx)
            assert tx == first, f"terminal transaction {tx.id} changed without an operator"

    @invariant()
    def earmarks_and_locks_belong_to_open_work(self) -> None:
        earmarked = {tx.id for tx in self.world.transactions if tx.rtgs is RtgsState.EARMARKED}
        assert set(self.world.rtgs.earmarks) == earmarked
        for tx in self.world.transactions:
            mark = self.world.rtgs.earmarks.get(tx.id)
            if mark is not None:
                assert (mark.payer, mark.amount) == (tx.debtor.participant_id,
                                                     tx.quote.debit_amount)
            if tx.lifecycle_status in _RESOLVED_ENDS or (tx.lifecycle_status is _S.FAILED
                                                         and not tx.parked):
                assert all(tx.id not in chain.locks for chain in self.world.ledgers.values())


WorldMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=30,
                                          deadline=None)
TestWorldMachine = WorldMachine.TestCase


# --- regression: resolving a Mode 3 transaction whose refunded tokens are gone -----------
def test_resolve_after_refund_cannot_relock() -> None:
    """After a Mode 3 silence park the tokens are refunded to the member; if the member spends
    them before the operator fix, the resumed saga cannot re-lock them: the earmark is
    released and the transaction fails cleanly (insufficient_funds, parked false). It used
    to raise LedgerRefused out of the SimPy process and stop the run."""
    machine = WorldMachine()
    machine.guard_relock = False
    machine.build(seed=0)
    parked = machine.initiate_redeem(mode=3, amount="100.00")
    machine.arm(parked, Outcome.SILENCE)
    machine.advance(2 * HOUR_MS)  # parks at 900 s; the refund lands 2 s later
    assert machine.world.transactions[parked].parked
    machine.initiate_redeem(mode=3, amount="10000.00")  # spends the refunded tokens
    machine.advance(60_000)
    machine.resolve(parked)
    machine.advance(60_000)
    machine.run_to_the_end()
    tx = machine.world.transactions[parked]
    assert (tx.lifecycle_status, tx.parked, tx.reason_code) == (
        _S.FAILED, False, "insufficient_funds")
    for check in (machine.tokens_conserved, machine.fiat_conserved,
                  machine.log_replays_to_state, machine.derived_fields_agree):
        check()


def test_machine_runs_without_the_guard_when_nothing_relocks() -> None:
    """The guard skips nothing on a path that does not re-lock (a sanity check of the rig)."""
    machine = WorldMachine()
    machine.build(seed=1)
    tx = machine.initiate_redeem(mode=2, amount="100.00")
    machine.arm(tx, Outcome.FAILED)
    machine.run_to_the_end()
    assert machine.world.transactions[tx].parked
    machine.resolve(tx)
    machine.run_to_the_end()
    assert machine.world.transactions[tx].lifecycle_status is _S.SETTLED
    machine.log_replays_to_state()
    machine.terminal_transactions_frozen()


@pytest.mark.slow
def test_world_machine_deep() -> None:
    """The same machine, longer and more often (``pytest -m slow``)."""
    run_state_machine_as_test(WorldMachine, settings=settings(
        max_examples=400, stateful_step_count=50, deadline=None))
