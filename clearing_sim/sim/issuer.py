"""The simulated issuer gateway: the issuer side of the burn/mint contract, on virtual time.

Public names: ``IssuerBehaviour``, ``IssuerGateway``, ``Instruction``, ``Snapshot``,
``RefundResult``, ``IdempotencyConflict``; ``IssuerWorld`` and ``WebhookInbox``, what a
simulated issuer reads of its run (its seam, ``sim.seams``).

Routes it answers (spec, "Issuer-side contract"), each after a sampled request latency:
``post_instruction`` (burn or mint; a replay of the same key and body returns the original
instruction and creates none; the same key with another body is refused), ``get``,
``execute`` (Mode 2), ``refund`` (``/treasury/refunds``: the Mode 3 refund of transferred
tokens, and, with reason ``COMPENSATION_REASON``, the compensating return of a source the
issuer already burned when the swap's target then rejected its mint).

An instruction advances RECEIVED → PENDING_APPROVAL → APPROVED (or REJECTED: the decision)
→ EXECUTING → COMPLETED (or FAILED). In Mode 2 it holds until ``execute`` arrives at the
behaviour's ``hold_at`` status: by default PENDING_APPROVAL, as the spec says ("In Mode 2 the
issuer stops at RECEIVED or PENDING_APPROVAL and does not execute until the execute call
arrives"), so it decides after execute; RECEIVED holds before even acknowledging; APPROVED
votes first and then holds. REJECTED never follows APPROVED: an outcome armed ``rejected``
waits for an instruction that has not decided yet.
COMPLETED comes only with the on-chain burn or mint receipt. The behaviour draws each
instruction's outcome (complete, rejected, failed, silence) from the issuer's own stream;
an outcome armed for a transaction replaces the instruction's *next* status event
(REJECTED, FAILED, or nothing ever again). After each status change the issuer sends a
signed status webhook when its profile lists SIGNED_WEBHOOK.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from decimal import Decimal
from functools import partial
from json.encoder import encode_basestring_ascii as _json_string
from typing import Any, Protocol, TypeVar

import simpy
from attrs import define, field, frozen, validators

from clearing_sim.domain.ids import transaction_id_of_reference
from clearing_sim.domain.instruction import FINAL, InstructionStatus, Outcome
from clearing_sim.domain.latency import Fixed, Latency, LogNormal
from clearing_sim.domain.money import Asset, Money
from clearing_sim.domain.profile import CustodyModel, FeedbackChannel, SettlementMode
from clearing_sim.domain.signing import signature_header
from clearing_sim.domain.timefmt import render_iso
from clearing_sim.sim.ledger import ChainLedger, LedgerRefused, Receipt
from clearing_sim.sim.seams import Engine
from clearing_sim.sim.timers import soon

__all__ = ["COMPENSATION_REASON", "HOLD_POINTS", "IdempotencyConflict", "Instruction",
           "IssuerBehaviour", "IssuerGateway", "IssuerWorld", "RefundResult", "Snapshot",
           "WebhookInbox", "webhook_body"]

Proc = Generator[simpy.Event, Any, Any]
_A = TypeVar("_A")
_S = InstructionStatus
#: The refund reason of a compensating return: the burn completed, the mint was rejected,
#: so the source issuer re-issues the burned amount to the member (docs/semantics.md).
COMPENSATION_REASON = "mint_rejected"
_DECIDED = (_S.APPROVED, _S.EXECUTING)
#: The statuses a simulated Mode 2 issuer can hold at until execute (``hold_at``).
HOLD_POINTS = (_S.RECEIVED, _S.PENDING_APPROVAL, _S.APPROVED)
#: Read at every status change, bound once: on Python 3.11 ``Enum.MEMBER`` goes through
#: ``EnumType.__getattr__``'s slow path and ``.value`` is a Python-level property.
_RECEIVED, _WEBHOOK = _S.RECEIVED, FeedbackChannel.SIGNED_WEBHOOK
_STATUS_TEXT: dict[InstructionStatus, str] = {status: status.value for status in _S}
_probability = [validators.ge(0.0), validators.le(1.0)]
#: A status webhook's body, its one shape with the keys in sorted order (``webhook_body``).
_WEBHOOK_BODY = ('{"finalizedAt":%s,"instructionId":%s,'
                 '"onchain":{"ledgerSequence":%s,"txHash":%s},"status":%s}')


def webhook_body(instruction_id: str, status: str, tx_hash: str | None,
                 ledger_sequence: int | None, finalized_at: str | None) -> bytes:
    """A status webhook's body: the bytes ``json.dumps(body, sort_keys=True,
    ensure_ascii=True, separators=(",", ":")).encode()`` gives for ``{"instructionId",
    "status", "onchain": {"txHash", "ledgerSequence"}, "finalizedAt"}``, written into its
    template (each string escaped by ``json``'s own escaper): a quarter of the encoder's
    time, which sorts both dicts and joins its chunks for every webhook."""
    return (_WEBHOOK_BODY % (
        "null" if finalized_at is None else _json_string(finalized_at),
        _json_string(instruction_id),
        "null" if ledger_sequence is None else str(ledger_sequence),
        "null" if tx_hash is None else _json_string(tx_hash),
        _json_string(status))).encode()


@frozen
class IssuerBehaviour:
    """Latencies, outcome probabilities and Mode 2 hold point of one simulated issuer."""

    request_latency: Latency = LogNormal(80, 0.3, 2_000)
    ack_latency: Latency = LogNormal(500, 0.4, 10_000)
    approval_latency: Latency = LogNormal(20_000, 0.5, 300_000)
    execution_latency: Latency = LogNormal(1_000, 0.3, 10_000)
    webhook_latency: Latency = LogNormal(250, 0.4, 5_000)
    refund_latency: Latency = Fixed(2_000)
    p_rejected: float = field(default=0.0, validator=_probability)
    p_failed: float = field(default=0.0, validator=_probability)
    p_silence: float = field(default=0.0, validator=_probability)
    #: Where a Mode 2 instruction waits for execute (spec: RECEIVED or PENDING_APPROVAL;
    #: APPROVED: the issuer votes first).
    hold_at: InstructionStatus = field(default=InstructionStatus.PENDING_APPROVAL,
                                       validator=validators.in_(HOLD_POINTS))

    def __attrs_post_init__(self) -> None:
        if self.p_rejected + self.p_failed + self.p_silence > 1.0:
            raise ValueError("outcome probabilities add up to more than 1")


class IdempotencyConflict(Exception):
    """The idempotency key was used before with a different body."""


@frozen
class Snapshot:
    """What ``GET {apiBaseUrl}/instructions/{id}`` answers."""

    instruction_id: str
    status: InstructionStatus
    tx_hash: str | None = None
    ledger_sequence: int | None = None
    finalized_at_ms: int | None = None


@frozen
class RefundResult:
    transaction_id: str
    status: str
    refund_tx_hash: str
    refunded_at_ms: int


@define
class Instruction:
    id: str
    kind: str  # "burn" | "mint"
    transaction_id: str
    mode: SettlementMode
    body: dict[str, str]
    feedback: tuple[FeedbackChannel, ...] = ()  # as the transaction's captured profile says
    status: InstructionStatus = _S.RECEIVED
    original: Snapshot | None = None  # the creation response, returned on every replay
    receipt: Receipt | None = None
    execute_requested: simpy.Event | None = None
    on_chain: simpy.Event | None = None  # set when the burn or mint starts on chain
    expired: bool = False
    #: The last snapshot, with the status and receipt it was taken from.
    _taken: tuple[InstructionStatus, Receipt | None, Snapshot] | None = field(
        default=None, init=False, repr=False, eq=False)

    def snapshot(self) -> Snapshot:
        """What a read answers now: the same frozen value while status and receipt stay."""
        taken, status, r = self._taken, self.status, self.receipt
        if taken is not None and taken[0] is status and taken[1] is r:
            return taken[2]
        if r is None:
            snap = Snapshot(self.id, status)
        else:
            snap = Snapshot(self.id, status, r.tx_hash, r.ledger_sequence, r.finalized_at_ms)
        self._taken = (status, r, snap)
        return snap


class WebhookInbox(Protocol):
    """Where the simulated issuer's signed status webhooks go (``sim.inbox.IssuerInbox``)."""

    def deliver(self, issuer_id: str, signature: str, raw: bytes, instruction_id: str) -> bool:
        ...


class IssuerWorld(Engine, Protocol):
    """What a simulated issuer reads of its run (``sim.seams``): the service's inbox for its
    status webhooks and the assets it issues."""

    @property
    def issuer_inbox(self) -> WebhookInbox: ...

    def asset_of(self, issuer_id: str, code: str) -> Asset: ...


class IssuerGateway:
    def __init__(self, world: IssuerWorld, issuer_id: str, name: str, ledger: ChainLedger,
                 issuing_account: str, behaviour: IssuerBehaviour) -> None:
        self.world = world
        self.issuer_id = issuer_id
        self.name = name
        self.ledger = ledger
        self.issuing_account = issuing_account
        self.behaviour = behaviour
        self.webhook_secret = "whsec_" + world.ids.key_hex("issuer-secret", 24)
        self.armed: dict[str, Outcome] = {}
        self.instructions: dict[str, Instruction] = {}
        self._by_key: dict[str, Instruction] = {}
        self._treasuries: dict[str, str] = {}
        self._webhooks_due: list[Snapshot] = []  # owed by the progress step running now
        self._rng_latency = world.streams.get(f"issuer:{issuer_id}:latency")
        self._rng_outcome = world.streams.get(f"issuer:{issuer_id}:outcome")

    # wallets ------------------------------------------------------------------------------
    def treasury_for(self, member_id: str, custody: CustodyModel) -> str:
        """The issuer wallet a Mode 3 pre-burn transfer goes to: one per member or one pool."""
        key = member_id if custody is CustodyModel.PER_MEMBER_ISSUER_WALLET else "pooled"
        if key not in self._treasuries:
            self._treasuries[key] = self.ledger.open_account(f"{self.name}:treasury:{key}")
        return self._treasuries[key]

    # conformance arming -------------------------------------------------------------------
    def arm(self, transaction_id: str, outcome: Outcome) -> None:
        self.armed[transaction_id] = outcome
        self.world.log.append("issuer.armed", issuerId=self.issuer_id,
                              transactionId=transaction_id, outcome=outcome.value)

    def trigger_amount(self, outcome: Outcome) -> Decimal | None:
        return None  # the simulated gateway is armed directly

    def forget(self, transaction_id: str) -> list[str]:
        """Drop the transaction's instructions (``World.forget``); their ids. The issuer's
        progress still running on one keeps its own reference and finishes as before."""
        mine = [ins for ins in self.instructions.values() if ins.transaction_id == transaction_id]
        for ins in mine:
            del self.instructions[ins.id]
            self._by_key.pop(ins.body["idempotencyKey"], None)
        self.armed.pop(transaction_id, None)
        return [ins.id for ins in mine]

    # routes -------------------------------------------------------------------------------
    def _request(self) -> simpy.Timeout:
        """A request's way to the issuer: a timeout of the sampled request latency; the
        route then logs its arrival (``_arrived``)."""
        return self.world.env.timeout(self.behaviour.request_latency.sample(self._rng_latency))

    def _arrived(self, route: str, **fields: Any) -> None:
        self.world.log.append("issuer.request", issuerId=self.issuer_id, route=route, **fields)

    def post_instruction(self, kind: str, body: dict[str, str], mode: SettlementMode,
                         feedback: tuple[FeedbackChannel, ...]) -> Proc:
        """POST /burn-instructions or /mint-instructions → ``{instructionId, status}``.

        The issuer matches the instruction to its transaction by ``reference`` (armed
        outcomes are keyed by transaction). ``mode`` and ``feedback`` are those of the
        profile version the transaction captured. A replay answers the original response."""
        key = body["idempotencyKey"]
        yield self._request()
        self._arrived(f"POST /{kind}-instructions", idempotencyKey=key,
                      reference=body["reference"])
        known = self._by_key.get(key)
        if known is not None:
            if known.body != body:
                self.world.log.append("issuer.idempotency_conflict", issuerId=self.issuer_id,
                                      idempotencyKey=key)
                raise IdempotencyConflict(key)
            self.world.log.append("issuer.replay", issuerId=self.issuer_id,
                                  instructionId=known.id, idempotencyKey=key)
            assert known.original is not None
            return known.original
        transaction_id = transaction_id_of_reference(body["reference"])
        ins = Instruction(self.world.ids.uuid("instruction"), kind, transaction_id, mode,
                          dict(body), feedback)
        if mode is SettlementMode.MODE_2:
            ins.execute_requested = self.world.env.event()
        self.instructions[ins.id] = ins
        self._by_key[key] = ins
        self._status(ins, _S.RECEIVED)
        ins.original = ins.snapshot()
        outcome = self._draw_outcome()
        soon(self.world.env, partial(self._progress, ins, outcome))
        return ins.original

    def get(self, instruction_id: str) -> Proc:
        ins = self.instructions[instruction_id]  # a read in flight outlives a forget
        yield self._request()
        self._arrived("GET /instructions/{id}", instructionId=instruction_id)
        return ins.snapshot()

    def read(self, instruction_id: str) -> simpy.Event:
        """``get`` as an event of its own, without a process: it succeeds with the snapshot
        when the answer arrives. The request latency is drawn at once. A process started
        for ``get`` would draw it in its first step, which SimPy runs (an urgent event)
        right after the step of whoever started it, and when that step is an ordinary
        event's (as every wake of a saga is) before anything else of this instant: so
        when the read is also the caller's last act before it waits (as the saga's polls
        and prompts are), the draw, the timeout and the answer come in the same order as
        ``env.process(get(...))``'s. A read nobody waits for any more still reaches the
        issuer and is logged."""
        env = self.world.env
        answer = env.event()
        ins = self.instructions[instruction_id]  # a read in flight outlives a forget
        arrival = env.timeout(self.behaviour.request_latency.sample(self._rng_latency))
        arrival.callbacks.append(partial(self._answer_read, ins, answer))
        return answer

    def _answer_read(self, ins: Instruction, answer: simpy.Event, _: simpy.Event) -> None:
        self.world.log.append("issuer.request", issuerId=self.issuer_id,
                              route="GET /instructions/{id}", instructionId=ins.id)
        answer.succeed(ins.snapshot())

    def execute(self, instruction_id: str) -> Proc:
        ins = self.instructions[instruction_id]
        yield self._request()
        self._arrived("POST /instructions/{id}/execute", instructionId=instruction_id)
        requested = ins.execute_requested  # only a Mode 2 instruction waits for it
        if requested is not None and not requested.triggered:
            requested.succeed()
        return ins.snapshot()

    def refund(self, transaction_id: str, reason: str, refund_to: str, from_wallet: str,
               money: Money) -> Proc:
        """POST /treasury/refunds: the issuer returns the transferred tokens on chain."""
        yield self._request()
        self._arrived("POST /treasury/refunds", transactionId=transaction_id, reason=reason,
                      refundToWalletId=refund_to)
        mine = [ins for ins in self.instructions.values() if ins.transaction_id == transaction_id]
        for ins in mine:  # a move already on chain finishes first: then nothing is refunded
            if ins.on_chain is not None and not ins.on_chain.processed:
                yield ins.on_chain
        burned = any(ins.kind == "burn" and ins.status is _S.COMPLETED for ins in mine)
        if burned and reason == COMPENSATION_REASON:
            return (yield from self._compensate(transaction_id, reason, refund_to, money))
        if burned:
            result = RefundResult(transaction_id, "not_refundable", "", self.world.now_ms)
            self._log_refund(result, reason, refund_to)
            return result
        for ins in mine:
            self._close(ins.id)
        yield self.world.env.timeout(self.behaviour.refund_latency.sample(self._rng_latency))
        try:
            receipt = yield from self.ledger.transfer(transaction_id, from_wallet, refund_to,
                                                      money)
        except LedgerRefused:  # the tokens were burned before the refund: nothing to return
            result = RefundResult(transaction_id, "not_refundable", "", self.world.now_ms)
        else:
            result = RefundResult(transaction_id, "refunded", receipt.tx_hash,
                                  receipt.finalized_at_ms)
        self._log_refund(result, reason, refund_to)
        return result

    def _compensate(self, transaction_id: str, reason: str, refund_to: str,
                    money: Money) -> Proc:
        """Re-issue a burned source to the member: the value it gave goes back."""
        yield self.world.env.timeout(self.behaviour.refund_latency.sample(self._rng_latency))
        receipt = yield from self.ledger.mint(transaction_id, refund_to, money)
        result = RefundResult(transaction_id, "refunded", receipt.tx_hash,
                              receipt.finalized_at_ms)
        self._log_refund(result, reason, refund_to)
        return result

    def _log_refund(self, result: RefundResult, reason: str, refund_to: str) -> None:
        self.world.log.append("issuer.refund", issuerId=self.issuer_id,
                              transactionId=result.transaction_id, reason=reason,
                              refundToWalletId=refund_to, status=result.status,
                              refundTxHash=result.refund_tx_hash,
                              refundedAt=render_iso(self.world.epoch_ms, result.refunded_at_ms))

    def expire(self, instruction_id: str) -> Proc:
        """Close the instruction at the issuer so it never moves anything (no virtual time
        passes: the seam's routes are processes because a real gateway's may wait).

        False when that is no longer possible: its burn or mint is already on chain (the
        caller must wait for its outcome). True when it is closed or already final."""
        yield from ()
        return self._close(instruction_id)

    def _close(self, instruction_id: str) -> bool:
        ins = self.instructions[instruction_id]
        if ins.status in FINAL or ins.expired:
            return True
        if ins.on_chain is not None:
            return False
        ins.expired = True
        self.world.log.append("issuer.expired", issuerId=self.issuer_id,
                              instructionId=ins.id, status=ins.status.value)
        return True

    # the issuer's own progress ------------------------------------------------------------
    # An instruction moves on as a chain of callbacks on virtual time rather than as a
    # process: each step acts, then draws its next latency and waits on one timeout. The
    # first step runs where a process started at creation would (``timers.soon``) and each
    # later one where that process would resume, so every draw and record keeps its place.
    # The status webhooks a step owes leave when it ends (``_send_webhooks``).
    def _draw_outcome(self) -> Outcome:
        b, u = self.behaviour, self._rng_outcome.random()
        if u < b.p_rejected:
            return Outcome.REJECTED
        if u < b.p_rejected + b.p_failed:
            return Outcome.FAILED
        if u < b.p_rejected + b.p_failed + b.p_silence:
            return Outcome.SILENCE
        return Outcome.COMPLETE

    def _after(self, latency: Latency, step: Callable[[Instruction, Outcome], None],
               ins: Instruction, outcome: Outcome) -> None:
        """Run ``step(ins, outcome)`` after the sampled latency, then send the webhooks it
        owes."""
        wake = self.world.env.timeout(latency.sample(self._rng_latency))
        wake.callbacks.append(partial(self._run_step, step, ins, outcome))

    def _run_step(self, step: Callable[[Instruction, _A], None], ins: Instruction, arg: _A,
                  _: simpy.Event) -> None:
        step(ins, arg)
        self._send_webhooks()

    def _next_event(self, ins: Instruction, planned: InstructionStatus) -> InstructionStatus | None:
        """The status this instruction's next event carries, or None if it goes silent."""
        if ins.expired:
            return None
        armed = self.armed.get(ins.transaction_id)
        if armed is Outcome.REJECTED and ins.status in _DECIDED:
            return planned  # decided already: the rejection waits for an undecided one
        if armed is not None:
            del self.armed[ins.transaction_id]
            self.world.log.append("issuer.armed_applied", issuerId=self.issuer_id,
                                  instructionId=ins.id, outcome=armed.value)
            return {Outcome.REJECTED: _S.REJECTED, Outcome.FAILED: _S.FAILED,
                    Outcome.SILENCE: None, Outcome.COMPLETE: planned}[armed]
        return planned

    def _held(self, ins: Instruction, at: InstructionStatus, then: Callable[[], None]) -> None:
        """Run ``then`` now, or, for a Mode 2 instruction held at ``at`` (the behaviour's
        hold point) whose execute has not arrived, once it arrives."""
        requested = ins.execute_requested
        if at is self.behaviour.hold_at and ins.mode is SettlementMode.MODE_2 \
                and requested is not None and requested.callbacks is not None:
            requested.callbacks.append(lambda _: then())
            return
        then()

    def _progress(self, ins: Instruction, outcome: Outcome) -> None:
        """RECEIVED: acknowledge after the ack latency (held there until execute, if so)."""
        self._held(ins, _RECEIVED, partial(self._after, self.behaviour.ack_latency,
                                           self._acknowledge, ins, outcome))

    def _acknowledge(self, ins: Instruction, outcome: Outcome) -> None:
        """PENDING_APPROVAL (or silence from here on), then the decision after its latency
        (held at PENDING_APPROVAL until execute, by default in Mode 2)."""
        if outcome is Outcome.SILENCE:
            self._log_silent(ins)
            return
        if self._advance(ins, _S.PENDING_APPROVAL):
            self._held(ins, _S.PENDING_APPROVAL, partial(
                self._after, self.behaviour.approval_latency, self._decide, ins, outcome))

    def _decide(self, ins: Instruction, outcome: Outcome) -> None:
        """APPROVED or REJECTED; then the move (held at APPROVED until execute, if so)."""
        decided = _S.REJECTED if outcome is Outcome.REJECTED else _S.APPROVED
        if not self._advance(ins, decided):
            return
        self._held(ins, _S.APPROVED, partial(self._start_execution, ins, outcome))

    def _start_execution(self, ins: Instruction, outcome: Outcome) -> None:
        self._after(self.behaviour.execution_latency, self._execute, ins, outcome)

    def _execute(self, ins: Instruction, outcome: Outcome) -> None:
        """EXECUTING (or FAILED), then the burn or mint on chain."""
        if not self._advance(ins, _S.FAILED if outcome is Outcome.FAILED else _S.EXECUTING):
            return
        # The completion is an event too: an outcome armed while EXECUTING replaces it,
        # before anything moves on chain.
        final = self._next_event(ins, _S.COMPLETED)
        if final is not _S.COMPLETED:
            if final is None:
                self._log_silent(ins)
            else:
                self._status(ins, final)
            return
        ins.on_chain = self.world.env.event()
        try:
            apply = self._on_chain_step(ins)
        except LedgerRefused:
            self._landed(ins, None)
            return
        self.ledger.until_final().callbacks.append(partial(self._run_step, self._land, ins, apply))

    def _land(self, ins: Instruction, apply: Callable[[], Receipt]) -> None:
        try:
            receipt: Receipt | None = apply()
        except LedgerRefused:
            receipt = None
        self._landed(ins, receipt)

    def _landed(self, ins: Instruction, receipt: Receipt | None) -> None:
        """COMPLETED with the on-chain receipt, or FAILED when the chain refused the move."""
        if receipt is not None:
            ins.receipt = receipt
        self._status(ins, _S.FAILED if receipt is None else _S.COMPLETED)
        assert ins.on_chain is not None
        ins.on_chain.succeed()

    def _advance(self, ins: Instruction, planned: InstructionStatus) -> bool:
        """Emit the next event; False when the instruction stops here (final or silent)."""
        status = self._next_event(ins, planned)
        if status is None:
            self._log_silent(ins)
            return False
        self._status(ins, status)
        return status not in FINAL

    def _log_silent(self, ins: Instruction) -> None:
        self.world.log.append("issuer.silent", issuerId=self.issuer_id, instructionId=ins.id,
                              status=ins.status.value)

    def _on_chain_step(self, ins: Instruction) -> Callable[[], Receipt]:
        """The ledger's applying step for the instruction's burn or mint, to call at
        finality; ``LedgerRefused`` at once for a Mode 2 burn with no lock to burn."""
        body, tx = ins.body, ins.transaction_id
        ledger = self.ledger
        if ins.kind == "mint":
            money = Money.of(body["amount"], self._asset(body["assetCode"]))
            return lambda: ledger.mint_final(tx, body["targetWalletId"], money)
        if ins.mode is SettlementMode.MODE_2:  # burns only what the service locked
            lock = ledger.locks.get(tx)
            if lock is None or lock.account != body["sourceWalletId"]:
                raise LedgerRefused(f"no lock for {tx} on {body['sourceWalletId']}")
            return lambda: ledger.burn_locked_final(tx)
        money = Money.of(body["amount"], self._asset(body["assetCode"]))
        return lambda: ledger.burn_final(tx, body["sourceWalletId"], money)

    def _asset(self, code: str) -> Any:
        return self.world.asset_of(self.issuer_id, code)

    def _status(self, ins: Instruction, status: InstructionStatus) -> None:
        """The status change and its record; a change after RECEIVED (always in a step of
        the issuer's progress) owes a status webhook when the profile lists SIGNED_WEBHOOK."""
        ins.status = status
        self.world.log.append("issuer.instruction", issuerId=self.issuer_id,
                              instructionId=ins.id, transactionId=ins.transaction_id,
                              leg=ins.kind, status=_STATUS_TEXT[status])
        if _WEBHOOK in ins.feedback and status is not _RECEIVED:
            self._webhooks_due.append(ins.snapshot())

    def _send_webhooks(self) -> None:
        """Send each status webhook the step that just ran owes, after the sampled webhook
        latency. A process started at the status change would draw that latency in its
        first step, which SimPy runs (an urgent event) right after this step, before
        anything else of this instant (a step is an ordinary event's callback and schedules
        no urgent event): drawn here, at the step's end, each keeps its place in the
        issuer's stream and its timeout its place in the queue."""
        due, self._webhooks_due = self._webhooks_due, []
        env, latency = self.world.env, self.behaviour.webhook_latency
        for snap in due:
            env.timeout(latency.sample(self._rng_latency)).callbacks.append(
                partial(self._send_webhook, snap))

    def _send_webhook(self, snap: Snapshot, _: simpy.Event) -> None:
        """The issuer's status webhook to the service: a signed prompt, nothing more."""
        instruction_id, finalized_at = snap.instruction_id, snap.finalized_at_ms
        raw = webhook_body(instruction_id, _STATUS_TEXT[snap.status], snap.tx_hash,
                           snap.ledger_sequence,
                           None if finalized_at is None
                           else render_iso(self.world.epoch_ms, finalized_at))
        t = (self.world.epoch_ms + self.world.now_ms) // 1000
        header = signature_header(self.webhook_secret, t, raw)
        self.world.issuer_inbox.deliver(self.issuer_id, header, raw, instruction_id)
