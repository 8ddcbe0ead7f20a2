"""Operator routes for the cast: create participants, list them, issue credentials.

Public names: ``ROUTES``, ``DEFAULT_MODE_BY_LEDGER``.

``POST /sim/v1/participants`` reads the whole body before changing anything, so a refusal
changes nothing; what it reads and how it changes the world is
``clearing_sim.service.admission``, shared with the scenario step ``operator:
{add_participant}`` so that a recorded session exports and replays to its digest.
"""

from __future__ import annotations

from typing import Any

from clearing_sim.http.surface import OperatorContext, OperatorRoute, participant_of
from clearing_sim.service import wire
from clearing_sim.service.admission import DEFAULT_MODE_BY_LEDGER, admit, read_new_participant
from clearing_sim.service.auth import SESSION_TTL_S
from clearing_sim.service.context import Reply
from clearing_sim.sim.participants import Participant

__all__ = ["DEFAULT_MODE_BY_LEDGER", "ROUTES"]


def participant_wire(participant: Participant) -> dict[str, Any]:
    return {**wire.party(participant.party),
            "assets": [wire.asset(asset) for asset in participant.assets]}


async def create(ctx: OperatorContext) -> Reply:
    new = read_new_participant(ctx.fields(), ctx.world)
    admitted = admit(ctx.world, ctx.sim.api.credentials, new)
    participant = admitted.participant
    return Reply(201, {**wire.party(participant.party), "apiKey": admitted.api_key,
                       "apiKeyId": admitted.api_key_id, "adminToken": admitted.admin_token,
                       "assets": [wire.asset(asset) for asset in participant.assets]})


async def list_participants(ctx: OperatorContext) -> Reply:
    return Reply(200, [participant_wire(p) for p in ctx.world.participants], next_cursor=None)


def _participant_id(ctx: OperatorContext) -> Participant:
    f = ctx.fields()
    participant_id = f.text("participantId", length_max=64)
    f.done()
    return participant_of(ctx.world, participant_id)


async def create_session(ctx: OperatorContext) -> Reply:
    participant = _participant_id(ctx)
    token = ctx.sim.api.credentials.issue_session(participant.id)
    expires_ms = ctx.world.now_ms + SESSION_TTL_S * 1000
    return Reply(201, {"token": token, "participantId": participant.id,
                       "expiresAt": ctx.world.iso(expires_ms)})


async def create_api_key(ctx: OperatorContext) -> Reply:
    participant = _participant_id(ctx)
    key_id, key = ctx.sim.api.credentials.issue_api_key(participant.id)
    return Reply(201, {"apiKey": key, "apiKeyId": key_id, "participantId": participant.id})


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("POST", "/sim/v1/participants", create,
                  "add a clearing member or a stablecoin issuer, with its credentials"),
    OperatorRoute("GET", "/sim/v1/participants", list_participants,
                  "every participant of the world"),
    OperatorRoute("POST", "/sim/v1/sessions", create_session,
                  "a tenant-admin portal session (JWT) for a participant"),
    OperatorRoute("POST", "/sim/v1/api-keys", create_api_key,
                  "a new sandbox machine API key for a participant"),
)
