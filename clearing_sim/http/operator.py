"""The operator surface ``/sim/v1``: its route table, its token, and its one door.

Public names: ``OPERATOR_ROUTES``, ``OperatorSurface``, ``match``.

Every route but ``GET /sim/v1/health`` (``health``: no credential, no change, nothing
revealed but ``{alive, ready}``) needs ``Authorization: Bearer <operator token>`` (compared
in constant time); every route answers with the API's envelopes (``{data, meta}``,
``{errors, meta}``) and error codes, in the API's precedence: route (404
``route_not_found``, 405 ``method_not_allowed``), then the token (401
``authentication_required`` / ``invalid_credential``), then the request's text (400
``invalid_string``), then the body and the state: a caller without the token learns nothing
about its query or headers (issue 31 §6). The
routes themselves live beside their ideas: ``controls`` (clock, reset, fixes, behaviours,
receivers), ``participants`` (the cast and credentials), ``views`` (deliveries, balances,
the log), ``stories`` (the console's quiet reads: transactions, stories, the overview, the
log's tail), ``receiver_conformance`` (the receiver kit's battery), ``timetravel``
(checkpoints and rewind) and ``rtgs_hours`` (the RTGS's business hours).
"""

from __future__ import annotations

import hmac

from clearing_sim.domain.errors import DomainError, Unauthenticated
from clearing_sim.http import (
    controls,
    gateways,
    health,
    participants,
    receiver_conformance,
    rtgs_hours,
    stories,
    timetravel,
    views,
)
from clearing_sim.http.clock import Clock, ClockAdvancing
from clearing_sim.http.simulation import Simulation
from clearing_sim.http.surface import OperatorContext, OperatorRoute, Rebuild
from clearing_sim.service import envelope
from clearing_sim.service.api import check_request_text
from clearing_sim.service.body import read_query
from clearing_sim.service.messages import Request, Response, encode_json
from clearing_sim.service.routes import match_in

__all__ = ["OPERATOR_ROUTES", "OperatorSurface", "match"]

OPERATOR_ROUTES: tuple[OperatorRoute, ...] = (
    *health.ROUTES,
    *controls.ROUTES,
    *gateways.ROUTES,
    *participants.ROUTES,
    *views.ROUTES,
    *stories.ROUTES,
    *receiver_conformance.ROUTES,
    *timetravel.ROUTES,
    *rtgs_hours.ROUTES,
)
_JSON = (("Content-Type", "application/json"),)


def match(method: str, path: str) -> tuple[OperatorRoute, dict[str, str]]:
    """The operator route for this method and path; 404 or 405 otherwise."""
    return match_in(OPERATOR_ROUTES, method, path)


def _quiet(request: Request) -> bool:
    """Whether the answer's command id is drawn from no seeded stream: health, and the
    quiet reads (``OperatorRoute.quiet``)."""
    if health.is_health(request):
        return True
    try:
        route, _ = match(request.method, request.path)
    except DomainError:
        return False
    return route.quiet


class OperatorSurface:
    """The ``/sim/v1`` door of one simulation. ``rebuild``: the journal's replay, handed to
    the routes' contexts (``POST /sim/v1/rewind``); a surface without it (the one a replay
    drives, ``http.replay``) answers a rewind 409 ``rewind_unavailable``."""

    def __init__(self, sim: Simulation, clock: Clock, token: str, *,
                 rebuild: Rebuild | None = None) -> None:
        self.sim = sim
        self.clock = clock
        self._token = token.encode()
        self.rebuild = rebuild

    def authenticate(self, authorization: str | None) -> None:
        if authorization is None or not authorization.strip():
            raise Unauthenticated.one(None, "authentication_required",
                                      "the operator surface needs Authorization: Bearer "
                                      "<operator token>")
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
                token.strip().encode(), self._token):
            raise Unauthenticated.one(None, "invalid_credential",
                                      "this is not the operator token the shim was started "
                                      "with (clearing-sim serve --operator-token)")

    async def handle(self, request: Request) -> Response:
        command_id = health.command_id() if _quiet(request) else self.sim.command_id()
        try:
            route, params = match(request.method, request.path)
            if not route.public:
                self.authenticate(request.header("Authorization"))
            check_request_text(request)  # after the token: nothing is said to a stranger
            query = read_query(request.query, route.query)
            ctx = OperatorContext(self.sim, self.clock, request, params, query, self.rebuild)
            if route.exclusive and route.method == "GET":  # a read: between two slices
                async with self.sim.world_lock:
                    reply = await route.handler(ctx)
            elif route.exclusive:  # a write: once no advance is running events
                reply = await self.clock.write(lambda: route.handler(ctx))
            else:
                reply = await route.handler(ctx)
            return Response(reply.status, _JSON, encode_json(envelope.success(reply,
                                                                              command_id)))
        except ClockAdvancing as error:  # a write that waited its bound: not applied
            return Response(error.status, (*_JSON, *error.headers()),
                            encode_json(envelope.failure(error, command_id)))
        except DomainError as error:
            return Response(error.status, _JSON, encode_json(envelope.failure(error,
                                                                              command_id)))
