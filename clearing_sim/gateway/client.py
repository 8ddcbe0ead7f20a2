"""The HTTP issuer gateway: the engine's seam (``sim.gateway.Gateway``) on a real gateway.

Public names: ``CallbackQueue``, ``HttpGateway``.

How virtual time meets wall time (docs/conformance.md): a call is made at the virtual instant
the saga makes it and the world does not move while it waits for the answer, so an advance
waits for real answers. In the shim (``World.external`` set) the call is handed out and made
off the event loop while the advance pauses at that instant (``clearing_sim.http.clock``);
in the kit and ``clearing-sim run`` it is made inside the step. That holds for every call:
the provider-state set-up call of ``arm`` is handed out when the operator arms (the service
route cannot wait), ahead of any call the engine makes after it, and logged as
``issuer.armed`` when its answer is fed in; the last replay of a never-answered POST when an
instruction expires is made by ``expire``, a process like the other routes. A read that
finds an unchanged, non-final status waits up to ``patience_ms`` of wall time for it to
move (the gateway is given real time to work); once an instruction has been quiet that
long, later reads answer at once, so polling runs on virtual time and a silence beyond
``approvalSlaSeconds`` takes milliseconds of wall time.

Answers are untrusted (``answers``): a timeout, a 5xx, a malformed answer or an answer
larger than the bound is logged (``issuer.http``, with request and response), its refusal
too (``issuer.answer_refused``, naming the rule and the field), and counts as no news: the
saga keeps polling and parks at its deadline. A status change the spec forbids (backwards,
out of a final status, REJECTED after APPROVED, or, in Mode 2, an answer given before the
execute request went out that says EXECUTING or COMPLETED or carries an on-chain hash) is
logged as ``issuer.protocol_violation`` and read as FAILED: the transaction parks and nothing
is undone, since the issuer can no longer be trusted about the asset. A POST that got no
answer is retried on each later read with the same idempotency key and body (a replay the
spec makes safe). With ``execute_hold_ms`` (the kit's watch) a Mode 2 execute call is held
back that much wall time after the creation was answered while the instruction is read
(``_hold_execute``). The ledger stays the simulated one: a COMPLETED instruction's burn or mint
and a refund are mirrored on it when first seen; the hash the saga records is the issuer's.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Generator
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

import simpy

from clearing_sim.domain.ids import TransactionId, instruction_reference
from clearing_sim.domain.instruction import FINAL, InstructionStatus, Outcome
from clearing_sim.domain.money import Money
from clearing_sim.domain.profile import CustodyModel, FeedbackChannel, SettlementMode
from clearing_sim.domain.timefmt import render_iso
from clearing_sim.gateway.answers import (
    CONFLICTED,
    UNANSWERED,
    moved_before_execute,
    read_created,
    read_refund,
    read_snapshot,
    step_allowed,
    step_problem,
)
from clearing_sim.gateway.transport import Call, GatewayConfig, Transport
from clearing_sim.sim.issuer import (
    COMPENSATION_REASON,
    IdempotencyConflict,
    Instruction,
    RefundResult,
    Snapshot,
)
from clearing_sim.sim.ledger import ChainLedger, LedgerRefused

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["CallbackQueue", "HttpGateway"]

Proc = Generator[simpy.Event, Any, Any]
_S = InstructionStatus
STATE_NAMES = {Outcome.REJECTED: "instruction will be rejected",
               Outcome.SILENCE: "instruction will stay silent",
               Outcome.FAILED: "instruction will fail",
               Outcome.COMPLETE: "instruction will complete"}
BODY_LOG_MAX = 2_000
HOLD_READ_S = 0.05  # between the reads of an instruction whose execute is held


def _segment(instruction_id: str) -> str:
    """An issuer's instruction id as one path segment (RFC 3986 §3.3: percent-encoded)."""
    return quote(instruction_id, safe="")


