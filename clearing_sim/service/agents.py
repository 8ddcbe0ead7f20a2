"""Sandbox agents: mandates minted by a tenant admin, and the check of an agent's submission.

Public names: ``ROUTES``, ``AgentBook``, ``Agent``, ``authorise_agent``, ``agent_wire``.

An agent acts for its participant within a mandate: a subset of the minting admin's
capabilities (``initiateTransaction`` and ``cancelOwnTransaction`` both need
``transactions:write``), an expiry and an optional per-transaction cap in GBP. The 201 of
mint shows a ``mandateProof`` (``mp_`` + 64 hex digits) once; only its sha256 is kept. A
submission carrying ``agent: {agentId, mandateProof}`` is checked before the clearing core
sees it, in this order: unknown agent, proof, revoked, expired, action outside the mandate,
amount over the cap, each a 403 (docs/semantics.md).
"""

from __future__ import annotations

import hashlib
import hmac
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from attrs import define

from clearing_sim.domain.errors import Forbidden, InvalidRequest, NotAllowed, NotFound
from clearing_sim.domain.money import Money
from clearing_sim.domain.parties import Capability, CredentialKind
from clearing_sim.domain.timefmt import parse_iso
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Context, Reply, Route

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["ROUTES", "Agent", "AgentBook", "agent_wire", "authorise_agent"]

MANDATE_ACTIONS = ("initiateTransaction", "cancelOwnTransaction")
EXPIRY_MS_MAX = 365 * 86_400_000
_CAP_PLACES = 2


@define
class Agent:
    agent_id: str
    participant_id: str
    actions: tuple[str, ...]
    amount_cap_gbp: Decimal | None
    expires_at_ms: int  # world ms
    created_at_ms: int
    proof_sha256: str
    revoked_at_ms: int | None = None


class AgentBook:
    def __init__(self, world: World) -> None:
        self.world = world
        self.agents: dict[str, Agent] = {}

    def of(self, participant_id: str) -> list[Agent]:
        return [a for a in self.agents.values() if a.participant_id == participant_id]

    def find(self, agent_id: str, participant_id: str) -> Agent | None:
        agent = self.agents.get(agent_id)
        return agent if agent is not None and agent.participant_id == participant_id else None


def agent_wire(ctx: Context, agent: Agent) -> dict[str, Any]:
    world = ctx.world
    return {
        "agentId": agent.agent_id,
        "participantId": agent.participant_id,
        "capabilities": {action: action in agent.actions for action in MANDATE_ACTIONS},
        "amountCapGbp": None if agent.amount_cap_gbp is None else f"{agent.amount_cap_gbp:f}",
        "expiresAt": world.iso(agent.expires_at_ms),
        "revokedAt": None if agent.revoked_at_ms is None else world.iso(agent.revoked_at_ms),
        "createdAt": world.iso(agent.created_at_ms),
    }


def _parse_cap(f: Fields) -> Decimal | None:
    text = f.text("amountCapGbp", required=False, length_max=40)
    if text is None:
        return None
    try:
        value = Decimal(text) if text.strip() == text else None
    except InvalidOperation:
        value = None
    if (value is None or not value.is_finite() or value <= 0
            or -int(value.as_tuple().exponent) > _CAP_PLACES or "e" in text.lower()):
        f.problem("amountCapGbp", "invalid_amount",
                  "amountCapGbp must be a positive decimal string with at most 2 places")
        return None
    return value


def _parse_expiry(ctx: Context, f: Fields) -> int | None:
    text = f.text("expiresAt", length_max=64)
    if text is None:
        return None
    try:
        at_ms = parse_iso(text) - ctx.world.epoch_ms
    except ValueError:
        f.problem("expiresAt", "invalid_timestamp",
                  "expiresAt must be an ISO 8601 timestamp with a time zone")
        return None
    if at_ms <= ctx.now_ms or at_ms - ctx.now_ms > EXPIRY_MS_MAX:
        f.problem("expiresAt", "expires_in_past",
                  f"expiresAt must be after now ({ctx.world.iso()}) and within 365 days")
        return None
    return at_ms


def mint(ctx: Context) -> Reply:
    f = ctx.fields()
    caps = f.object("capabilities")
    actions: list[str] = []
    if caps is not None:
        for action in MANDATE_ACTIONS:
            if caps.flag(action, required=False):
                actions.append(action)
        caps.check_unknown()
    expires_at_ms = _parse_expiry(ctx, f)
    cap = _parse_cap(f)
    f.done()
    if not actions:
        raise InvalidRequest.one("capabilities", "empty_mandate",
                                 "an agent's mandate must grant at least one capability")
    assert ctx.principal is not None and expires_at_ms is not None
    if not ctx.principal.holds(Capability.TRANSACTIONS_WRITE):
        raise Forbidden.one("capabilities", "capability_not_held",
                            f"{' and '.join(actions)} need transactions:write, which this "
                            "admin does not hold")
    ids = ctx.world.ids
    proof = "mp_" + ids.key_hex("mandate-proof", 32)
    agent = Agent(ids.prefixed("agt"), ctx.caller.id, tuple(actions), cap, expires_at_ms,
                  ctx.now_ms, hashlib.sha256(proof.encode()).hexdigest())
    ctx.store(AgentBook).agents[agent.agent_id] = agent
    ctx.world.log.append("agent.minted", agentId=agent.agent_id, participantId=agent.participant_id,
                         actions=list(actions), expiresAtMs=expires_at_ms,
                         amountCapGbp=None if cap is None else f"{cap:f}")
    return Reply(201, {**agent_wire(ctx, agent), "mandateProof": proof})


