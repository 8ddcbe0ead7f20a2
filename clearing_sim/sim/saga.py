"""The saga: one SimPy process per transaction, per settlement mode and use case.

Public names: ``Saga``, ``LegOutcome``, ``Phase``; ``SagaWorld`` and ``SagaTimings``, what a
saga reads of its run (its seam, ``sim.seams``).

Steps (spec, full path): Received and Validated are done at initiation; after the intake
latency the transaction goes ``in-flight``; Lock locks the source asset on its ledger;
Earmarked holds the fiat at the RTGS adapter; Burning runs the legs (burn, and mint for a
swap) under the mode each leg captured at initiation; Settled settles the fiat leg once every
leg has produced a proof-backed event (Burned, Minted: an on-chain hash).

The Burning step runs its legs in the order ``sim.legs.plan`` gives: instruct, then
decide-and-move, then co-sign (see that module).

Outcomes: COMPLETED → next; REJECTED → the automatic unwind (``failed``, parked false):
instructions never executed are closed at their issuers, the source asset returns to the
sender (lock returned, Mode 3 refund, or, when the burn already happened because the mint
was rejected after it, the source issuer's compensating return: ``/treasury/refunds`` for a
Mode 3 source, a mint instruction executed at once for a Mode 2 one), the earmark is
released; a compensation that does not complete parks (``unwind_failed``). FAILED → parked,
nothing undone; no decisive answer within ``approvalSlaSeconds`` of the request that asked
for it (Mode 2: the execute; Mode 3: the instruction) → parked at exactly that instant (a
Mode 3 burn leg then asks the issuer for a refund). Cancel and the operator fix enter from
outside (``World``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import simpy

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
from clearing_sim.sim.legs import (
    CO_SIGN,
    COMPENSATE,
    COMPENSATION_LEG,
    COMPLETED,
    DONE,
    EXECUTE,
    FAILED,
    INSTRUCT,
    MODE_2,
    MODE_3,
    POLL,
    REJECTED,
    SINGLE,
    WEBHOOK,
    LegOutcome,
    Phase,
    Sent,
    plan,
)
from clearing_sim.sim.rtgs import RtgsRefused
from clearing_sim.sim.saga_world import SagaTimings, SagaWorld
from clearing_sim.sim.timers import first_of

__all__ = ["LegOutcome", "Phase", "Saga", "SagaTimings", "SagaWorld"]

Proc = Generator[simpy.Event, Any, Any]
_S = InstructionStatus
#: Statuses at which an issuer has decided to move the asset (a rejection can no longer come).
_DECIDED = (_S.APPROVED, _S.EXECUTING, _S.COMPLETED)


class Saga:
    """Drives one transaction. ``process`` is the running SimPy process (None when idle)."""

    def __init__(self, world: SagaWorld, transaction_id: TransactionId) -> None:
        self.world = world
        self.tx_id = transaction_id
        self.process: simpy.Process | None = None
        self.pending: dict[str, Sent] = {}  # leg → instruction awaiting an answer
        self.instructed: dict[str, str] = {}  # leg → Mode 2 instruction not executed yet
        self.done_legs: list[str] = []
        self.transferred = False  # Mode 3: the locked tokens sit in the issuer's wallet
        self.refunded = False  # Mode 3: the issuer refunded them to the member's wallet
        self.waiting_on: str | None = None  # the ledger or RTGS write in progress, if any
        self._source: tuple[ChainLedger, str] | None = None
        self._book = world.transactions.by_id
        self._command_id: CommandId | None = None  # of the Burning step running now

    @property
    def tx(self) -> Transaction:
        return self._book[self.tx_id]

    def start(self) -> None:
        self.process = self.world.env.process(self._run())
        self.world.running_sagas.started(self.process)

    def resume(self, command_id: CommandId) -> None:
        """After an operator fix: pick up the Burning step where it stopped."""
        self.process = self.world.env.process(self._resume(self.process, command_id))
        self.world.running_sagas.started(self.process)

    def step_in_progress(self) -> str | None:
        """``"lock"`` or ``"earmark"`` while that write waits for its finality (a cancel
        then withdraws it), else None."""
        return self.waiting_on

    def next_decision(self) -> LegTerms | None:
        """The leg whose issuer decides next (an armed ``rejected`` applies to it): the
        first leg, in the saga's order of decisions, that is not done and whose issuer has
        not decided yet (APPROVED, EXECUTING or COMPLETED)."""
        for phase, terms in plan(self.tx.legs):
            if phase in (EXECUTE, SINGLE) and terms.leg not in self.done_legs \
                    and not self._decided(terms.leg):
                return terms
        return None

    def next_instructed(self) -> LegTerms | None:
        """The instructed leg whose issuer sends the next instruction event (an armed
        ``failed`` or ``silence`` applies to it): the first leg, in the saga's order of
        decisions, that is not done."""
        for phase, terms in plan(self.tx.legs):
            if phase in (EXECUTE, SINGLE) and terms.leg not in self.done_legs:
                return terms
        return None

    def _decided(self, leg: str) -> bool:
        """The leg's issuer has decided to move, though the saga may not know yet."""
        sent = self.pending.get(leg)
        instruction_id = sent.instruction_id if sent is not None else self.instructed.get(leg)
        if instruction_id is None:
            return False
        gateway = self.world.issuers[self._terms(leg).issuer_id]
        ins = gateway.instructions.get(instruction_id)
        return ins is not None and not ins.expired and ins.status in _DECIDED

    def _terms(self, leg: str) -> LegTerms:
        return next(t for t in self.tx.legs if t.leg == leg)

    def _forget_if_terminal(self) -> None:
        """``forget_terminal`` worlds: once the process ends with the transaction terminal,
        forget it (a cancel forgets it when the interrupted process ends); a world that
        keeps parked transactions (one with an archive) forgets a parked one once fixed."""
        tx = self.world.transactions.get(self.tx_id)
        if tx is not None and tx.terminal and not (tx.parked and self.world.keeps_parked):
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
        self._command_id = command_id
        chain: ChainState | None = None
        for phase, terms in plan(self.tx.legs):
            if chain is not None:
                self._update(chain=chain)
                chain = None
            if terms.leg in self.done_legs or (phase is INSTRUCT and (
                    terms.leg in self.instructed or terms.leg in self.pending)):
                continue
            if phase is CO_SIGN:
                yield from self._co_signed(terms)
                outcome = DONE
            elif phase is INSTRUCT:
                outcome = yield from self._instruct(terms, command_id)
            elif phase is EXECUTE:
                outcome = yield from self._execute(terms, command_id)
            else:
                outcome = yield from self._leg(terms, command_id)
            if outcome is not DONE:
                yield from self._stop(terms, outcome)
                return
            if phase is not INSTRUCT:
                chain = self._leg_done(terms)
        self._step_done(**({} if chain is None else {"chain": chain}))
        yield from self._settle()

    def _leg_done(self, terms: LegTerms) -> ChainState | None:
        """Record the leg as done; the chain state it leaves (None: unchanged)."""
        self.done_legs.append(terms.leg)
        if "burn" not in self.done_legs:
            return None  # a mint before a Mode 1 burn: the source is still locked
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
    def _instruct(self, terms: LegTerms, command_id: CommandId) -> Proc:
        """Send a Mode 2 leg's instruction; its creation answer is all this waits for
        (where the issuer then holds is its own: RECEIVED, PENDING_APPROVAL or APPROVED).
        No SLA runs yet: it counts from the execute call."""
        gateway = self.world.issuers[terms.issuer_id]
        profile = self.world.profile_of(terms)
        body = self._instruction_body(terms, gateway, profile, command_id)
        self.world.log.append("saga.instruction_sent", transactionId=self.tx_id, leg=terms.leg,
                              issuerId=terms.issuer_id, idempotencyKey=body["idempotencyKey"])
        snap = yield from gateway.post_instruction(terms.leg, body, terms.mode,
                                                   profile.feedback_channel)
        if snap.status is REJECTED:
            return LegOutcome.REJECTED
        if snap.status is FAILED:
            return LegOutcome.FAILED
        self.instructed[terms.leg] = snap.instruction_id
        return DONE

    def _leg(self, terms: LegTerms, command_id: CommandId) -> Proc:
        """Run a Mode 3 leg: transfer the burn's tokens first, instruct, await COMPLETED
        (the SLA counts from the instruction)."""
        gateway = self.world.issuers[terms.issuer_id]
        sent = self.pending.get(terms.leg)
        if sent is not None:  # resuming after an operator fix: read the old instruction first
            answer = yield from self._reread(terms, sent)
            if answer is not None:
                return answer
        profile = self.world.profile_of(terms)
        if terms.leg == "burn" \
                and not (yield from self._pre_burn_transfer(terms, gateway, profile)):
            return LegOutcome.RELOCK_REFUSED
        body = self._instruction_body(terms, gateway, profile, command_id)
        deadline = self.world.now_ms + profile.approval_sla_ms
        self.world.log.append("saga.instruction_sent", transactionId=self.tx_id, leg=terms.leg,
                              issuerId=terms.issuer_id, idempotencyKey=body["idempotencyKey"],
                              deadlineMs=deadline)
        snap = yield from gateway.post_instruction(terms.leg, body, terms.mode,
                                                   profile.feedback_channel)
        sent = self.pending[terms.leg] = Sent(gateway, snap.instruction_id, deadline, SINGLE)
        return (yield from self._await(terms, sent, profile.feedback_channel))

    def _reread(self, terms: LegTerms, sent: Sent) -> Proc:
        """An instruction left from before a park: its answer if it completed or is still
        moving on chain; None once it is closed at the issuer (the caller instructs anew)."""
        snap = yield from sent.gateway.get(sent.instruction_id)
        if snap.status is COMPLETED:
            return self._answered(terms, sent, snap)
        if not (yield from sent.gateway.expire(sent.instruction_id)):  # on chain: await it
            profile = self.world.profile_of(terms)
            again = Sent(sent.gateway, sent.instruction_id,
                          self.world.now_ms + profile.approval_sla_ms, sent.phase)
            self.pending[terms.leg] = again
            return (yield from self._await(terms, again, profile.feedback_channel))
        del self.pending[terms.leg]
        return None

    def _execute(self, terms: LegTerms, command_id: CommandId) -> Proc:
        """A Mode 2 leg's decision and move: the execute call (the earmark is confirmed),
        then await COMPLETED; the approval SLA counts from the execute request. An
        instruction closed at the issuer since (after a park) is instructed anew first."""
        sent = self.pending.get(terms.leg)
        if sent is not None:  # parked during the wait: read the executed instruction first
            answer = yield from self._reread(terms, sent)
            if answer is not None:
                return answer
        if terms.leg not in self.instructed:
            outcome = yield from self._instruct(terms, command_id)
            if outcome is not DONE:
                return outcome
        gateway = self.world.issuers[terms.issuer_id]
        instruction_id = self.instructed.pop(terms.leg)
        assert self.tx.rtgs is RtgsState.EARMARKED, "execute only after the earmark"
        return (yield from self._execute_instruction(terms, gateway, instruction_id))

    def _execute_instruction(self, terms: LegTerms, gateway: Gateway, instruction_id: str,
                             phase: Phase = EXECUTE) -> Proc:
        """POST /instructions/{id}/execute, then await COMPLETED within the SLA (of the
        leg's captured profile; a compensation is its burn's issuer's)."""
        profile = self.world.profile_of(terms)
        deadline = self.world.now_ms + profile.approval_sla_ms
        leg = COMPENSATION_LEG if phase is COMPENSATE else terms.leg
        sent = self.pending[leg] = Sent(gateway, instruction_id, deadline, phase)
        self.world.log.append("saga.execute_sent", transactionId=self.tx_id, leg=leg,
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

    def _answered(self, terms: LegTerms, sent: Sent, snap: Snapshot) -> LegOutcome:
        if sent.phase is COMPENSATE:
            del self.pending[COMPENSATION_LEG]
            self.world.log.append("saga.compensation", transactionId=self.tx_id,
                                  reason=COMPENSATION_REASON, instructionId=snap.instruction_id,
                                  txHash=snap.tx_hash)
            return DONE
        del self.pending[terms.leg]
        return self._proof(terms, snap)

    def _await(self, terms: LegTerms, sent: Sent,
               channels: tuple[FeedbackChannel, ...]) -> Proc:
        """Wait for COMPLETED, REJECTED or FAILED, learned by prompt or poll, strictly
        before the deadline.

        The deadline is one timer for the whole wait; a status read still in progress when
        it fires is abandoned, so the transaction parks at exactly the deadline. A status
        change the spec forbids (REJECTED after APPROVED, say) never reaches this wait: the
        gateway seam logs it as ``issuer.protocol_violation`` and reads it as FAILED."""
        world = self.world
        env, inbox, read = world.env, world.issuer_inbox, sent.gateway.read
        instruction_id, deadline_ms = sent.instruction_id, sent.deadline_ms
        prompted = WEBHOOK in channels
        poll_ms = world.config.poll_interval_ms \
            if POLL in channels else None
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
                if status is COMPLETED:
                    return self._answered(terms, sent, snap)
                if status is REJECTED:
                    return LegOutcome.REJECTED
                if status is FAILED:
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
        return DONE

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
        """REJECTED (States rule 3): close what was instructed but never executed, give the
        source asset back, release the earmark. False when the value could not be given
        back (the transaction then parks: a person must look)."""
        tx = self.tx
        for leg, instruction_id in list(self.instructed.items()):  # expire may wait
            yield from self.world.issuers[self._terms(leg).issuer_id].expire(instruction_id)
        self.instructed.clear()
        burn = tx.legs[0]
        if "mint" in self.done_legs:  # the burn is the only one to decide after the mint
            return False  # (a Mode 1 burn, which no issuer refuses): never reached
        if "burn" in self.done_legs:  # the source is burned: its issuer gives the value back
            if not (yield from self._compensate(burn)):
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

    def _compensate(self, burn: LegTerms) -> Proc:
        """The mint was rejected after the burn completed: the source issuer re-issues the
        burned amount to the member. A Mode 3 issuer is asked through its refund endpoint
        (reason ``mint_rejected``); a Mode 2 issuer, which need not have that endpoint, by a
        mint instruction for the burned amount into the member's wallet, executed at once
        and awaited until COMPLETED within the SLA. True when the value is back."""
        if burn.mode is MODE_3:
            return (yield from self._refund(burn, COMPENSATION_REASON))
        if burn.mode is not MODE_2:  # a Mode 1 burn is co-signed after every decision
            return False
        tx, gateway = self.tx, self.world.issuers[burn.issuer_id]
        profile = self.world.profile_of(burn)
        _, wallet = self._source_wallet()
        assert self._command_id is not None
        key = instruction_idempotency_key(self._command_id, COMPENSATION_LEG)
        body = {"idempotencyKey": key, "reference": instruction_reference(tx.id),
                "sourceWalletId": wallet, "targetWalletId": wallet,
                "amount": tx.source.amount.wire_amount(),
                "assetCode": tx.source.amount.asset.code}
        self.world.log.append("saga.instruction_sent", transactionId=self.tx_id,
                              leg=COMPENSATION_LEG, issuerId=burn.issuer_id,
                              idempotencyKey=key)
        snap = yield from gateway.post_instruction("mint", body, MODE_2,
                                                   profile.feedback_channel)
        if snap.status in (REJECTED, FAILED):
            outcome = LegOutcome.REJECTED if snap.status is REJECTED else LegOutcome.FAILED
        else:
            outcome = yield from self._execute_instruction(burn, gateway, snap.instruction_id,
                                                           COMPENSATE)
        self.pending.pop(COMPENSATION_LEG, None)
        if outcome is not DONE:
            self.world.log.append("saga.compensation_failed", transactionId=self.tx_id,
                                  instructionId=snap.instruction_id, outcome=outcome.value)
        return outcome is DONE

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
