"""The saga: one SimPy process per transaction, per settlement mode and use case.

Public names: ``Saga``, ``LegOutcome``.

Steps (spec, full path): Received and Validated are done at initiation; after the intake
latency the transaction goes ``in-flight``; Lock locks the source asset on its ledger;
Earmarked holds the fiat at the RTGS adapter; Burning runs the legs (burn, then mint for a
swap) under the mode each leg captured at initiation; Settled settles the fiat leg once every
leg has produced a proof-backed event (Burned, Minted: an on-chain hash).

Per leg and mode:
- Mode 1: the service co-signs the burn or mint on chain itself (no instruction).
- Mode 2: instruct; send execute (the earmark is confirmed by then); await the outcome.
- Mode 3 burn: transfer the locked tokens to the issuer wallet; instruct; await the outcome.

Outcomes: COMPLETED → next leg; REJECTED → automatic unwind, ``failed`` (parked false);
FAILED → ``failed``, parked, nothing undone; no decisive answer before ``approvalSlaSeconds``
after the instruction was sent → parked at exactly that instant (a Mode 3 burn leg then asks
the issuer for a refund). Cancel and the operator fix enter from outside (``World``).
"""

from __future__ import annotations

from collections.abc import Generator
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import simpy
from attrs import frozen

from clearing_sim.domain.ids import (
    CommandId,
    TransactionId,
    instruction_idempotency_key,
    instruction_reference,
)
from clearing_sim.domain.instruction import InstructionStatus, NormalisedEvent
from clearing_sim.domain.lifecycle import Trigger
from clearing_sim.domain.profile import FeedbackChannel, FiatLeg, SettlementMode
from clearing_sim.domain.transaction import ChainState, FeeStatus, LegTerms, RtgsState, Transaction
from clearing_sim.sim.gateway import Gateway
from clearing_sim.sim.issuer import Snapshot
from clearing_sim.sim.ledger import LedgerRefused
from clearing_sim.sim.rtgs import RtgsRefused

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["LegOutcome", "Saga"]

Proc = Generator[simpy.Event, Any, Any]


class LegOutcome(StrEnum):
    DONE = "done"
    RELOCK_REFUSED = "relock_refused"  # Mode 3 after a refund: the member spent the tokens
    REJECTED = "rejected"
    FAILED = "failed"
    SILENCE = "silence"


@frozen
class _Sent:
    """An instruction the saga is waiting on."""

    gateway: Gateway
    instruction_id: str
    deadline_ms: int


