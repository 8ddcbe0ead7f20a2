"""The route table: every route of the public API, the single truth for dispatch and docs.

Public names: ``ROUTES``, ``PREFIX``, ``match``, ``match_in``.

Each feature module declares its rows (``ROUTES``) beside its handlers; this module puts
them in one table, in the spec's order. No feature module imports this module or ``api``
(a handler reaches the API through ``context.Host``): the table is assembled from modules
below it, as Starlette's app is assembled from route lists that do not import the app.
``docs/api.md`` and the OpenAPI document are checked against it. Matching is exact: a path
matches a template segment by segment, ``{name}`` matching any non-empty segment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

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

__all__ = ["PREFIX", "ROUTES", "match", "match_in"]

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


class _Matchable(Protocol):
    @property
    def method(self) -> str: ...

    def match(self, path: str) -> dict[str, str] | None: ...


R = TypeVar("R", bound=_Matchable)


def match_in(table: Sequence[R], method: str, path: str) -> tuple[R, dict[str, str]]:
    """The row of ``table`` for this method and path, with its path parameters; 404 or 405
    otherwise (any door's route table: the API's, the operator surface's)."""
    allowed: list[str] = []
    for route in table:
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


#: (method, path) → the route found for it, for the paths of routes without parameters
#: (their own templates: a bounded set), which need no scan the next time
_by_template: dict[tuple[str, str], Route] = {}


def match(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route of the public API for this method and path; 404 or 405 otherwise."""
    found = _by_template.get((method, path))
    if found is not None:
        return found, {}
    route, params = match_in(ROUTES, method, path)
    if not params and path == route.template:
        _by_template[method, path] = route
    return route, params
