"""Real issuer gateways in the shim: the operator route that puts an issuer on its real
gateway, and the route where a real issuer's status webhooks arrive.

Public names: ``INBOUND_ROUTES``, ``InboundRoute``, ``ROUTES``, ``WEBHOOK_PREFIX``,
``issuer_webhook``, ``receive_issuer_webhook``.

``PUT /sim/v1/operator/issuers/{issuerId}/gateway`` with ``apiBaseUrl`` (required) and the
onboarding material of Authentication 8 (``caFile``, ``clientCert``, ``clientKey``, paths on
the shim's host; ``bearer`` or ``tokenUrl`` + ``clientId`` + ``clientSecret``), optional
``refundUrl``, ``providerStatesUrl``, ``timeoutSeconds``, ``patienceMs`` and
``webhookSecret``: from then on the saga's calls for that issuer go to the real gateway
(``clearing_sim.gateway.client.HttpGateway``). The answer carries the webhook signing secret
issued to the issuer (made from the world's ids unless given) and the path its
``webhookUrl`` must point to: ``POST /issuer-webhooks/{issuerId}``. There, a delivery is
verified with that secret against the shim's wall clock (a real issuer signs with a real
clock); unsigned, wrongly signed or stale ones are dropped, logged (``issuer.webhook``) and
answered 401; a valid one is only a prompt (202): the saga reads the instruction first.
``INBOUND_ROUTES`` lists that route for the OpenAPI document (a third surface, beside
``/api/v1`` and ``/sim/v1``: no bearer credential, the ``Service-Signature`` header is the
check).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import frozen

from clearing_sim.domain.errors import InvalidRequest, NotAllowed, NotFound
from clearing_sim.domain.parties import ParticipantKind
from clearing_sim.gateway.client import HttpGateway
from clearing_sim.gateway.transport import GatewayConfig, TransportProblem
from clearing_sim.http.surface import OperatorContext, OperatorRoute, participant_of
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Reply
from clearing_sim.service.messages import Request, Response, encode_json

if TYPE_CHECKING:
    from clearing_sim.http.simulation import Simulation

__all__ = ["INBOUND_ROUTES", "ROUTES", "WEBHOOK_PREFIX", "InboundRoute", "issuer_webhook",
           "receive_issuer_webhook"]

WEBHOOK_PREFIX = "/issuer-webhooks"


@frozen
class InboundRoute:
    """A route where a real party calls the shim (not the service's API, not the operator's
    surface): documented in the OpenAPI document, served by ``Shim`` itself."""

    method: str
    template: str
    summary: str


INBOUND_ROUTES = (
    InboundRoute("POST", f"{WEBHOOK_PREFIX}/{{issuerId}}",
                 "receive a real issuer's signed status webhook (only a prompt: the saga "
                 "reads the instruction before acting)"),
)
_JSON = (("Content-Type", "application/json"),)


def _path(f: Fields, name: str) -> Path | None:
    value = f.text(name, required=False)
    if value is None:
        return None
    if not Path(value).is_file():
        f.problem(name, "invalid_value", f"{name}: no file {value[:200]} on the shim's host")
        return None
    return Path(value)


def _config(f: Fields, secret: str) -> GatewayConfig:
    base = f.text("apiBaseUrl")
    if base is not None and not base.startswith(("http://", "https://")):
        f.problem("apiBaseUrl", "invalid_value", "apiBaseUrl must be an http(s) URL")
    ca, cert, key = _path(f, "caFile"), _path(f, "clientCert"), _path(f, "clientKey")
    bearer = f.text("bearer", required=False)
    token_url = f.text("tokenUrl", required=False)
    client_id = f.text("clientId", required=False)
    client_secret = f.text("clientSecret", required=False)
    if token_url is not None and (client_id is None or client_secret is None):
        f.problem("tokenUrl", "invalid_value", "tokenUrl needs clientId and clientSecret")
    if (cert is None) != (key is None):
        f.problem("clientCert", "invalid_value", "clientCert and clientKey go together")
    timeout = f.integer("timeoutSeconds", required=False) or 5
    patience = f.integer("patienceMs", required=False)
    config = GatewayConfig(
        base or "", f.text("refundUrl", required=False), ca, cert, key, bearer, token_url,
        client_id, client_secret, float(max(1, min(timeout, 120))),
        patience_ms=1_000 if patience is None else max(0, patience),
        provider_states_url=f.text("providerStatesUrl", required=False),
        webhook_secret=f.text("webhookSecret", required=False) or secret)
    f.done()
    return config


async def put_gateway(ctx: OperatorContext) -> Reply:
    world = ctx.world
    issuer = participant_of(world, ctx.params["issuerId"], param=None)
    if issuer.kind is not ParticipantKind.STABLECOIN_ISSUER:
        raise NotFound.one(None, "participant_not_found",
                           f"{issuer.name} ({issuer.id}) is not a stablecoin issuer")
    config = _config(ctx.fields(), "whsec_" + world.ids.key_hex("issuer-secret", 24))
    if issuer.id not in world.issuers or not issuer.profile.mode.has_instructions:
        raise NotAllowed.one(None, "conformance_unsupported" if issuer.profiles else
                             "profile_required", f"{issuer.name} needs an ON_INSTRUCTION "
                             "profile (Mode 2 or 3) before it can use a real gateway")
    try:
        gateway = HttpGateway(world, issuer.id, issuer.name,
                              world.ledgers[issuer.profile.ledger], config)
    except TransportProblem as problem:
        raise InvalidRequest.one(None, "invalid_value", str(problem)) from None
    world.use_gateway(issuer.id, gateway, config.base)
    return Reply(200, {"issuerId": issuer.id, "apiBaseUrl": config.base,
                       "webhookSecret": config.webhook_secret,
                       "webhookPath": f"{WEBHOOK_PREFIX}/{issuer.id}"})


async def issuer_webhook(sim: Simulation, request: Request) -> Response:
    """``POST /issuer-webhooks/{issuerId}``: a real issuer's status webhook, under the world
    lock (the door holds the lock itself and calls ``receive_issuer_webhook``)."""
    async with sim.world_lock:
        return receive_issuer_webhook(sim, request)


def receive_issuer_webhook(sim: Simulation, request: Request) -> Response:
    """``POST /issuer-webhooks/{issuerId}`` with the world lock held: 202 when the signature
    holds and the inbox takes it, 401 when it does not."""
    issuer_id = request.path[len(WEBHOOK_PREFIX) + 1:]
    if request.method != "POST" or "/" in issuer_id or not issuer_id:
        return Response(404 if request.method == "POST" else 405, _JSON,
                        encode_json({"error": "POST /issuer-webhooks/{issuerId}"}))
    signature = next((v for k, v in request.headers if k.lower() == "service-signature"), None)
    world = sim.world
    gateway = world.issuers.get(issuer_id)
    now_s = int(dt.datetime.now(dt.UTC).timestamp()) \
        if isinstance(gateway, HttpGateway) else None
    if not world.issuer_inbox.receive(issuer_id, signature, request.body, now_s=now_s):
        return Response(401, _JSON, encode_json({"error": "invalid_signature"}))
    return Response(202, _JSON, encode_json({"accepted": True}))


ROUTES = (
    OperatorRoute("PUT", "/sim/v1/operator/issuers/{issuerId}/gateway", put_gateway,
                  "put an issuer on its real gateway (Authentication 8 material)"),
)
