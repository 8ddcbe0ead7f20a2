"""The reference issuer's instructions and their progress, in wall time on the server's loop.

Public names: ``GatewaySettings``, ``RefInstruction``, ``ReferenceIssuer``, ``StateProblem``.

An instruction advances RECEIVED → PENDING_APPROVAL → APPROVED (or REJECTED: the decision) →
EXECUTING → COMPLETED (or FAILED) like the simulated issuer's. In Mode 2 it holds where
``GatewaySettings.hold_at`` says until the execute call arrives: by default at
PENDING_APPROVAL, the spec's words ("In Mode 2 the issuer stops at RECEIVED or
PENDING_APPROVAL and does not execute until the execute call arrives"), deciding after
execute; with ``hold_at="APPROVED"`` it decides first and holds at APPROVED. Its outcome is
armed by a provider state (by ``reference``, or for the next instruction) or by a trigger
amount; otherwise it completes. After every status change past RECEIVED it sends a signed
status webhook when it was given a ``webhookUrl`` (an https one verified against
``webhook_ca`` when given). Ids, hashes and latencies come from one seeded
``random.Random``, so a given seed answers the same ids in the same order. Defects
(``defects``) each break one rule on purpose.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
import ssl
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import httpx
from attrs import define, field, frozen

from clearing_sim.domain.instruction import FINAL, InstructionStatus, Outcome
from clearing_sim.domain.money import plain_decimal
from clearing_sim.domain.signing import signature_header
from clearing_sim.gateway.reference.defects import Defect
from clearing_sim.tls import client_context

__all__ = ["HOLD_POINTS", "GatewaySettings", "RefInstruction", "ReferenceIssuer",
           "StateProblem"]

_S = InstructionStatus
TRIGGERS_DEFAULT = {Outcome.REJECTED: Decimal("2.22"), Outcome.SILENCE: Decimal("3.33"),
                    Outcome.FAILED: Decimal("4.44")}
STATES = {"instruction will be rejected": Outcome.REJECTED,
          "instruction will stay silent": Outcome.SILENCE,
          "instruction will fail": Outcome.FAILED,
          "instruction will complete": Outcome.COMPLETE}
CALLBACKS_STATE = "callbacks go to"
#: where a Mode 2 gateway waits for execute: the spec's words first (the default)
HOLD_POINTS = ("PENDING_APPROVAL", "APPROVED")
COMPENSATION_REASON = "mint_rejected"  # re-issue a burned source (sim.issuer's reason)


class StateProblem(Exception):
    """A request the reference gateway refuses (400/404/409 with this message)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@frozen
class GatewaySettings:
    seed: int = 0
    mode: str = "MODE_3"  # MODE_2 waits for execute
    hold_at: str = field(default="PENDING_APPROVAL",
                         validator=attrs.validators.in_(HOLD_POINTS))  # Mode 2 only
    step_ms: int = 20  # mean wall latency of each status step
    webhook_url: str | None = None
    signing_secret: str | None = None
    defects: frozenset[Defect] = frozenset()
    triggers: dict[Outcome, Decimal] = field(factory=lambda: dict(TRIGGERS_DEFAULT))
    webhook_ca: Path | None = None  # verify an https webhook receiver against this CA


@define
class RefInstruction:
    id: str
    kind: str
    body: dict[str, str]
    outcome: Outcome
    status: InstructionStatus = _S.RECEIVED
    tx_hash: str | None = None
    ledger_sequence: int | None = None
    finalized_at: str | None = None
    executed: asyncio.Event = field(factory=asyncio.Event)
    expired: bool = False
    answer: dict[str, Any] = field(factory=dict)  # the creation response, on every replay

    def wire(self, defects: frozenset[Defect] = frozenset()) -> dict[str, Any]:
        """The instruction as read and as a status webhook carries it (with ``defects``
        that change its shape applied)."""
        status = self.status.value
        sequence: int | str | None = self.ledger_sequence
        if Defect.STATUS_LOWERCASE in defects:
            status = status.lower()
        if Defect.LEDGER_SEQUENCE_STRING in defects and sequence is not None:
            sequence = str(sequence)
        return {"instructionId": self.id, "status": status, "reference": self.body["reference"],
                "onchain": {"txHash": self.tx_hash, "ledgerSequence": sequence},
                "finalizedAt": self.finalized_at}