class CallbackQueue:
    """Status webhooks that arrived over HTTP (any thread), waiting for the world to take
    them: ``(signature header, raw body, arrival unix seconds)``."""

    KEPT_MAX = 1_000  # a kit run's issuer sends a few dozen; past this: refused, not kept

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[str | None, bytes, int]] = []
        self.received: list[tuple[str | None, bytes, int]] = []  # all, for evidence
        self.arrived_mono: list[float] = []  # monotonic s of each of ``received``

    def put(self, signature: str | None, raw: bytes) -> bool:
        """Queue one; False (not kept) once ``KEPT_MAX`` have arrived."""
        item = (signature, raw, int(time.time()))
        with self._lock:
            if len(self.received) >= self.KEPT_MAX:
                return False
            self._items.append(item)
            self.received.append(item)
            self.arrived_mono.append(time.monotonic())
        return True

    def take(self) -> list[tuple[str | None, bytes, int]]:
        with self._lock:
            items, self._items = self._items, []
        return items


class HttpGateway:
    """A real issuer's gateway behind the engine's seam."""

    def __init__(self, world: World, issuer_id: str, name: str, ledger: ChainLedger,
                 config: GatewayConfig, callbacks: CallbackQueue | None = None) -> None:
        self.world = world
        self.issuer_id = issuer_id
        self.name = name
        self.ledger = ledger
        self.config = config
        self.webhook_secret = config.webhook_secret
        self.callbacks = callbacks
        self.transport = Transport(config, self._logged)
        self.instructions: dict[str, Instruction] = {}
        self._by_key: dict[str, Instruction] = {}
        self._real_id: dict[str, str] = {}  # placeholder id → the issuer's id
        self._quiet_since: dict[str, float] = {}  # instruction → wall time of its last change
        self._violations: set[str] = set()
        self._mirrored: set[str] = set()
        self._execute_asked: set[str] = set()  # ids (placeholders too) the saga executed
        self.execute_sent_at: dict[str, float] = {}  # instruction → monotonic s of its POST
        self.created_at: dict[str, float] = {}  # instruction → monotonic s of its creation
        self.holds: dict[str, tuple[int, str]] = {}  # instruction → (reads made while its
        # execute was held, the status it stood at when the execute request went out)
        self.moved_early: list[tuple[str, str, str]] = []  # (instruction, tx, what it said)
        self._treasuries: dict[str, str] = {}

    # bookkeeping ---------------------------------------------------------------------------
    def _logged(self, call: Call) -> None:
        self.world.log.append("issuer.http", issuerId=self.issuer_id, method=call.method,
                              url=call.url, status=call.status, error=call.error,
                              transactionId=call.tag, elapsedMs=round(call.elapsed_ms),
                              requestBody=call.request_body[:BODY_LOG_MAX],
                              responseBody=call.response_body[:BODY_LOG_MAX])

    def take_callbacks(self) -> None:
        """Hand status webhooks that arrived over HTTP to the inbox, at this virtual instant,
        verified against their wall arrival time (a real gateway signs with a real clock)."""
        if self.callbacks is None:
            return
        for signature, raw, arrived_s in self.callbacks.take():
            self.world.issuer_inbox.receive(self.issuer_id, signature, raw, now_s=arrived_s)

    def _url(self, path: str) -> str:
        return self.config.base + path

    def _call(self, method: str, url: str, body: dict[str, Any] | None = None,
              tag: str | None = None, *,
              delay_s: float = 0.0) -> Generator[simpy.Event, Any, Call]:
        """One HTTP call: handed out to ``World.external`` when it is set (the shim runs it
        off its event loop while the world waits at this virtual instant), else made here,
        inside the step."""
        handed = self._hand_out(method, url, body, tag, delay_s)
        if handed is None:
            if delay_s > 0:
                time.sleep(delay_s)
            return self.transport.request(method, url, body, tag)
        return self.transport.record((yield handed))

    def _hand_out(self, method: str, url: str, body: dict[str, Any] | None, tag: str | None,
                  delay_s: float = 0.0) -> simpy.Event | None:
        """The call handed to ``World.external`` (its event succeeds with the ``Call``);
        None when there is no one to hand it to."""
        external = self.world.external
        if external is None:
            return None
        transport = self.transport
        return external.submit(lambda: transport.send(method, url, body, tag, delay_s))

    def _observe(self, ins: Instruction, status: InstructionStatus) -> None:
        if status is ins.status and ins.original is not None:
            return
        ins.status = status
        self._quiet_since[ins.id] = time.monotonic()
        self.world.log.append("issuer.instruction", issuerId=self.issuer_id,
                              instructionId=ins.id, transactionId=ins.transaction_id,
                              leg=ins.kind, status=status.value)

    def _refused(self, call: Call, problem: str, instruction_id: str | None = None) -> None:
        """An answer read and refused: evidence of the rule the gateway broke (the kit names
        it), logged once per answer."""
        self.world.log.append("issuer.answer_refused", issuerId=self.issuer_id,
                              transactionId=call.tag, instructionId=instruction_id,
                              method=call.method, url=call.url, status=call.status,
                              problem=problem)

    def _violation(self, ins: Instruction, problem: str) -> None:
        self._violations.add(ins.id)
        self.world.log.append("issuer.protocol_violation", issuerId=self.issuer_id,
                              instructionId=ins.id, transactionId=ins.transaction_id,
                              problem=problem)

    # the seam ------------------------------------------------------------------------------
    def treasury_for(self, member_id: str, custody: CustodyModel) -> str:
        key = member_id if custody is CustodyModel.PER_MEMBER_ISSUER_WALLET else "pooled"
        if key not in self._treasuries:
            self._treasuries[key] = self.ledger.open_account(f"{self.name}:treasury:{key}")
        return self._treasuries[key]

    def trigger_amount(self, outcome: Outcome) -> Decimal | None:
        triggers = self.config.triggers
        return None if triggers is None else triggers.get(outcome)

    def arm(self, transaction_id: str, outcome: Outcome) -> None:
        """Through the provider-state set-up URL when there is one (Pact's set-up call);
        otherwise the transaction's amount was a trigger value, or nothing arms it. The
        set-up call is handed out at once when ``World.external`` is set (made before any
        call the engine makes after it; ``issuer.armed`` is logged when its answer is fed
        in), else made here."""
        url = self.config.provider_states_url
        if url is None:
            self._armed(transaction_id, outcome, None)
            return
        body = {"consumer": "clearing-sim", "action": "setup", "state": STATE_NAMES[outcome],
                "params": {"reference": instruction_reference(TransactionId(transaction_id))}}
        handed = self._hand_out("POST", url, body, transaction_id)
        if handed is None:
            self._armed(transaction_id, outcome,
                        self.transport.request("POST", url, body, transaction_id))
            return

        def answered(event: simpy.Event) -> None:
            self._armed(transaction_id, outcome, self.transport.record(cast(Call, event.value)))

        handed.callbacks.append(answered)

    def _armed(self, transaction_id: str, outcome: Outcome, call: Call | None) -> None:
        if call is not None:
            via = "provider-state" if call.status is not None and call.status < 300 \
                else "provider-state-refused"
        else:
            via = "trigger" if self.trigger_amount(outcome) is not None else "none"
        self.world.log.append("issuer.armed", issuerId=self.issuer_id,
                              transactionId=transaction_id, outcome=outcome.value, via=via)

    def forget(self, transaction_id: str) -> list[str]:
        mine = [i for i in self.instructions.values() if i.transaction_id == transaction_id]
        for ins in mine:
            del self.instructions[ins.id]
            self._by_key.pop(ins.body["idempotencyKey"], None)
        return [ins.id for ins in mine]

    def post_instruction(self, kind: str, body: dict[str, str], mode: SettlementMode,
                         feedback: tuple[FeedbackChannel, ...]) -> Proc:
        self.take_callbacks()
        key = body["idempotencyKey"]
        known = self._by_key.get(key)
        transaction_id = str(uuid.UUID(hex=body["reference"]))
        call = yield from self._call("POST", self._url(f"/{kind}-instructions"), body,
                                     tag=transaction_id)
        if known is not None:  # a replay: the issuer's answer, as it gave it
            if call.status == 409:
                raise IdempotencyConflict(key)
            created = read_created(call)
            if isinstance(created, str):
                self._refused(call, created, known.id)
                return Snapshot(known.id, known.status)
            return Snapshot(created[0], created[1])
        ins = Instruction(f"{UNANSWERED}{key}", kind, transaction_id, mode, dict(body),
                          feedback)
        self._by_key[key] = ins
        self._adopt(ins, call)
        assert ins.original is not None
        return ins.original

    def _adopt(self, ins: Instruction, call: Call) -> None:
        """Record the instruction under the issuer's id once a creation answer names it."""
        created = read_created(call)
        if isinstance(created, str):
            self._refused(call, created)
            if ins.original is None:
                self.instructions[ins.id] = ins
                ins.original = Snapshot(ins.id, _S.RECEIVED)
            return
        real_id, status = created
        holder = self.instructions.get(real_id)
        if holder is not None and holder is not ins:  # one id, two instructions
            self._conflicting(ins, real_id)
            return
        if ins.id.startswith(UNANSWERED):
            self._real_id[ins.id] = real_id
            self.instructions.pop(ins.id, None)
        ins.id = real_id
        self.instructions[real_id] = ins
        self.created_at.setdefault(real_id, time.monotonic())
        self._observe(ins, status)
        if ins.original is None:
            ins.original = Snapshot(real_id, status)
        self._check_two_phase(ins, call)

    def _conflicting(self, ins: Instruction, real_id: str) -> None:
        """The creation answer named an instruction id another instruction already holds: the
        issuer answered one instruction for two (a completion would settle both on one
        burn). The newcomer is kept under an id of its own and read as FAILED: its
        transaction parks; the first instruction is left as it is."""
        conflicted = f"{CONFLICTED}{ins.body['idempotencyKey']}"
        if ins.id.startswith(UNANSWERED):  # the saga may hold the placeholder
            self._real_id[ins.id] = conflicted
            self.instructions.pop(ins.id, None)
        ins.id = conflicted
        self.instructions[ins.id] = ins
        if ins.original is None:
            ins.original = Snapshot(ins.id, _S.RECEIVED)
        self._violation(ins, f"the creation answer names instruction {real_id!r}, which "
                             f"another instruction ({self.instructions[real_id].kind} of "
                             f"{self.instructions[real_id].transaction_id}) already holds")

    def _check_two_phase(self, ins: Instruction, call: Call) -> None:
        """Mode 2 moves nothing before execute: an answer given before the execute request
        went out that says EXECUTING, COMPLETED or carries an on-chain hash is a violation
        (the issuer moved the asset without the irrevocable signal). An answer to a read
        made after the request is not judged here: a gateway may move as execute arrives."""
        if ins.mode is not SettlementMode.MODE_2 or ins.id in self.execute_sent_at:
            return
        moved = moved_before_execute(call.parsed())
        if moved is not None:
            self.moved_early.append((ins.id, ins.transaction_id,
                                     f"{call.method} {call.url} answered {moved}"))
            self._violation(ins, moved)

    def _resolve(self, instruction_id: str) -> Generator[simpy.Event, Any, Instruction]:
        """The instruction behind an id; a placeholder is retried as a replay first."""
        real = self._real_id.get(instruction_id, instruction_id)
        ins = self.instructions.get(real) or self.instructions[instruction_id]
        if ins.id.startswith(UNANSWERED):
            call = yield from self._call("POST", self._url(f"/{ins.kind}-instructions"),
                                         ins.body, tag=ins.transaction_id)
            self._adopt(ins, call)
            if not ins.id.startswith(UNANSWERED) and instruction_id in self._execute_asked:
                yield from self._send_execute(ins)
        return ins

    def get(self, instruction_id: str) -> Proc:
        self.take_callbacks()
        ins = yield from self._resolve(instruction_id)
        if ins.id.startswith(UNANSWERED):
            return Snapshot(instruction_id, _S.RECEIVED)
        if ins.id.startswith(CONFLICTED):  # no id of the issuer's to read it by
            return Snapshot(instruction_id, _S.FAILED)
        snap = yield from self._read_patiently(ins)
        if ins.id in self._violations:
            return Snapshot(instruction_id, _S.FAILED)
        if snap.status is _S.COMPLETED and ins.id not in self._mirrored:
            self._mirrored.add(ins.id)
            try:
                receipt = yield from self._mirror(ins)
            except LedgerRefused as refused:
                self._violation(ins, f"COMPLETED, but the simulated ledger refuses: {refused}")
                return Snapshot(instruction_id, _S.FAILED)
            ins.receipt = receipt
        return Snapshot(instruction_id, snap.status, snap.tx_hash, snap.ledger_sequence,
                        self.world.now_ms if snap.status is _S.COMPLETED else None)

    def _read_patiently(self, ins: Instruction) -> Generator[simpy.Event, Any, Snapshot]:
        patience_s = self.config.patience_ms / 1000
        delay_s = 0.0
        while True:
            snap, changed = yield from self._read_once(ins, delay_s)
            if snap is None:  # no news: the saga keeps its rules (poll, park)
                return Snapshot(ins.id, ins.status)
            if ins.id in self._violations:
                return snap
            quiet_for = time.monotonic() - self._quiet_since.get(ins.id, 0.0)
            if changed or snap.status in FINAL or quiet_for >= patience_s:
                return snap
            delay_s = min(0.02, patience_s - quiet_for)  # then read again

    def _read_once(self, ins: Instruction, delay_s: float = 0.0
                   ) -> Generator[simpy.Event, Any, tuple[Snapshot | None, bool]]:
        """One GET of the instruction, judged: (its snapshot or None when the answer was
        refused, whether its status changed)."""
        call = yield from self._call("GET", self._url(f"/instructions/{_segment(ins.id)}"),
                                     tag=ins.transaction_id, delay_s=delay_s)
        snap = read_snapshot(call, ins.id)
        self._check_two_phase(ins, call)
        if isinstance(snap, str):
            self._refused(call, snap, ins.id)
            return None, False
        if not step_allowed(ins.status, snap.status):
            self._violation(ins, step_problem(ins.status, snap.status))
            return snap, False
        changed = snap.status is not ins.status
        self._observe(ins, snap.status)
        return snap, changed

    def read(self, instruction_id: str) -> simpy.Event:
        """``get`` in a process of its own: the process is the event."""
        return self.world.env.process(self.get(instruction_id))

    def execute(self, instruction_id: str) -> Proc:
        self._execute_asked.add(instruction_id)
        ins = yield from self._resolve(instruction_id)
        if not ins.id.startswith(UNANSWERED) and ins.id not in self.execute_sent_at:
            yield from self._send_execute(ins)
        return Snapshot(instruction_id, ins.status)

    def _send_execute(self, ins: Instruction) -> Generator[simpy.Event, Any, None]:
        self._execute_asked.add(ins.id)
        yield from self._hold_execute(ins)
        self.execute_sent_at[ins.id] = time.monotonic()
        yield from self._call("POST",
                              self._url(f"/instructions/{_segment(ins.id)}/execute"), {},
                              tag=ins.transaction_id)

    def _hold_execute(self, ins: Instruction) -> Generator[simpy.Event, Any, None]:
        """The kit's watch (``execute_hold_ms``, 0 elsewhere): the execute call goes out no
        sooner than that much wall time after the instruction's creation was answered, and
        meanwhile the instruction is read every ``HOLD_READ_S``, the last read just before
        the call. A gateway that moves in that window is seen moving before execute,
        whatever its latency; virtual time does not move while the kit holds."""
        hold_s = self.config.execute_hold_ms / 1000
        if hold_s <= 0 or ins.mode is not SettlementMode.MODE_2:
            return
        ends = self.created_at.get(ins.id, time.monotonic()) + hold_s
        delay_s = 0.0
        while ins.id not in self._violations:
            yield from self._read_once(ins, delay_s)
            self.holds[ins.id] = (self.holds.get(ins.id, (0, ""))[0] + 1, ins.status.value)
            left_s = ends - time.monotonic()
            if left_s <= 0:
                return
            delay_s = min(HOLD_READ_S, left_s)

    def expire(self, instruction_id: str) -> Proc:
        """No route closes an instruction at a real issuer: it is closed on our side unless
        it was last seen moving on chain (EXECUTING), when its outcome must be awaited. A
        never-answered POST is replayed once more first (handed out like any call)."""
        ins = yield from self._resolve(instruction_id)
        if ins.status in FINAL or ins.expired:
            return True
        if ins.status is _S.EXECUTING:
            return False
        ins.expired = True
        self.world.log.append("issuer.expired", issuerId=self.issuer_id,
                              instructionId=ins.id, status=ins.status.value)
        return True

    def refund(self, transaction_id: str, reason: str, refund_to: str, from_wallet: str,
               money: Money) -> Proc:
        url = self.config.refund_url or self._url("/treasury/refunds")
        call = yield from self._call("POST", url, {
            "transactionId": transaction_id, "reason": reason,
            "refundToWalletId": refund_to}, tag=transaction_id)
        answer = read_refund(call, transaction_id)
        if isinstance(answer, str):
            self._refused(call, answer)
        elif answer[0] != "refunded":
            self._refused(call, f"the refund answered status {answer[0]!r}, not refunded: the "
                                "tokens were not returned to the sender")
        status, tx_hash = ("unanswered", "") if isinstance(answer, str) else answer
        if status == "refunded":
            try:
                if reason == COMPENSATION_REASON:  # the issuer re-issues a burned source
                    yield from self.ledger.mint(transaction_id, refund_to, money)
                else:
                    yield from self.ledger.transfer(transaction_id, from_wallet, refund_to,
                                                    money)
            except LedgerRefused:
                status = "not_refundable"
        result = RefundResult(transaction_id, status, tx_hash if status == "refunded" else "",
                              self.world.now_ms)
        self.world.log.append("issuer.refund", issuerId=self.issuer_id,
                              transactionId=transaction_id, reason=reason,
                              refundToWalletId=refund_to, status=result.status,
                              refundTxHash=result.refund_tx_hash,
                              refundedAt=render_iso(self.world.epoch_ms, result.refunded_at_ms))
        return result

    # the simulated chain ------------------------------------------------------------------
    def _mirror(self, ins: Instruction) -> Proc:
        body, tx, ledger = ins.body, ins.transaction_id, self.ledger
        asset = self.world.asset_of(self.issuer_id, body["assetCode"])
        money = Money.of(body["amount"], asset)
        if ins.kind == "mint":
            return (yield from ledger.mint(tx, body["targetWalletId"], money))
        if ins.mode is SettlementMode.MODE_2:
            lock = ledger.locks.get(tx)
            if lock is None or lock.account != body["sourceWalletId"]:
                raise LedgerRefused(f"no lock for {tx} on {body['sourceWalletId']}")
            return (yield from ledger.burn_locked(tx))
        return (yield from ledger.burn(tx, body["sourceWalletId"], money))

