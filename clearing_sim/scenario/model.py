"""A parsed scenario as typed values: the world it builds and the steps it runs.

Public names: ``Action``, ``AddParticipant``, ``AgentSpec``, ``Advance``, ``Arm``, ``Call``,
``ForgedIssuerWebhook``, ``IssuerSpec``, ``MemberSpec``, ``NetworkFault``, ``ReceiverOutage``,
``ReceiverSpec``, ``Resolve``, ``Save``, ``Scenario``, ``SetIssuerBehaviour``, ``Step``,
``WaitUntil``, ``WebhookSpec``, ``WorldSpec``.

Participants, agents and subscriptions are keyed by their symbolic names (``northbank``);
steps refer to them by name and to saved values with ``${…}``. Durations are already
milliseconds; profiles and issuer behaviours are already the engine's validated values.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from attrs import frozen

from clearing_sim.domain.calendar import OperatingCalendar
from clearing_sim.domain.latency import Latency
from clearing_sim.domain.profile import IssuerProfile
from clearing_sim.scenario.expectations import (
    Expectation,
    Fact,
    ResourceState,
    Site,
    TimePoint,
    TransactionState,
)
from clearing_sim.sim.issuer import IssuerBehaviour

__all__ = ["Action", "AddParticipant", "Advance", "AgentSpec", "Arm", "Call",
           "ForgedIssuerWebhook", "IssuerSpec", "MemberSpec", "NetworkFault", "ReceiverOutage",
           "ReceiverSpec", "Resolve", "Save",
           "Scenario", "SetIssuerBehaviour", "Step", "WaitUntil", "WebhookSpec", "WorldSpec"]


# the world -------------------------------------------------------------------------------
@frozen
class WorldSpec:
    seed: int = 0
    epoch: str = "2026-01-01T00:00:00.000Z"
    environment: str = "sandbox"
    dns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    rtgs_calendar: OperatingCalendar | None = None  # None: the RTGS is always open


@frozen
class MemberSpec:
    key: str  # the symbolic name
    name: str  # participantName
    site: Site
    rtgs_gbp: Decimal = Decimal("0.00")
    wallets: tuple[tuple[str, Decimal], ...] = ()  # asset code → amount


@frozen
class IssuerSpec:
    key: str
    name: str
    site: Site
    rtgs_gbp: Decimal = Decimal("0.00")
    currency: str = "GBP"
    assets: tuple[str, ...] = ()
    profile: IssuerProfile | None = None
    behaviour: IssuerBehaviour = IssuerBehaviour()
    gateway: tuple[tuple[str, str | int], ...] = ()  # the real gateway's fields, wire names


@frozen
class AgentSpec:
    """Minted at the start by ``member``'s tenant admin (``POST /api/v1/sandbox/agents``)."""

    key: str
    member: str
    site: Site
    capabilities: tuple[tuple[str, bool], ...]
    expires_in_ms: int = 24 * 3_600_000
    amount_cap_gbp: str | None = None


@frozen
class ReceiverSpec:
    """How the endpoint behind a subscription's URL answers, and the network before it."""

    status: int = 200
    until_ms: int | None = None
    then_status: int = 200
    latency: Latency | None = None
    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    reorder_delay: Latency | None = None
    duplicate_delay: Latency | None = None
    app: str = "none"  # "reference": the reference receiver consumes the deliveries


@frozen
class WebhookSpec:
    """Created at the start by ``participant``'s API key (``POST /api/v1/webhooks``)."""

    key: str
    participant: str
    site: Site
    url: str
    events: tuple[str, ...]
    description: str | None = None
    receiver: ReceiverSpec = ReceiverSpec()


# steps -----------------------------------------------------------------------------------
@frozen
class Call:
    """An API request as ``as_`` (a participant or an agent; none: unauthenticated)."""

    method: str
    path: str
    as_: str | None = None
    credential: str | None = None  # "key" | "admin"; None: the API key
    headers: tuple[tuple[str, str], ...] = ()
    body: Any = None
    has_body: bool = False
    raw: str | None = None


@frozen
class Arm:
    """``POST /api/v1/conformance/run`` as ``as_``'s tenant admin (default: the initiator)."""

    transaction: str
    scenario: str
    as_: str | None = None


@frozen
class Advance:
    by_ms: int | None = None
    to: TimePoint | None = None


@frozen
class WaitUntil:
    condition: TransactionState | ResourceState | Fact
    timeout_ms: int
    poll_ms: int | None = None  # None: check after every event of the world


@frozen
class Resolve:
    """The operator's fix of a parked transaction (``World.resolve``)."""

    transaction: str


@frozen
class SetIssuerBehaviour:
    """Replace some of an issuer's behaviour fields from now on."""

    issuer: str
    changes: tuple[tuple[str, Any], ...]  # IssuerBehaviour attribute → value


@frozen
class AddParticipant:
    """``POST /sim/v1/participants`` mid-run (``clearing_sim.service.admission``): ``body``
    is that route's body, wire names; ``key`` the name later steps give it."""

    key: str
    body: dict[str, Any]


@frozen
class ReceiverOutage:
    webhook: str
    status: int = 503
    for_ms: int | None = None  # None: until told otherwise


@frozen
class NetworkFault:
    webhook: str
    changes: tuple[tuple[str, Any], ...]  # ReceiverSpec attribute → value


@frozen
class ForgedIssuerWebhook:
    issuer: str
    transaction: str
    status: str = "COMPLETED"
    signature: str = "wrong"  # "missing" | "wrong" | "stale"


Action = (Call | Arm | Advance | WaitUntil | Resolve | SetIssuerBehaviour | AddParticipant
          | ReceiverOutage | NetworkFault | ForgedIssuerWebhook)


@frozen
class Save:
    """``name`` ← the response body at ``path``, or the response header ``header``."""

    name: str
    path: str | None = None
    header: str | None = None


@frozen
class Step:
    index: int
    site: Site
    name: str | None = None
    action: Action | None = None
    saves: tuple[Save, ...] = ()
    expectations: tuple[Expectation, ...] = ()


@frozen
class Scenario:
    path: str
    name: str
    world: WorldSpec
    steps: tuple[Step, ...]
    description: str = ""
    tags: tuple[str, ...] = ()
    members: tuple[MemberSpec, ...] = ()
    issuers: tuple[IssuerSpec, ...] = ()
    agents: tuple[AgentSpec, ...] = ()
    webhooks: tuple[WebhookSpec, ...] = ()