class Saga:
    """Drives one transaction. ``process`` is the running SimPy process (None when idle)."""

    def __init__(self, world: World, transaction_id: TransactionId) -> None:
        self.world = world
        self.tx_id = transaction_id
        self.process: simpy.Process | None = None
        self.pending: dict[str, _Sent] = {}  # leg → instruction awaiting an answer
        self.done_legs: list[str] = []
        self.transferred = False  # Mode 3: the locked tokens sit in the issuer's wallet
        self.refunded = False  # Mode 3: the issuer refunded them to the member's wallet

    @property
    def tx(self) -> Transaction:
        return self.world.transactions[self.tx_id]

    def start(self) -> None:
        self.process = self._launch(self._run())

    def resume(self, command_id: CommandId) -> None:
        """After an operator fix: pick up the Burning step where it stopped."""
        self.process = self._launch(self._resume(self.process, command_id))

    def _launch(self, run: Proc) -> simpy.Process:
        if self.world.forget_terminal:
            run = self._forgetting(run)
        return self.world.env.process(run)

    def _forgetting(self, run: Proc) -> Proc:
        """Run the saga, then forget the transaction if it ended terminal (``forget_terminal``
        worlds; a cancel forgets it when the interrupted process ends)."""
        yield from run
        tx = self.world.transactions.get(self.tx_id)
        if tx is not None and tx.terminal:
            self.world.forget(self.tx_id)

    # bookkeeping --------------------------------------------------------------------------
    def _update(self, **changes: Any) -> Transaction:
        return self.world.transactions.update(self.tx_id, self.world.now_ms, **changes)

    def _apply(self, trigger: Trigger, **changes: Any) -> Transaction:
        return self.world.transactions.apply(self.tx_id, trigger, self.world.now_ms, **changes)

    def _step_done(self, **changes: Any) -> None:
        self._update(saga=self.tx.saga.complete_current(self.world.now_ms), **changes)

    def _note(self, event: NormalisedEvent, **fields: Any) -> None:
        self.world.log.append("saga.event", transactionId=self.tx_id, event=event.value,
                              **fields)

    # the path -----------------------------------------------------------------------------
    def _run(self) -> Proc:
        try:
            yield self.world.env.timeout(self.world.config.intake_ms)
            self._apply(Trigger.VALIDATED)
            if not (yield from self._lock()):
                return
            if not (yield from self._earmark()):
                return
            yield from self._burning(self.tx.command_id)
        except simpy.Interrupt:
            return  # cancelled: World.cancel has compensated and closed the transaction

    def _resume(self, previous: simpy.Process | None, command_id: CommandId) -> Proc:
        if previous is not None and previous.is_alive:
            yield previous  # a Mode 3 refund after parking finishes first
        yield from self._burning(command_id)

    def _lock(self) -> Proc:
        tx = self.tx
        ledger, account = self.world.source_wallet(tx)
        try:
            yield from ledger.lock(tx.id, account, tx.source.amount)
        except LedgerRefused:
            self._apply(Trigger.LOCK_REFUSED, reason_code="insufficient_funds",
                        saga=tx.saga.stopped(self.world.now_ms), fee_status=FeeStatus.WAIVED)
            return False
        self._step_done(chain=ChainState.LOCKED)
        return True

    def _earmark(self) -> Proc:
        tx = self.tx
        try:
            yield from self.world.rtgs.earmark(tx.id, tx.debtor.participant_id,
                                               tx.quote.debit_amount)
        except RtgsRefused:
            ledger, _ = self.world.source_wallet(tx)
            yield from ledger.return_to_sender(tx.id)
            self._apply(Trigger.EARMARK_REFUSED, reason_code="earmark_refused",
                        chain=ChainState.RETURNED_TO_SENDER, fee_status=FeeStatus.WAIVED,
                        saga=self.tx.saga.stopped(self.world.now_ms))
            return False
        self._step_done(rtgs=RtgsState.EARMARKED)
        return True

    def _burning(self, command_id: CommandId) -> Proc:
        for terms in self.tx.legs:
            if terms.leg in self.done_legs:
                continue
            outcome = yield from self._leg(terms, command_id)
            if outcome is not LegOutcome.DONE:
                yield from self._stop(terms, outcome)
                return
            self.done_legs.append(terms.leg)
            chain = ChainState.BURNED if terms.leg == "burn" else ChainState.MINTED
            self._update(chain=chain)
        self._step_done()
        yield from self._settle()

    def _settle(self) -> Proc:
        tx = self.tx
        settled_by = "issuer" if self.world.profile_of(tx.legs[0]).fiat_leg \
            is FiatLeg.ISSUER_SETTLES_RTGS else "operator"
        yield from self.world.rtgs.settle(tx.id, tx.creditor.participant_id,
                                          tx.quote.platform_fee_amount, settled_by)
        self._apply(Trigger.PROOF_COMPLETE, rtgs=RtgsState.SETTLED, fee_status=FeeStatus.COLLECTED,
                    saga=self.tx.saga.complete_current(self.world.now_ms))

    # one leg ------------------------------------------------------------------------------
    def _leg(self, terms: LegTerms, command_id: CommandId) -> Proc:
        if terms.mode is SettlementMode.MODE_1:
            yield from self._co_signed(terms)
            return LegOutcome.DONE
        gateway = self.world.issuers[terms.issuer_id]
        sent = self.pending.get(terms.leg)
        if sent is not None:  # resuming after an operator fix: read the old instruction first
            snap = yield from sent.gateway.get(sent.instruction_id)
            if snap.status is InstructionStatus.COMPLETED:
                return self._proof(terms, snap)
            if not gateway.expire(sent.instruction_id):  # already moving on chain: await it
                profile = self.world.profile_of(terms)
                again = _Sent(gateway, sent.instruction_id,
                              self.world.now_ms + profile.approval_sla_ms)
                self.pending[terms.leg] = again
                answer = yield from self._await(again, profile.feedback_channel)
                return self._proof(terms, answer) if isinstance(answer, Snapshot) else answer
        pre_burn = terms.leg == "burn" and terms.mode is SettlementMode.MODE_3
        if pre_burn and not (yield from self._pre_burn_transfer(terms, gateway)):
            return LegOutcome.RELOCK_REFUSED
        snap = yield from self._instruct(terms, gateway, command_id)
        return self._proof(terms, snap) if isinstance(snap, Snapshot) else snap

    def _co_signed(self, terms: LegTerms) -> Proc:
        """Mode 1: the operator co-signs the burn or mint on the issuer's account."""
        tx = self.tx
        if terms.leg == "burn":
            ledger, _ = self.world.source_wallet(tx)
            receipt = yield from ledger.burn_locked(tx.id)
            self._note(NormalisedEvent.BURNED, txHash=receipt.tx_hash)
        else:
            ledger, account = self.world.target_wallet(tx)
            receipt = yield from ledger.mint(tx.id, account, tx.target.amount)
            self._note(NormalisedEvent.MINTED, txHash=receipt.tx_hash)

    def _pre_burn_transfer(self, terms: LegTerms, gateway: Gateway) -> Proc:
        tx = self.tx
        if self.transferred:
            return True
        ledger, account = self.world.source_wallet(tx)
        if self.refunded:  # the tokens came back to the member: lock them again first
            try:
                yield from ledger.lock(tx.id, account, tx.source.amount)
            except LedgerRefused:
                return False
            self.refunded = False
        custody = self.world.profile_of(terms).custody_model
        treasury = gateway.treasury_for(tx.initiator_id, custody)
        yield from ledger.transfer_locked(tx.id, treasury)
        self.transferred = True
        self._update(chain=ChainState.TRANSFERRED_TO_ISSUER)
        return True

    def _instruct(self, terms: LegTerms, gateway: Gateway,
                  command_id: CommandId) -> Proc:
        tx, profile = self.tx, self.world.profile_of(terms)
        body = self._instruction_body(terms, gateway, command_id)
        sent_at = self.world.now_ms
        deadline = sent_at + profile.approval_sla_ms
        self.world.log.append("saga.instruction_sent", transactionId=tx.id, leg=terms.leg,
                              issuerId=terms.issuer_id, idempotencyKey=body["idempotencyKey"],
                              deadlineMs=deadline)
        snap = yield from gateway.post_instruction(terms.leg, body, terms.mode,
                                                   profile.feedback_channel)
        self.pending[terms.leg] = _Sent(gateway, snap.instruction_id, deadline)
        if terms.mode is SettlementMode.MODE_2:
            assert self.tx.rtgs is RtgsState.EARMARKED, "execute only after the earmark"
            yield from gateway.execute(snap.instruction_id)
        return (yield from self._await(self.pending[terms.leg], profile.feedback_channel))

    def _instruction_body(self, terms: LegTerms, gateway: Gateway,
                          command_id: CommandId) -> dict[str, str]:
        tx = self.tx
        body = {"idempotencyKey": instruction_idempotency_key(command_id, terms.leg),
                "reference": instruction_reference(tx.id)}
        if terms.leg == "burn":
            _, wallet = self.world.source_wallet(tx)
            if terms.mode is SettlementMode.MODE_3:
                wallet = gateway.treasury_for(tx.initiator_id,
                                              self.world.profile_of(terms).custody_model)
            body.update(sourceWalletId=wallet, amount=tx.source.amount.wire_amount(),
                        assetCode=tx.source.amount.asset.code)
        else:
            _, source = self.world.source_wallet(tx)
            _, target = self.world.target_wallet(tx)
            body.update(sourceWalletId=source, targetWalletId=target,
                        amount=tx.target.amount.wire_amount(),
                        assetCode=tx.target.amount.asset.code)
        return body

    def _await(self, sent: _Sent, channels: tuple[FeedbackChannel, ...]) -> Proc:
        """Wait for a decisive answer, learned by prompt or poll, strictly before the deadline.

        The deadline is one timer for the whole wait; a status read still in progress when
        it fires is abandoned, so the transaction parks at exactly the deadline."""
        env, inbox = self.world.env, self.world.issuer_inbox
        remaining = sent.deadline_ms - self.world.now_ms
        if remaining <= 0:
            return LegOutcome.SILENCE
        deadline = env.timeout(remaining)
        while True:
            waits: list[simpy.Event] = [deadline]
            if FeedbackChannel.SIGNED_WEBHOOK in channels:
                waits.append(inbox.prompt(sent.instruction_id))
            if FeedbackChannel.POLLABLE_RESOURCE in channels:
                poll_ms = min(self.world.config.poll_interval_ms, remaining)
                waits.append(env.timeout(poll_ms))
            yield env.any_of(waits)
            if self.world.now_ms >= sent.deadline_ms:
                return LegOutcome.SILENCE  # the deadline wins a tie
            inbox.consume(sent.instruction_id)
            read = env.process(sent.gateway.get(sent.instruction_id))
            yield read | deadline
            if not read.triggered or self.world.now_ms >= sent.deadline_ms:
                return LegOutcome.SILENCE
            snap = read.value
            assert isinstance(snap, Snapshot)
            remaining = sent.deadline_ms - self.world.now_ms
            if snap.status is InstructionStatus.COMPLETED:
                return snap
            if snap.status is InstructionStatus.REJECTED:
                return LegOutcome.REJECTED
            if snap.status is InstructionStatus.FAILED:
                return LegOutcome.FAILED

    def _proof(self, terms: LegTerms, snap: Snapshot) -> LegOutcome:
        """COMPLETED counts only with its on-chain hash: that is the proof-backed event."""
        assert snap.tx_hash is not None and snap.ledger_sequence is not None
        event = NormalisedEvent.BURNED if terms.leg == "burn" else NormalisedEvent.MINTED
        self._note(event, txHash=snap.tx_hash, ledgerSequence=snap.ledger_sequence,
                   instructionId=snap.instruction_id)
        del self.pending[terms.leg]
        return LegOutcome.DONE

    # stopping -----------------------------------------------------------------------------
    def _stop(self, terms: LegTerms, outcome: LegOutcome) -> Proc:
        now = self.world.now_ms
        if outcome is LegOutcome.RELOCK_REFUSED:  # the tokens are the member's: free the fiat
            yield from self.world.rtgs.release(self.tx_id)
            self._apply(Trigger.LOCK_REFUSED, reason_code="insufficient_funds",
                        chain=ChainState.RETURNED_TO_SENDER, rtgs=RtgsState.CANCELLED,
                        fee_status=FeeStatus.WAIVED,
                        saga=self.tx.saga.stopped(self.world.now_ms))
            return
        if outcome is LegOutcome.SILENCE:
            self._note(NormalisedEvent.PARKED_ON_SILENCE, leg=terms.leg)
            self._apply(Trigger.SILENCE, reason_code="approval_sla_exceeded")
            if terms.leg == "burn" and terms.mode is SettlementMode.MODE_3:
                yield from self._refund(terms, "instruction_expired")
            return
        if outcome is LegOutcome.FAILED:
            self._note(NormalisedEvent.INSTRUCTION_FAILED, leg=terms.leg)
            self._apply(Trigger.ISSUER_FAILED, reason_code="issuer_failed")
            return
        self._note(NormalisedEvent.INSTRUCTION_REJECTED, leg=terms.leg)
        self.pending.pop(terms.leg, None)
        if "burn" in self.done_legs:  # the source is gone: no safe automatic unwind
            self._apply(Trigger.MINT_REJECTED_AFTER_BURN, reason_code="mint_rejected_after_burn")
            return
        yield from self._unwind(terms)
        self._apply(Trigger.ISSUER_REJECTED, reason_code="issuer_rejected",
                    fee_status=FeeStatus.WAIVED, saga=self.tx.saga.stopped(now))

    def _unwind(self, terms: LegTerms) -> Proc:
        """REJECTED: the asset goes back to the sender and the earmark is cancelled."""
        if terms.mode is SettlementMode.MODE_3:
            yield from self._refund(terms, "instruction_rejected")
        else:
            ledger, _ = self.world.source_wallet(self.tx)
            yield from ledger.return_to_sender(self.tx_id)
        self._update(chain=ChainState.RETURNED_TO_SENDER)
        yield from self.world.rtgs.release(self.tx_id)
        self._update(rtgs=RtgsState.CANCELLED)

    def _refund(self, terms: LegTerms, reason: str) -> Proc:
        tx = self.tx
        gateway = self.world.issuers[terms.issuer_id]
        _, member_wallet = self.world.source_wallet(tx)
        treasury = gateway.treasury_for(tx.initiator_id, self.world.profile_of(terms).custody_model)
        result = yield from gateway.refund(tx.id, reason, member_wallet, treasury,
                                           tx.source.amount)
        if result.status == "refunded":
            self.transferred, self.refunded = False, True
        self.world.log.append("saga.refund", transactionId=tx.id, reason=reason,
                              refundTxHash=result.refund_tx_hash)
