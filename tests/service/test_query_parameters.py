"""Every route takes only the query parameters it declares (issue 31 §6: ``GET
/api/v1/sandbox/agents`` ignored unknown parameters and cursors, unlike the other lists).

The class, not the instance: the door (``ServiceAPI.handle``) reads the query against the
route's ``query`` before any handler, so no route can ignore what it was sent; these tests
walk the whole route table with every credential of the example cast."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.http.openapi import API_OPERATIONS
from clearing_sim.service.context import Route
from clearing_sim.service.routes import ROUTES
from tests.service.conftest import Service


def _target(route: Route, svc: Service) -> str:
    issuer = svc.issuers[2].participant.id
    return re.sub(r"{[^}]+}", lambda m: issuer if m.group(0) == "{issuerId}"
                  else "00000000-0000-4000-8000-000000000000", route.template)


def _credentials(svc: Service) -> list[str]:
    callers = [svc.member, svc.other, *svc.issuers.values()]
    return [token for c in callers for token in (c.key, c.admin)]


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.template}")
def test_a_route_refuses_a_query_parameter_it_does_not_take(svc: Service, route: Route) -> None:
    """With a credential the route admits, an unknown parameter is 400 ``invalid_query``
    naming it, and the world is unchanged but for the request's own record."""
    reached = 0
    for token in [None] if route.public else _credentials(svc):
        before = len(svc.world.log)
        response = svc.call(route.method, f"{_target(route, svc)}?unknownThing=1", token,
                            json={} if route.mutating else None)
        if response.status in (401, 403):
            continue
        reached += 1
        error = response.json()["errors"][0]
        assert (response.status, error["code"], error.get("param")) == (
            400, "invalid_query", "unknownThing"), token
        assert len(svc.world.log) == before + 1  # its api.request record only
    assert reached, "no credential of the cast reaches this route"


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["cursor", "limit"]), value=st.text(max_size=8))
def test_a_cursor_sent_to_a_list_without_pages_is_refused(svc: Service, name: str,
                                                          value: str) -> None:
    """The agents and webhook lists answer one page (``nextCursor: null``): a cursor or a
    limit sent to them is a client's mistake, refused rather than ignored."""
    for target, token in (("/api/v1/sandbox/agents", svc.member.admin),
                          ("/api/v1/webhooks", svc.member.key)):
        response = svc.call("GET", f"{target}?{name}=x{value.encode().hex()}", token)
        assert response.status == 400
        assert response.json()["errors"][0]["code"] == "invalid_query"


def test_the_published_query_parameters_are_the_ones_each_route_takes() -> None:
    """The OpenAPI document the shim serves names, for every route, exactly ``route.query``."""
    for route in ROUTES:
        operation = API_OPERATIONS[(route.method, route.template)]
        assert tuple(sorted(name for name, _, _ in operation.query)) == tuple(
            sorted(route.query)), route.template
