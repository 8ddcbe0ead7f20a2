"""The pytest fixtures of a served world: one ``clearing-sim serve`` per test session,
reset for each test (MockServer's pattern).

Public names: ``clearing_sim``, ``clearing_sim_seed``, ``clearing_sim_server``,
``clearing_sim_world``, ``pytest_runtest_makereport``.

Registered by clearing-sim's pytest plugin (``clearing_sim.scenario.pytest_plugin``, the
``pytest11`` entry point), so a suite that installed clearing-sim just names the fixture:

- ``clearing_sim_server`` (session): ``clearing_sim.testing.served_world`` for the session.
- ``clearing_sim`` (each test): that server after ``POST /sim/v1/reset`` (a fresh world from
  the world file, its participants' keys issued again into ``api_keys``).
- ``clearing_sim_world``, ``clearing_sim_seed`` (session): override them in a ``conftest.py``
  to start from a world file or another seed.

A test that used ``clearing_sim`` and failed carries the server's output since its reset in
its report (a section pytest prints under the failure): the session's server runs with
``--access-log``, so that is every request the test made, with its status, and anything
the server logged.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest

from clearing_sim.testing import ServedWorld, served_world

__all__ = ["clearing_sim", "clearing_sim_seed", "clearing_sim_server", "clearing_sim_world",
           "pytest_runtest_makereport"]


@pytest.fixture(scope="session")
def clearing_sim_world() -> str | None:
    """The world file the session's server starts from (override it in a conftest.py)."""
    return None


@pytest.fixture(scope="session")
def clearing_sim_seed() -> int | None:
    """The session server's ``--seed`` (override it; ``None``: the world file's, or 0)."""
    return None


@pytest.fixture(scope="session")
def clearing_sim_server(clearing_sim_world: str | None,
                        clearing_sim_seed: int | None) -> Iterator[ServedWorld]:
    """One ``clearing-sim serve`` for the whole test session (with ``--access-log``: a
    failed test's report lists the requests it made)."""
    with served_world(clearing_sim_world, seed=clearing_sim_seed,
                      args=("--access-log",)) as server:
        yield server


@pytest.fixture
def clearing_sim(clearing_sim_server: ServedWorld) -> ServedWorld:
    """The session's server with a fresh world for this test (``POST /sim/v1/reset`` to the
    seed it started with, whatever seed an earlier test reset to)."""
    clearing_sim_server.reset(clearing_sim_server.seed)
    return clearing_sim_server


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """A failed test that used ``clearing_sim`` shows the server's output since its reset."""
    outcome = yield
    report = outcome.get_result()
    server = getattr(item, "funcargs", {}).get("clearing_sim")
    if report.failed and isinstance(server, ServedWorld):
        report.sections.append(("clearing-sim serve output (since this test's reset)",
                                server.output(since_reset=True) or "(nothing)"))
