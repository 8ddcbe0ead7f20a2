"""The saga: one SimPy process per transaction, per settlement mode and use case.

Public names: ``Saga``, ``LegOutcome``, ``Phase``.

Steps (spec, full path): Received and Validated are done at initiation; after the intake
latency the transaction goes ``in-flight``; Lock locks the source asset on its ledger;
Earmarked holds the fiat at the RTGS adapter; Burning runs the legs (burn, and mint for a
swap) under the mode each leg captured at initiation; Settled settles the fiat leg once every
leg has produced a proof-backed event (Burned, Minted: an on-chain hash).

Every issuer's decision comes before anything irrevocable wherever the modes allow
(States rule 3, docs/semantics.md "The swap saga"). The Burning step runs its legs in three
phases:

1. prepare: each Mode 2 leg is instructed and awaited until its issuer APPROVED it (Mode 2
   issuers hold there until the execute call); nothing has moved yet.
2. decide-and-move: each Mode 3 leg (single-phase: the instruction is the decision and the
   move) runs, burn first; a Mode 3 burn first transfers the locked tokens to the issuer.
3. commit: each Mode 2 leg is executed and awaited until COMPLETED, and each Mode 1 leg is
   co-signed on chain by the service, burn first. No issuer can reject any more.

Outcomes: COMPLETED (APPROVED in the prepare phase) → next; REJECTED → the automatic unwind
(``failed``, parked false): instructions approved but never executed are closed at their
issuers, the source asset returns to the sender (lock returned, Mode 3 refund, or, when the
burn already happened, the compensating return by the source issuer), the earmark is
released; FAILED → parked, nothing undone; no decisive answer within ``approvalSlaSeconds`` of
the request that asked for it (the instruction; in Mode 2 also the execute) → parked at
exactly that instant (a Mode 3 burn leg then asks the issuer for a refund). Cancel and the
operator fix enter from outside (``World``).
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
from clearing_sim.domain.profile import FeedbackChannel, FiatLeg, IssuerProfile, SettlementMode
from clearing_sim.domain.transaction import ChainState, FeeStatus, LegTerms, RtgsState, Transaction
from clearing_sim.sim.gateway import Gateway
from clearing_sim.sim.issuer import COMPENSATION_REASON, Snapshot
from clearing_sim.sim.ledger import ChainLedger, LedgerRefused
from clearing_sim.sim.rtgs import RtgsRefused
from clearing_sim.sim.timers import first_of

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["LegOutcome", "Phase", "Saga"]

Proc = Generator[simpy.Event, Any, Any]
_S = InstructionStatus
#: What ends a wait in each kind of wait: the decision (prepare) or the move (complete).
_APPROVED = (_S.APPROVED, _S.EXECUTING, _S.COMPLETED)
_COMPLETED = (_S.COMPLETED,)


class LegOutcome(StrEnum):
    DONE = "done"
    RELOCK_REFUSED = "relock_refused"  # Mode 3 after a refund: the member spent the tokens
    REJECTED = "rejected"
    FAILED = "failed"
    SILENCE = "silence"


class Phase(StrEnum):
    PREPARE = "prepare"  # Mode 2: instruct, await APPROVED
    SINGLE = "single"  # Mode 3: (transfer,) instruct, await COMPLETED
    COMMIT = "commit"  # Mode 2: execute, await COMPLETED; Mode 1: co-sign


@frozen
class _Sent:
    """An instruction the saga is waiting on, and until when."""

    gateway: Gateway
    instruction_id: str
    deadline_ms: int
    phase: Phase


#: The members read at every leg and every wake, bound once: on Python 3.11 reading
#: ``Enum.MEMBER`` goes through ``EnumType.__getattr__``'s slow path (~750 instructions).
_PREPARE, _SINGLE, _COMMIT = Phase.PREPARE, Phase.SINGLE, Phase.COMMIT
_MODE_1, _MODE_2, _MODE_3 = SettlementMode.MODE_1, SettlementMode.MODE_2, SettlementMode.MODE_3
_DONE = LegOutcome.DONE
_REJECTED, _FAILED = _S.REJECTED, _S.FAILED
_WEBHOOK = FeedbackChannel.SIGNED_WEBHOOK
_POLL = FeedbackChannel.POLLABLE_RESOURCE


def plan(legs: tuple[LegTerms, ...]) -> list[tuple[Phase, LegTerms]]:
    """The Burning step's order: every decision before anything irrevocable (legs are burn
    first, so within a phase the burn goes first)."""
    return ([(_PREPARE, t) for t in legs if t.mode is _MODE_2]
            + [(_SINGLE, t) for t in legs if t.mode is _MODE_3]
            + [(_COMMIT, t) for t in legs if t.mode is not _MODE_3])


class Saga:
    """Drives one transaction. ``process`` is the running SimPy process (None when idle)."""

    def __init__(self, world: World, transaction_id: TransactionId) -> None:
        self.world = world
        self.tx_id = transaction_id
        self.process: simpy.Process | None = None
        self.pending: dict[str, _Sent] = {}  # leg → instruction awaiting an answer
        self.approved: dict[str, str] = {}  # leg → Mode 2 instruction approved, not executed
        self.done_legs: list[str] = []
        self.transferred = False  # Mode 3: the locked tokens sit in the issuer's wallet
        self.refunded = False  # Mode 3: the issuer refunded them to the member's wallet
        self.waiting_on: str | None = None  # the ledger or RTGS write in progress, if any
        self._source: tuple[ChainLedger, str] | None = None
        self._book = world.transactions.by_id

    @property
    def tx(self) -> Transaction:
        return self._book[self.tx_id]

    def start(self) -> None:
        self.process = self.world.env.process(self._run())

    def resume(self, command_id: CommandId) -> None:
        """After an operator fix: pick up the Burning step where it stopped."""
        self.process = self.world.env.process(self._resume(self.process, command_id))

    def step_in_progress(self) -> str | None:
        """``"lock"`` or ``"earmark"`` while that write waits for its finality (a cancel
        then withdraws it), else None."""
        return self.waiting_on

    def next_decision(self) -> LegTerms | None:
        """The leg whose issuer decides next (an armed ``rejected`` applies to it): the
        first instructed leg, in the saga's order, whose issuer has not decided yet."""
        for phase, terms in plan(self.tx.legs):
            if phase is not _COMMIT and terms.leg not in self.done_legs \
                    and not self._prepared(terms.leg):
                return terms
        return None

    def next_instructed(self) -> LegTerms | None:
        """The instructed leg whose issuer sends the next instruction event (an armed
        ``failed`` or ``silence`` applies to it): a Mode 2 leg its issuer approved waits for
        the commit phase, after the Mode 3 legs."""
        for phase, terms in plan(self.tx.legs):
            if not terms.mode.has_instructions or terms.leg in self.done_legs:
                continue
            if phase is _PREPARE and self._prepared(terms.leg):
                continue
            return terms
        return None

    def _prepared(self, leg: str) -> bool:
        """The leg's issuer has approved its instruction, though the saga may not know yet."""
        if leg in self.approved:
            return True
        sent = self.pending.get(leg)
        if sent is None:
            return False
        ins = sent.gateway.instructions.get(sent.instruction_id)
        return ins is not None and not ins.expired and ins.status in _APPROVED

    def _forget_if_terminal(self) -> None:
        """``forget_terminal`` worlds: once the process ends with the transaction terminal,
        forget it (a cancel forgets it when the interrupted process ends)."""
        tx = self.world.transactions.get(self.tx_id)
        if tx is not None and tx.terminal:
            self.world.forget(self.tx_id)

    # bookkeeping --------------------------------------------------------------------------
    def _update(self, **changes: Any) -> Transaction:
        return self.world.transactions.update(self.tx_id, self.world.now_ms, **changes)

    def _apply(self, trigger: Trigger, **changes: Any) -> Transaction:
        return self.world.transactions.apply(self.tx_id, trigger, self.world.now_ms, **changes)

    def _step_done(self, **changes: Any) -> None:
        self.world.transactions.complete_step(self.tx_id, self.world.now_ms, **changes)

    def _source_wallet(self) -> tuple[ChainLedger, str]:
        """The sender's ledger and wallet (fixed for the transaction: its first leg's captured
        profile and the initiator's wallet on that ledger, opened by the first ask)."""
        if self._source is None:
            self._source = self.world.source_wallet(self.tx)
        return self._source

    def _note(self, event: NormalisedEvent, **fields: Any) -> None:
        self.world.log.append("saga.event", transactionId=self.tx_id, event=event.value,
                              **fields)

    # the path -----------------------------------------------------------------------------
    def _run(self) -> Proc:
        try:
            yield self.world.env.timeout(self.world.config.intake_ms)
            self._apply(Trigger.VALIDATED)
            if (yield from self._lock()) and (yield from self._earmark()):
                yield from self._burning(self.tx.command_id)
        except simpy.Interrupt:
            pass  # cancelled: World.cancel has compensated and closed the transaction
        if self.world.forget_terminal:
            self._forget_if_terminal()

    def _resume(self, previous: simpy.Process | None, command_id: CommandId) -> Proc:
        if previous is not None and previous.is_alive:
            yield previous  # a Mode 3 refund after parking finishes first
        yield from self._burning(command_id)
        if self.world.forget_terminal:
            self._forget_if_terminal()

    def _lock(self) -> Proc:
        tx = self.tx
        ledger, account = self._source_wallet()
        self.waiting_on = "lock"
        try:
            yield from ledger.lock(tx.id, account, tx.source.amount)
        except LedgerRefused:
            self._apply(Trigger.LOCK_REFUSED, reason_code="insufficient_funds",
                        saga=tx.saga.stopped(self.world.now_ms), fee_status=FeeStatus.WAIVED)
            return False
        finally:
            self.waiting_on = None
        self._step_done(chain=ChainState.LOCKED)
        return True

    def _earmark(self) -> Proc:
        tx = self.tx
        self.waiting_on = "earmark"
        try:
            yield from self.world.rtgs.earmark(tx.id, tx.debtor.participant_id,
                                               tx.quote.debit_amount)
        except RtgsRefused:
            self.waiting_on = None
            ledger, _ = self._source_wallet()
            yield from ledger.return_to_sender(tx.id)
            self._apply(Trigger.EARMARK_REFUSED, reason_code="earmark_refused",
                        chain=ChainState.RETURNED_TO_SENDER, fee_status=FeeStatus.WAIVED,
                        saga=self.tx.saga.stopped(self.world.now_ms))
            return False
        finally:
            self.waiting_on = None
        self._step_done(rtgs=RtgsState.EARMARKED)
        return True

    def _burning(self, command_id: CommandId) -> Proc:
        """Each leg in the saga's order (``plan``), each phase by its own step; the first
        outcome that is not DONE stops the saga. A finished leg's chain state is written
        before the next leg starts, the last one with the step's completion (one change at
        the same instant)."""
        chain: ChainState | None = None
        for phase, terms in plan(self.tx.legs):
            if chain is not None:
                self._update(chain=chain)
                chain = None
            if terms.leg in self.done_legs or (phase is _PREPARE
                                               and terms.leg in self.approved):
                continue
            if phase is _COMMIT and terms.mode is _MODE_1:
                yield from self._co_signed(terms)
                outcome = _DONE
            elif phase is _COMMIT:
                outcome = yield from self._execute(terms, command_id)
            else:
                outcome = yield from self._leg(phase, terms, command_id)
            if outcome is not _DONE:
                yield from self._stop(terms, outcome)
                return
            if phase is not _PREPARE:
                chain = self._leg_done(terms)
        self._step_done(**({} if chain is None else {"chain": chain}))
        yield from self._settle()

    def _leg_done(self, terms: LegTerms) -> ChainState | None:
        """Record the leg as done; the chain state it leaves (None: unchanged)."""
        self.done_legs.append(terms.leg)
        self.approved.pop(terms.leg, None)
        if "burn" not in self.done_legs:
            return None  # a Mode 3 mint before a Mode 2 burn: the source is still locked
        legs = len(self.tx.legs)
        swapped = len(self.done_legs) == legs == 2
        return ChainState.MINTED if swapped else ChainState.BURNED

    def _settle(self) -> Proc:
        tx = self.tx
        settled_by = "issuer" if self.world.profile_of(tx.legs[0]).fiat_leg \
            is FiatLeg.ISSUER_SETTLES_RTGS else "operator"
        yield from self.world.rtgs.settle(tx.id, tx.creditor.participant_id,
                                          tx.quote.platform_fee_amount, settled_by)
        self.world.transactions.complete_step(self.tx_id, self.world.now_ms,
                                              Trigger.PROOF_COMPLETE, rtgs=RtgsState.SETTLED,
                                              fee_status=FeeStatus.COLLECTED)

    # one leg ----------------------------------------------------------------------------
    def _leg(self, phase: Phase, terms: LegTerms, command_id: CommandId) -> Proc:
        """Prepare a Mode 2 leg (instruct, await APPROVED) or run a Mode 3 leg (transfer the
        burn's tokens first, instruct, await COMPLETED)."""
        gateway = self.world.issuers[terms.issuer_id]
        sent = self.pending.get(terms.leg)
        if sent is not None:  # resuming after an operator fix: read the old instruction first
            answer = yield from self._reread(terms, sent)
            if answer is not None:
                return answer
        profile = self.world.profile_of(terms)
        if phase is _SINGLE and terms.leg == "burn" \
                and not (yield from self._pre_burn_transfer(terms, gateway, profile)):
            return LegOutcome.RELOCK_REFUSED
        body = self._instruction_body(terms, gateway, profile, command_id)
        deadline = self.world.now_ms + profile.approval_sla_ms
        self.world.log.append("saga.instruction_sent", transactionId=self.tx_id, leg=terms.leg,
                              issuerId=terms.issuer_id, idempotencyKey=body["idempotencyKey"],
                              deadlineMs=deadline)
        snap = yield from gateway.post_instruction(terms.leg, body, terms.mode,
                                                   profile.feedback_channel)
        sent = self.pending[terms.leg] = _Sent(gateway, snap.instruction_id, deadline, phase)
        return (yield from self._await(terms, sent, profile.feedback_channel))

    def _reread(self, terms: LegTerms, sent: _Sent) -> Proc:
        """An instruction left from before a park: its answer if it has one or is still moving
        on chain; None once it is closed at the issuer (the caller instructs anew)."""
        snap = yield from sent.gateway.get(sent.instruction_id)
        if snap.status in (_APPROVED if sent.phase is _PREPARE else _COMPLETED):
            return self._answered(terms, sent, snap)
        if not (yield from sent.gateway.expire(sent.instruction_id)):  # on chain: await it
            profile = self.world.profile_of(terms)
            again = _Sent(sent.gateway, sent.instruction_id,
                          self.world.now_ms + profile.approval_sla_ms, sent.phase)
            self.pending[terms.leg] = again
            return (yield from self._await(terms, again, profile.feedback_channel))
        del self.pending[terms.leg]
        self.approved.pop(terms.leg, None)  # closed: its approval no longer holds
        return None

    def _execute(self, terms: LegTerms, command_id: CommandId) -> Proc:
        """Commit a Mode 2 leg: the execute call, then await COMPLETED (a new SLA wait)."""
        sent = self.pending.get(terms.leg)
        if sent is not None:  # parked during the commit: read the executed instruction first
            answer = yield from self._reread(terms, sent)
            if answer is not None:
                return answer
        if terms.leg not in self.approved:  # closed at the issuer since: decide again
            outcome = yield from self._leg(_PREPARE, terms, command_id)
            if outcome is not _DONE:
                return outcome
        gateway = self.world.issuers[terms.issuer_id]
        instruction_id = self.approved[terms.leg]
        assert self.tx.rtgs is RtgsState.EARMARKED, "execute only after the earmark"
        profile = self.world.profile_of(terms)
        deadline = self.world.now_ms + profile.approval_sla_ms
        sent = self.pending[terms.leg] = _Sent(gateway, instruction_id, deadline, _COMMIT)
        self.world.log.append("saga.execute_sent", transactionId=self.tx_id, leg=terms.leg,
                              instructionId=instruction_id, deadlineMs=deadline)
        yield from gateway.execute(instruction_id)
        return (yield from self._await(terms, sent, profile.feedback_channel))

    def _co_signed(self, terms: LegTerms) -> Proc:
        """Mode 1: the operator co-signs the burn or mint on the issuer's account."""
        tx = self.tx
        if terms.leg == "burn":
            ledger, _ = self._source_wallet()
            receipt = yield from ledger.burn_locked(tx.id)
            self._note(NormalisedEvent.BURNED, txHash=receipt.tx_hash)
        else:
            ledger, account = self.world.target_wallet(tx)
            receipt = yield from ledger.mint(tx.id, account, tx.target.amount)
            self._note(NormalisedEvent.MINTED, txHash=receipt.tx_hash)

    def _pre_burn_transfer(self, terms: LegTerms, gateway: Gateway,
                           profile: IssuerProfile) -> Proc:
        tx = self.tx
        if self.transferred:
            return True
        ledger, account = self._source_wallet()
        if self.refunded:  # the tokens came back to the member: lock them again first
            try:
                yield from ledger.lock(tx.id, account, tx.source.amount)
            except LedgerRefused:
                return False
            self.refunded = False
        treasury = gateway.treasury_for(tx.initiator_id, profile.custody_model)
        yield from ledger.transfer_locked(tx.id, treasury)
        self.transferred = True
        self._update(chain=ChainState.TRANSFERRED_TO_ISSUER)
        return True

    def _instruction_body(self, terms: LegTerms, gateway: Gateway, profile: IssuerProfile,
                          command_id: CommandId) -> dict[str, str]:
        tx = self.tx
        body = {"idempotencyKey": instruction_idempotency_key(command_id, terms.leg),
                "reference": instruction_reference(tx.id)}
        if terms.leg == "burn":
            _, wallet = self._source_wallet()
            if terms.mode is SettlementMode.MODE_3:
                wallet = gateway.treasury_for(tx.initiator_id, profile.custody_model)
            body.update(sourceWalletId=wallet, amount=tx.source.amount.wire_amount(),
                        assetCode=tx.source.amount.asset.code)
        else:
            _, source = self._source_wallet()
            _, target = self.world.target_wallet(tx)
            body.update(sourceWalletId=source, targetWalletId=target,
                        amount=tx.target.amount.wire_amount(),
                        assetCode=tx.target.amount.asset.code)
        return body

    def _answered(self, terms: LegTerms, sent: _Sent, snap: Snapshot) -> LegOutcome:
        del self.pending[terms.leg]
        if sent.phase is _PREPARE:
            self.approved[terms.leg] = snap.instruction_id
            self.world.log.append("saga.approved", transactionId=self.tx_id, leg=terms.leg,
                                  instructionId=snap.instruction_id)
            return _DONE
        return self._proof(terms, snap)

    def _await(self, terms: LegTerms, sent: _Sent,
               channels: tuple[FeedbackChannel, ...]) -> Proc:
        """Wait for a decisive answer, learned by prompt or poll, strictly before the deadline.

        The deadline is one timer for the whole wait; a status read still in progress when
        it fires is abandoned, so the transaction parks at exactly the deadline. A REJECTED
        after the issuer approved breaks the decision-first rule: it is taken as FAILED."""
        world = self.world
        env, inbox, read = world.env, world.issuer_inbox, sent.gateway.read
        instruction_id, deadline_ms = sent.instruction_id, sent.deadline_ms
        accept = _APPROVED if sent.phase is _PREPARE else _COMPLETED
        approved = sent.phase is _COMMIT
        prompted = _WEBHOOK in channels
        poll_ms = world.config.poll_interval_ms \
            if _POLL in channels else None
        remaining = deadline_ms - world.now_ms
        if remaining <= 0:
            return LegOutcome.SILENCE
        deadline = env.timeout(remaining)
        try:
            while True:
                # a poll due before the deadline is always processed first: the deadline need
                # not watch this round (it would be one more call, for nothing, when it fires)
                early = poll_ms is not None and poll_ms < remaining
                waits: list[simpy.Event] = [] if early else [deadline]
                if prompted:
                    waits.append(inbox.prompt(instruction_id))
                if poll_ms is not None:
                    waits.append(env.timeout(min(poll_ms, remaining)))
                yield first_of(env, waits)
                if world.now_ms >= deadline_ms:
                    return LegOutcome.SILENCE  # the deadline wins a tie
                inbox.consume(instruction_id)
                reading = read(instruction_id)
                yield first_of(env, [reading, deadline])
                now_ms = world.now_ms
                if not reading.triggered or now_ms >= deadline_ms:
                    return LegOutcome.SILENCE
                snap = reading.value
                assert isinstance(snap, Snapshot)
                remaining = deadline_ms - now_ms
                status = snap.status
                if status in accept:
                    return self._answered(terms, sent, snap)
                approved = approved or status in _APPROVED
                if status is _REJECTED and approved:
                    world.log.append("saga.forbidden_transition", transactionId=self.tx_id,
                                     instructionId=instruction_id, status="REJECTED",
                                     after="APPROVED")
                    return LegOutcome.FAILED
                if status is _REJECTED:
                    return LegOutcome.REJECTED
                if status is _FAILED:
                    return LegOutcome.FAILED
        finally:
            # the waits this one made and left (one per wake) would each still be called
            # when the deadline fires, for nothing: nobody waits on the deadline any more
            if deadline.callbacks:
                deadline.callbacks.clear()

    def _proof(self, terms: LegTerms, snap: Snapshot) -> LegOutcome:
        """COMPLETED counts only with its on-chain hash: that is the proof-backed event."""
        assert snap.tx_hash is not None and snap.ledger_sequence is not None
        event = NormalisedEvent.BURNED if terms.leg == "burn" else NormalisedEvent.MINTED
        self._note(event, txHash=snap.tx_hash, ledgerSequence=snap.ledger_sequence,
                   instructionId=snap.instruction_id)
        return _DONE

    # stopping -----------------------------------------------------------------------------
    def _stop(self, terms: LegTerms, outcome: LegOutcome) -> Proc:
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
            if terms.leg == "burn" and self.transferred:
                yield from self._refund(terms, "instruction_expired")
                if self.refunded:  # details stay true: the tokens are the member's again
                    self.world.transactions.amend(self.tx_id, self.world.now_ms,
                                                  chain=ChainState.RETURNED_TO_SENDER)
            return
        if outcome is LegOutcome.FAILED:
            self._note(NormalisedEvent.INSTRUCTION_FAILED, leg=terms.leg)
            self._apply(Trigger.ISSUER_FAILED, reason_code="issuer_failed")
            return
        self._note(NormalisedEvent.INSTRUCTION_REJECTED, leg=terms.leg)
        self.pending.pop(terms.leg, None)
        if not (yield from self._unwind()):
            self._apply(Trigger.UNWIND_FAILED, reason_code="unwind_failed")
            return
        self._apply(Trigger.ISSUER_REJECTED, reason_code="issuer_rejected",
                    fee_status=FeeStatus.WAIVED, saga=self.tx.saga.stopped(self.world.now_ms))

    def _unwind(self) -> Proc:
        """REJECTED (States rule 3): close what was approved but never executed, give the
        source asset back, release the earmark. False when the value could not be given
        back (the transaction then parks: a person must look)."""
        tx = self.tx
        for leg, instruction_id in list(self.approved.items()):  # expire may wait
            yield from self.world.issuers[tx.legs[0 if leg == "burn" else -1].issuer_id] \
                .expire(instruction_id)
        self.approved.clear()
        burn = tx.legs[0]
        if "mint" in self.done_legs:  # only after an operator fix re-decided the burn
            return False
        if "burn" in self.done_legs:  # the source is burned: its issuer gives the value back
            if not (yield from self._refund(burn, COMPENSATION_REASON)):
                return False
        elif self.transferred:  # Mode 3: the tokens sit with the issuer
            if not (yield from self._refund(burn, "instruction_rejected")):
                return False
        else:
            ledger, _ = self._source_wallet()
            yield from ledger.return_to_sender(self.tx_id)
        self._update(chain=ChainState.RETURNED_TO_SENDER)
        yield from self.world.rtgs.release(self.tx_id)
        self._update(rtgs=RtgsState.CANCELLED)
        return True

    def _refund(self, terms: LegTerms, reason: str) -> Proc:
        """POST {issuer-api}/treasury/refunds: the Mode 3 refund, or (reason
        ``COMPENSATION_REASON``) the compensating return of a burned source; True when the
        value is back in the member's wallet."""
        tx = self.tx
        gateway = self.world.issuers[terms.issuer_id]
        _, member_wallet = self._source_wallet()
        treasury = gateway.treasury_for(tx.initiator_id, self.world.profile_of(terms).custody_model)
        result = yield from gateway.refund(tx.id, reason, member_wallet, treasury,
                                           tx.source.amount)
        refunded = result.status == "refunded"
        if refunded:
            self.transferred, self.refunded = False, True
        kind = "saga.compensation" if reason == COMPENSATION_REASON else "saga.refund"
        self.world.log.append(kind, transactionId=tx.id, reason=reason,
                              refundTxHash=result.refund_tx_hash)
        return refunded
