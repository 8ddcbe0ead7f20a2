"""The service side of the receiver kit: real transactions in a served world, and what the
receiver under test fetched from it.

Public names: ``FAULT_CODE``, ``STAGE_AMOUNT``, ``Fetch``, ``Precondition``,
``ServedWorld``, ``Stage``, ``SteppedClock``, ``add_cast``.

The receiver kit (``clearing_sim.conformance.receiver_kit``) delivers events about real
transactions of a served world (``clearing_sim.http.simulation.Simulation``), so that the
receiver's ``GET /api/v1/transactions/{id}`` with its API key reaches the shim and answers
the transaction's true state. A ``Stage`` acts as the API key's participant, a clearing
member: it initiates redeems of an issuer-backed asset (Mode 2 or 3, so an outcome can be
armed), arms their issuer outcomes (``World.arm``), runs the clock until they reach the state
wanted, applies the operator fix (``World.resolve``), and keeps:

- each public lifecycle change of its transactions (the world's ``transaction.state``
  records) as the ``WebhookEvent`` the channel would send, under an ``evt_`` id of the kit's
  (fresh per run, so a receiver that remembers ids across runs is not misjudged);
- each ``GET /api/v1/transactions/{id}`` of its transactions that the API answered (the
  world's ``api.request`` records), in order, each with the wall time (``time.monotonic``,
  the kit's clock for evidence) at which the shim answered it: the kit credits a fetch to a
  delivery only by that time, against the times it sent the delivery and got its answer.

``fail_next_fetch(tx_id)`` makes the shim answer the member's next ``GET`` of that
transaction with 503 and a structured error body (``FAULT_CODE``), once, in the API's place
(``Simulation.api_faults``): the world never sees that request, so its log and digest are
untouched; the stage keeps it as a ``Fetch`` with status 503.

``add_cast`` adds the kit's own member and Mode 2 issuer to a fresh world (the CLI's shim)
and returns the member's API key. Everything here runs on the shim's event loop, under its
locks: the clock moves through ``Clock.advance``.

The stage knows the shim only through two narrow protocols, ``ServedWorld`` (the world, its
API, the world lock, the command ids and the API's fault hooks: what
``clearing_sim.http.simulation.Simulation`` offers) and ``SteppedClock`` (``advance``:
``clearing_sim.http.clock.Clock``), so this kit sits below the shim that serves it and never
imports it (the shim's conformance route and the kit's CLI hand their own in).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Protocol

from attrs import define, field, frozen

from clearing_sim.domain.delivery import WebhookEvent
from clearing_sim.domain.errors import NotAllowed, Unauthenticated
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.domain.money import Asset
from clearing_sim.domain.parties import ParticipantKind
from clearing_sim.domain.transaction import Transaction
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request, Response, encode_json
from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.examples import issuer_profile
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.world import World
from clearing_sim.webhooks import TransactionView

__all__ = ["FAULT_CODE", "STAGE_AMOUNT", "Fetch", "Precondition", "ServedWorld", "Stage",
           "SteppedClock", "add_cast"]

STAGE_AMOUNT = Decimal("10.00")
STAGED_MAX = 4  # redeems a battery stages (A, B, C, D)
_STEP_MS = 1_000
_STEPS_MAX = 3_600  # an hour of virtual time for a transaction to reach the state wanted
_TRANSACTIONS = "/api/v1/transactions/"
#: The code of the kit's one 503: the kit answers it, not the service (never in the
#: service's error catalogue; the service itself never answers a read with 503)
FAULT_CODE = "kit_fetch_failed_once"


class Precondition(NotAllowed):
    """The world cannot stage the battery (no such key, not a member, nothing to redeem)."""


@frozen
class Fetch:
    """One ``GET /api/v1/transactions/{id}`` of a staged transaction, as the API answered,
    and when (``at_s``: ``time.monotonic()`` as the shim answered it)."""

    seq: int
    transaction_id: str
    status: int
    participant_id: str | None
    at_s: float


def add_cast(world: World, api_key_of: Callable[[str], str]) -> str:
    """The kit's own cast in ``world``: ``Conformance Issuer`` (Mode 2, asset ``GBPC``) and
    ``Conformance Member`` holding 1 000.00 GBPC; the member's API key."""
    issuer = world.add_issuer("Conformance Issuer", issuer_profile(2), ("GBPC",),
                              Decimal("1000000.00"))
    member = world.add_member("Conformance Member", Decimal("0.00"),
                              {issuer.assets[0]: Decimal("1000.00")})
    return api_key_of(member.id)


