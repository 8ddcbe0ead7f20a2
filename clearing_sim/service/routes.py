"""The route table: every route of the public API, the single truth for dispatch and docs.

Public names: ``ROUTES``, ``PREFIX``, ``match``.

Each feature module declares its rows (``ROUTES``) beside its handlers; this module puts
them in one table, in the spec's order. ``docs/api.md`` and the OpenAPI document are checked
against it. Matching is exact: a path matches a template segment by segment, ``{name}``
matching any non-empty segment.
"""

from __future__ import annotations

from clearing_sim.domain.errors import MethodNotAllowed, NotFound
from clearing_sim.service import (
    agents,
    conformance,
    issuer_conformance,
    issuers,
    onboarding,
    reserves,
    system,
    team,
    transactions,
    webhooks,
)
from clearing_sim.service.context import Route

__all__ = ["PREFIX", "ROUTES", "match"]

PREFIX = "/api/v1"

ROUTES: tuple[Route, ...] = (
    *system.ROUTES,
    *onboarding.ROUTES,
    *transactions.ROUTES,
    *reserves.ROUTES,
    *agents.ROUTES,
    *webhooks.ROUTES,
    *issuers.ROUTES,
    *issuer_conformance.ROUTES,
    *conformance.ROUTES,
    *team.ROUTES,
)


def match(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route for this method and path, with its path parameters; 404 or 405 otherwise."""
    allowed: list[str] = []
    for route in ROUTES:
        params = route.match(path)
        if params is None:
            continue
        if route.method == method:
            return route, params
        allowed.append(route.method)
    if allowed:
        raise MethodNotAllowed.one(None, "method_not_allowed",
                                   f"{method} is not allowed on {path[:200]}; allowed: "
                                   f"{', '.join(allowed)}")
    raise NotFound.one(None, "route_not_found", f"no route {path[:200]}")
