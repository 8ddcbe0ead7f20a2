"""The public route table: ``match`` remembers the routes found by their own paths and answers
the same as a scan of the table, every time."""

from __future__ import annotations

import pytest

from clearing_sim.domain.errors import DomainError
from clearing_sim.service.routes import ROUTES, match, match_in


def _answer(find: object, method: str, path: str) -> object:
    try:
        route, params = find(method, path)  # type: ignore[operator]
    except DomainError as refused:
        return refused.status, [p.code for p in refused.problems]
    return route, params


_PATHS = sorted({r.template for r in ROUTES}
                | {r.template.replace("{", "x").replace("}", "") for r in ROUTES}
                | {"//api/v1/transactions", "/api/v1/transactions/", "/nowhere"})


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_match_answers_as_the_scan_of_the_table_the_first_time_and_after(method: str) -> None:
    for _ in range(2):
        for path in _PATHS:
            assert _answer(match, method, path) == _answer(
                lambda m, p: match_in(ROUTES, m, p), method, path), (method, path)