def list_agents(ctx: Context) -> Reply:
    agents = [a for a in ctx.store(AgentBook).of(ctx.caller.id) if a.revoked_at_ms is None]
    items = [{k: v for k, v in agent_wire(ctx, a).items()
              if k in ("agentId", "participantId", "expiresAt", "revokedAt")} for a in agents]
    return Reply(200, {"agents": items, "total": len(items)}, next_cursor=None)


def _own(ctx: Context) -> Agent:
    agent = ctx.store(AgentBook).find(ctx.params["agentId"], ctx.caller.id)
    if agent is None:
        raise NotFound.one(None, "agent_not_found", "no such agent for this participant")
    return agent


def get_agent(ctx: Context) -> Reply:
    return Reply(200, agent_wire(ctx, _own(ctx)))


def revoke(ctx: Context) -> Reply:
    ctx.fields(empty_ok=True).done()
    agent = _own(ctx)
    if agent.revoked_at_ms is not None:
        raise NotAllowed.one(None, "agent_already_revoked",
                             f"agent {agent.agent_id} was revoked at "
                             f"{ctx.world.iso(agent.revoked_at_ms)}")
    agent.revoked_at_ms = ctx.now_ms
    ctx.world.log.append("agent.revoked", agentId=agent.agent_id,
                         participantId=agent.participant_id)
    return Reply(200, agent_wire(ctx, agent))


def read_agent_ref(f: Fields) -> tuple[str, str] | None:
    """The optional ``agent: {agentId, mandateProof}`` of a submission."""
    ref = f.object("agent", required=False)
    if ref is None:
        return None
    agent_id = ref.text("agentId", length_max=100)
    proof = ref.text("mandateProof", length_max=200)
    ref.check_unknown()
    if agent_id is None or proof is None:
        return None
    return agent_id, proof


def authorise_agent(ctx: Context, ref: tuple[str, str] | None, action: str,
                    amount: Money | None = None) -> str | None:
    """Check an agent's submission against its mandate; the agent id, or 403."""
    if ref is None:
        return None
    agent_id, proof = ref
    agent = ctx.store(AgentBook).find(agent_id, ctx.caller.id)

    def refuse(code: str, message: str) -> Forbidden:
        return Forbidden.one("agent", code, message)

    if agent is None:
        raise refuse("agent_unknown", f"no agent {agent_id[:100]} acts for this participant")
    presented = hashlib.sha256(proof.encode()).hexdigest()
    if not hmac.compare_digest(presented, agent.proof_sha256):
        raise refuse("agent_mandate_invalid", "the mandateProof does not verify for this agent")
    if agent.revoked_at_ms is not None:
        raise refuse("agent_revoked", f"agent {agent_id} was revoked")
    if ctx.now_ms >= agent.expires_at_ms:
        raise refuse("agent_expired", f"agent {agent_id} expired at "
                                      f"{ctx.world.iso(agent.expires_at_ms)}")
    if action not in agent.actions:
        raise refuse("agent_outside_mandate", f"agent {agent_id} may not {action}")
    if amount is not None and agent.amount_cap_gbp is not None:
        if amount.asset.currency != "GBP":
            raise refuse("agent_outside_mandate", "the agent's cap is in GBP; this amount is "
                                                  f"in {amount.asset.currency}")
        if amount.amount > agent.amount_cap_gbp:
            raise refuse("agent_amount_cap_exceeded",
                         f"{amount.amount:f} GBP is above agent {agent_id}'s cap of "
                         f"{agent.amount_cap_gbp:f} GBP")
    return agent.agent_id


_ADMIN = (CredentialKind.TENANT_ADMIN,)
_CAP = (Capability.MANAGE_OWN_AGENTS,)
ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/sandbox/agents", mint, "mint an agent with a mandate", _CAP, _ADMIN,
          sandbox_only=True),
    Route("GET", "/api/v1/sandbox/agents", list_agents, "list non-revoked agents", _CAP, _ADMIN,
          sandbox_only=True),
    Route("GET", "/api/v1/sandbox/agents/{agentId}", get_agent, "one agent", _CAP, _ADMIN,
          sandbox_only=True),
    Route("POST", "/api/v1/sandbox/agents/{agentId}/revoke", revoke, "revoke an agent", _CAP,
          _ADMIN, sandbox_only=True),
)