def _asset_to_redeem(world: World, member: Participant) -> Asset:
    """The first asset (participants in creation order) the member holds enough of, whose
    issuer takes instructions (Mode 2 or 3)."""
    for issuer in world.participants:
        gateway = world.issuers.get(issuer.id)
        if issuer.kind is not ParticipantKind.STABLECOIN_ISSUER or gateway is None \
                or not issuer.profiles or not issuer.profile.mode.has_instructions:
            continue
        ledger = issuer.profile.ledger
        wallet = member.wallets.get(ledger)
        for asset in issuer.assets if wallet is not None else ():
            assert wallet is not None
            held = world.ledgers[ledger].balance(wallet, asset)
            if held.amount >= STAGED_MAX * STAGE_AMOUNT:
                return asset
    raise Precondition.one("apiKey", "kit_nothing_to_redeem",
                           f"{member.name} holds no {STAGED_MAX * STAGE_AMOUNT} of an asset "
                           "whose issuer takes instructions (Mode 2 or 3): fund its wallet "
                           "first")


class ServedWorld(Protocol):
    """What the stage uses of a served world (``clearing_sim.http.simulation.Simulation``)."""

    @property
    def world(self) -> World: ...

    @property
    def api(self) -> ServiceAPI: ...

    @property
    def world_lock(self) -> asyncio.Lock: ...

    @property
    def api_faults(self) -> list[Callable[[Request], Response | None]]: ...

    def command_id(self) -> str: ...


class SteppedClock(Protocol):
    """What the stage uses of the shim's clock (``clearing_sim.http.clock.Clock``)."""

    async def advance(self, by_ms: int | None = None) -> object: ...