def _now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ReferenceIssuer:
    """All state of one reference gateway; its coroutines run on the server's event loop."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self.webhook_url = settings.webhook_url
        self.signing_secret = settings.signing_secret
        self.instructions: dict[str, RefInstruction] = {}
        self.by_key: dict[str, str] = {}
        self.armed: dict[str, Outcome] = {}  # reference → outcome
        self.armed_next: list[Outcome] = []
        self.callbacks_sent: list[dict[str, Any]] = []
        self._rng = random.Random(settings.seed)
        self._sequence = 1_000
        self._tasks: set[asyncio.Task[None]] = set()
        # an https receiver's certificate is checked against webhook_ca when given (a test
        # CA), else against the system store, as any HTTPS client would (TlsProblem if the
        # CA file is unusable)
        self._webhook_verify: ssl.SSLContext | bool = True if settings.webhook_ca is None \
            else client_context(settings.webhook_ca)

    def has(self, defect: Defect) -> bool:
        return defect in self.settings.defects

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    # provider states ---------------------------------------------------------------------
    def set_state(self, state: str, params: dict[str, Any]) -> dict[str, Any]:
        if state == CALLBACKS_STATE:
            url, secret = params.get("webhookUrl"), params.get("signingSecret")
            if not isinstance(url, str) or not isinstance(secret, str):
                raise StateProblem(400, "invalid_state", "callbacks go to: give params "
                                   "webhookUrl and signingSecret (strings)")
            self.webhook_url, self.signing_secret = url, secret
            return {"state": state, "webhookUrl": url}
        outcome = STATES.get(state)
        if outcome is None:
            raise StateProblem(400, "unknown_state", f"unknown provider state {state!r}; "
                               f"known: {sorted([*STATES, CALLBACKS_STATE])}")
        reference = params.get("reference")
        if reference is None:
            self.armed_next.append(outcome)
        elif isinstance(reference, str):
            self.armed[reference] = outcome
        else:
            raise StateProblem(400, "invalid_state", "params.reference must be a string")
        return {"state": state, "reference": reference, "outcome": outcome.value}

    # routes ------------------------------------------------------------------------------
    def create(self, kind: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        clean = _instruction_body(kind, body)
        key = clean["idempotencyKey"]
        known = self.by_key.get(key)
        if known is not None and not self.has(Defect.REPLAY_CREATES_SECOND):
            original = self.instructions[known]
            if original.body != clean or original.kind != kind:
                raise StateProblem(409, "idempotency_conflict",
                                   "idempotencyKey reused with a different body")
            if self.has(Defect.REPLAY_ANSWERS_CURRENT):  # the defect: not the original
                return 200, {**original.answer,
                             "status": original.wire(self.settings.defects)["status"]}
            return 200, original.answer
        ins = RefInstruction(self._uuid(), kind, clean, self._outcome(clean))
        self.instructions[ins.id] = ins
        self.by_key[key] = ins.id
        ins.answer = {"instructionId": ins.id, "status": ins.wire(self.settings.defects)["status"]}
        self._spawn(self._progress(ins))
        return 201, ins.answer

    def read(self, instruction_id: str) -> dict[str, Any]:
        return self._find(instruction_id).wire(self.settings.defects)

    def execute(self, instruction_id: str) -> dict[str, Any]:
        ins = self._find(instruction_id)
        ins.executed.set()
        return ins.wire(self.settings.defects)

    def refund(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        tx_id = body.get("transactionId")
        refund_to = body.get("refundToWalletId")
        if not isinstance(tx_id, str) or not isinstance(refund_to, str) \
                or not isinstance(body.get("reason"), str):
            raise StateProblem(400, "invalid_body", "transactionId, reason and "
                               "refundToWalletId are required strings")
        if not _canonical_uuid(tx_id):
            raise StateProblem(400, "invalid_body", "transactionId is not a UUID")
        reference = uuid.UUID(tx_id).hex
        mine = [i for i in self.instructions.values() if i.body["reference"] == reference]
        if self.has(Defect.REFUND_NEVER_COMES):
            return 202, {"transactionId": tx_id, "status": "pending"}
        burned = any(i.kind == "burn" and i.status is _S.COMPLETED for i in mine)
        if burned and body["reason"] != COMPENSATION_REASON:
            return 409, {"transactionId": tx_id, "status": "not_refundable"}
        for ins in mine:
            ins.expired = True
        return 200, {"transactionId": tx_id, "status": "refunded",
                     "refundTxHash": self._rng.getrandbits(256).to_bytes(32, "big").hex(),
                     "refundedAt": _now_iso()}

    def _find(self, instruction_id: str) -> RefInstruction:
        ins = self.instructions.get(instruction_id)
        if ins is None:
            raise StateProblem(404, "instruction_not_found", f"no instruction {instruction_id}")
        return ins

    def _outcome(self, body: dict[str, str]) -> Outcome:
        outcome = self.armed.pop(body["reference"], None)
        if outcome is None and self.armed_next:
            outcome = self.armed_next.pop(0)
        if outcome is None:
            amount = Decimal(body["amount"])
            outcome = next((o for o, a in self.settings.triggers.items() if a == amount),
                           Outcome.COMPLETE)
        if outcome is Outcome.REJECTED and self.has(Defect.IGNORES_REJECTION):
            return Outcome.COMPLETE
        if outcome is Outcome.SILENCE and self.has(Defect.FAILS_INSTEAD_OF_SILENCE):
            return Outcome.FAILED
        return outcome

    # progress ----------------------------------------------------------------------------
    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _step(self) -> None:
        mean = self.settings.step_ms
        await asyncio.sleep(self._rng.uniform(mean * 0.5, mean * 1.5) / 1000)

    async def _progress(self, ins: RefInstruction) -> None:
        await self._step()
        if ins.outcome is Outcome.SILENCE or ins.expired:
            return
        await self._set(ins, _S.PENDING_APPROVAL)
        await self._hold(ins, "PENDING_APPROVAL")
        await self._step()
        if _closed(ins):
            return
        if ins.outcome is Outcome.REJECTED:  # the decision comes before anything moves
            if self.has(Defect.REJECTS_AFTER_APPROVAL):  # the defect: approve, then reject
                await self._set(ins, _S.APPROVED)
                await self._step()
            await self._set(ins, _S.REJECTED)
            return
        await self._set(ins, _S.APPROVED)
        await self._hold(ins, "APPROVED")
        await self._step()
        if _closed(ins):
            return
        await self._set(ins, _S.EXECUTING)
        await self._step()
        if ins.outcome is Outcome.FAILED:
            await self._set(ins, _S.FAILED)
            return
        self._sequence += 1
        if not self.has(Defect.COMPLETED_WITHOUT_PROOF):
            ins.tx_hash = self._rng.getrandbits(256).to_bytes(32, "big").hex()
            ins.ledger_sequence = self._sequence
        ins.finalized_at = _now_iso()
        await self._set(ins, _S.COMPLETED)

    async def _hold(self, ins: RefInstruction, point: str) -> None:
        """Mode 2: wait here for the execute call when this is the hold point (the defect
        ``moves-before-execute`` never waits)."""
        if self.settings.mode == "MODE_2" and self.settings.hold_at == point \
                and not self.has(Defect.MOVES_BEFORE_EXECUTE):
            await ins.executed.wait()

    async def _set(self, ins: RefInstruction, status: InstructionStatus) -> None:
        assert ins.status not in FINAL
        ins.status = status
        if self.webhook_url is not None:
            self._spawn(self._callback(ins.wire(self.settings.defects)))

    async def _callback(self, wire: dict[str, Any]) -> None:
        body = {k: wire[k] for k in ("instructionId", "status", "onchain", "finalizedAt")}
        raw = json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json"}
        secret = self.signing_secret
        if self.has(Defect.WRONG_SECRET_CALLBACKS):
            secret = "whsec_not-the-issued-secret"
        if secret is not None and not self.has(Defect.UNSIGNED_CALLBACKS):
            t = int(dt.datetime.now(dt.UTC).timestamp())
            headers["Service-Signature"] = signature_header(secret, t, raw)
        assert self.webhook_url is not None
        record: dict[str, Any] = {"instructionId": body["instructionId"],
                                  "status": body["status"]}
        try:
            async with httpx.AsyncClient(timeout=5, verify=self._webhook_verify) as client:
                response = await client.post(self.webhook_url, content=raw, headers=headers)
            record["answer"] = response.status_code
        except httpx.HTTPError as error:
            record["error"] = str(error) or type(error).__name__
        self.callbacks_sent.append(record)



def _closed(ins: RefInstruction) -> bool:
    return ins.expired


def _canonical_uuid(text: str) -> bool:
    """A UUID in its one hyphenated form (either case): not braces, ``urn:uuid:`` or 32 bare
    hex digits, which ``uuid.UUID`` also reads."""
    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False


def _instruction_body(kind: str, body: dict[str, Any]) -> dict[str, str]:
    fields = ["idempotencyKey", "reference", "sourceWalletId", "amount", "assetCode"]
    if kind == "mint":
        fields.append("targetWalletId")
    missing = [f for f in fields if not isinstance(body.get(f), str) or not body[f]]
    if missing:
        raise StateProblem(400, "invalid_body", f"required string fields missing: {missing}")
    extra = sorted(set(body) - set(fields))
    if extra:
        raise StateProblem(400, "invalid_body", f"unknown fields: {extra}")
    if len(body["reference"]) > 35:
        raise StateProblem(400, "invalid_body", "reference is longer than 35 characters")
    if not _canonical_uuid(body["idempotencyKey"]):
        raise StateProblem(400, "invalid_body", "idempotencyKey must be a UUID (8-4-4-4-12 hex)")
    amount = plain_decimal(body["amount"])  # the spec's decimal strings only (issue 31 §6)
    if amount is None or amount <= 0:
        raise StateProblem(400, "invalid_body", "amount must be a positive decimal string")
    return {f: str(body[f]) for f in fields}
