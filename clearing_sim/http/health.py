"""``GET /sim/v1/health``: is the shim alive, and is its world ready to be used.

Public names: ``HEALTH_PATH``, ``ROUTES``, ``command_id``, ``is_health``.

The one ``/sim/v1`` route that needs no operator token (a container's ``HEALTHCHECK``, a
test fixture waiting for the server, a load balancer's probe carry none). So it answers
``{alive, ready}`` and nothing else: no seed, no version, no digest, no clock. ``ready`` is
true once the world is built (from the world file, when there is one) and, with
``--journal``, the journal replayed (``Simulation.ready``); ``clearing-sim serve`` opens its
port only after both today, so a served shim answers ``ready: true``, but the flag is the
real state, not a constant.

It changes nothing: the door answers it without catching the realtime clock up, without
the world lock (an advance in progress does not delay it), without the journal, and its
``meta.commandId`` is a random UUID rather than the next id of the operator's seeded stream
(drawing one would shift every later operator answer's id, and hand an unauthenticated
caller a value derived from the seed).
"""

from __future__ import annotations

import uuid

from clearing_sim.http.surface import OperatorContext, OperatorRoute
from clearing_sim.service.context import Reply
from clearing_sim.service.messages import Request

__all__ = ["HEALTH_PATH", "ROUTES", "command_id", "is_health"]

HEALTH_PATH = "/sim/v1/health"


def is_health(request: Request) -> bool:
    """A request the health route answers (any other method on its path is the surface's
    405, authenticated or not like any other)."""
    return request.path == HEALTH_PATH and request.method in ("GET", "HEAD")


def command_id() -> str:
    """The health answer's ``meta.commandId``: not from any seeded stream."""
    return str(uuid.uuid4())


async def health(ctx: OperatorContext) -> Reply:
    return Reply(200, {"alive": True, "ready": ctx.sim.ready})


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("GET", HEALTH_PATH, health,
                  "liveness and readiness (no credential): ready once the world file is "
                  "loaded and the journal replayed", exclusive=False, public=True),
)