@define
class Stage:
    sim: ServedWorld
    clock: SteppedClock
    api_key: str = field(repr=False)  # a live credential: never in a repr or a traceback
    member: Participant
    asset: Asset
    events: dict[str, list[WebhookEvent]]  # transaction id -> its changes, in order
    fetches: list[Fetch]
    _seq: int = 0
    _world: World | None = None  # the world staged in (a reset or rewind replaces sim's)
    _faults: list[Callable[[Request], Response | None]] = field(factory=list)

    @classmethod
    def open(cls, sim: ServedWorld, clock: SteppedClock, api_key: str) -> Stage:
        """A stage acting as ``api_key``'s participant; ``Precondition`` when it cannot."""
        world = sim.world
        try:
            principal = sim.api.credentials.authenticate(f"Bearer {api_key}")
        except Unauthenticated:
            raise Precondition.one("apiKey", "kit_api_key_unknown",
                                   "the shim issued no such API key") from None
        member = world.participants[principal.participant_id]
        if member.kind is not ParticipantKind.CLEARING_MEMBER:
            raise Precondition.one("apiKey", "kit_not_a_member",
                                   f"{member.name} is not a clearing member")
        stage = cls(sim, clock, api_key, member, _asset_to_redeem(world, member), {}, [],
                    world=world)
        world.log.listen(stage._on_record)
        return stage

    @property
    def world(self) -> World:
        """The world the battery staged in; ``Precondition`` (409 ``kit_world_replaced``)
        once a reset or a rewind has replaced the served world under it."""
        world = self.sim.world
        if world is not self._world:
            raise Precondition.one(None, "kit_world_replaced",
                                   "the served world was reset or rewound while the battery "
                                   "ran: the transactions it staged are gone")
        return world

    # what the world tells us ------------------------------------------------------------
    def _on_record(self, record: Record) -> None:
        if record.kind == "transaction.state":
            events = self.events.get(str(record["transactionId"]))
            if events is not None:
                events.append(self._event(record))
        elif record.kind == "api.request" and record["method"] == "GET":
            path = str(record["path"])
            tx_id = path[len(_TRANSACTIONS):] if path.startswith(_TRANSACTIONS) else ""
            if tx_id in self.events:
                self._seq += 1
                participant = record["participantId"]
                self.fetches.append(Fetch(self._seq, tx_id, int(str(record["status"])),
                                          None if participant is None else str(participant),
                                          time.monotonic()))

    def _event(self, record: Record) -> WebhookEvent:
        world = self.world
        return WebhookEvent(
            id=f"evt_{uuid.uuid4().hex}", type=EventType(str(record["event"])),
            created_at_ms=record.at_ms, created_at=world.iso(record.at_ms),
            transaction_id=str(record["transactionId"]),
            payment_reference=str(record["paymentReference"]),
            lifecycle_status=str(record["lifecycleStatus"]), terminal=bool(record["terminal"]),
            parked=bool(record["parked"]))

    # acting on the world ----------------------------------------------------------------
    async def initiate(self, reference: str, outcome: Outcome) -> str:
        """A redeem of ``STAGE_AMOUNT`` by the member, its issuer outcome armed."""
        asset = self.asset
        body = {"useCase": "redeem", "paymentReference": reference,
                "source": {"amount": str(STAGE_AMOUNT),
                           "asset": {"code": asset.code, "issuer": asset.issuer}},
                "target": {"amount": str(STAGE_AMOUNT), "asset": {"code": asset.currency}}}
        async with self.sim.world_lock:
            world = self.world
            before = len(world.log)
            response = self.sim.api.handle(Request.build(
                "POST", "/api/v1/transactions", token=self.api_key, json_body=body))
            if response.status != 201:
                raise Precondition.one("apiKey", "kit_initiation_refused",
                                       f"the member's redeem was refused: {response.status} "
                                       f"{response.body[:300].decode('utf-8', 'replace')}")
            tx_id = str(response.json()["data"]["id"])
            self.events[tx_id] = [self._event(r) for r in world.log.select("transaction.state")
                                  if r.seq >= before and r["transactionId"] == tx_id]
            world.arm(tx_id, outcome)
        return tx_id

    async def run_until(self, done: Callable[[], bool]) -> None:
        """Advance the clock a second at a time until ``done()`` (at most an hour)."""
        for _ in range(_STEPS_MAX):
            if done():
                return
            await self.clock.advance(by_ms=_STEP_MS)
        raise Precondition.one(None, "kit_stage_stuck", "a staged transaction did not reach the "
                                                    "state wanted within an hour of virtual time")

    def transaction(self, tx_id: str) -> Transaction:
        return self.world.transactions[tx_id]

    def view(self, tx_id: str) -> TransactionView:
        """The service's view of the transaction now: the truth a receiver should hold."""
        tx = self.transaction(tx_id)
        return TransactionView(tx.lifecycle_status.value, tx.parked, tx.terminal)

    async def resolve(self, tx_id: str) -> None:
        """The operator's fix: the parked transaction re-enters ``in-flight`` (a new event)."""
        async with self.sim.world_lock:
            self.world.resolve(tx_id)

    def event(self, tx_id: str, event_type: EventType, nth: int = 0) -> WebhookEvent:
        """The ``nth`` change of this type of the transaction (0: the first)."""
        return [e for e in self.events[tx_id] if e.type is event_type][nth]

    def fail_next_fetch(self, tx_id: str) -> None:
        """The member's next ``GET /api/v1/transactions/{tx_id}`` is answered 503, once."""
        path = _TRANSACTIONS + tx_id

        def fault(request: Request) -> Response | None:
            if request.method not in ("GET", "HEAD") or request.path != path:
                return None
            try:
                principal = self.sim.api.credentials.authenticate(
                    request.header("Authorization"))
            except Unauthenticated:
                return None  # the API's own 401
            if principal.participant_id != self.member.id:
                return None
            self._drop(fault)
            self._seq += 1
            self.fetches.append(Fetch(self._seq, tx_id, 503, self.member.id, time.monotonic()))
            body = {"errors": [{"type": "api_error", "code": FAULT_CODE, "message": (
                "the conformance kit fails this one fetch of the transaction on purpose: "
                "retry it (the receiver must not treat its event as processed)")}],
                "meta": {"commandId": self.sim.command_id()}}
            return Response(503, (("Content-Type", "application/json"), ("Retry-After", "0")),
                            encode_json(body))

        self._faults.append(fault)
        self.sim.api_faults.append(fault)

    def _drop(self, fault: Callable[[Request], Response | None]) -> None:
        for faults in (self._faults, self.sim.api_faults):
            if fault in faults:
                faults.remove(fault)

    def fetched(self, tx_id: str, after_seq: int) -> list[Fetch]:
        """Fetches of the transaction answered after ``after_seq``."""
        return [f for f in self.fetches if f.seq > after_seq and f.transaction_id == tx_id]

    @property
    def seq(self) -> int:
        return self._seq

    def close(self) -> None:
        """Stop watching the log of the world it staged in (a running shim outlives the
        battery; a reset may have replaced the world since)."""
        for fault in tuple(self._faults):
            self._drop(fault)
        if self._world is not None:
            self._world.log.unlisten(self._on_record)
