"""The served process's heap (issue 14, finding 8): a grown world is frozen out of full
garbage collections between an advance's slices, and released when it is replaced.

A full collection of a served world with 12,000 transactions held the event loop for 2.8 s
inside one slice, so a read waited 4 s (``benchmarks/repro_hostile.py --only 8``). What is
checked here is the mechanism, without timing: after an advance, the world's objects are in
no generation a collection walks; after a reset, the old world is freed; an app that does
not own its process (tests, in-process kits) freezes nothing.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from decimal import Decimal

import pytest
from starlette.applications import Starlette

from clearing_sim.http import ServeOptions, clock, create_app
from clearing_sim.service.messages import Request
from clearing_sim.sim.examples import issuer_profile
from clearing_sim.sim.waiting import Wait
from tests.http.conftest import TOKEN, Client


@pytest.fixture(autouse=True)
def _thawed() -> Iterator[None]:
    """Whatever a test froze is given back: the test process is not a served one."""
    yield
    gc.unfreeze()
    gc.collect()


def _grown_app(owns_heap: bool, transactions: int = 20) -> Starlette:
    app = create_app(ServeOptions(operator_token=TOKEN, seed=3), owns_heap=owns_heap)
    sim = app.state.sim
    issuer = sim.world.add_issuer("Ether Pound", issuer_profile(2), (), Decimal("1000000.00"))
    asset = sim.world.issue_asset(issuer.id, "GBPE")
    member = sim.world.add_member("Northbank", Decimal("0.00"), {asset: Decimal("1000.00")})
    key = sim.api.credentials.issue_api_key(member.id)[1]
    for n in range(transactions):
        body = {"useCase": "redeem", "paymentReference": f"INV-{n}",
                "source": {"amount": "1.00", "asset": {"code": asset.code,
                                                       "issuer": asset.issuer}},
                "target": {"amount": "1.00", "asset": {"code": "GBP"}}}
        answer = sim.api.handle(Request.build("POST", "/api/v1/transactions", token=key,
                                              json_body=body))
        assert answer.status == 201, answer.body
    asyncio.run(app.state.clock.advance(by_ms=3_600_000))
    return app


def _walked(obj: object) -> bool:
    """Whether a full collection walks ``obj`` (it is in one of the three generations)."""
    return any(o is obj for generation in range(3) for o in gc.get_objects(generation))


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of 50 events: the advance of ``_grown_app`` needs many (as a long one does)."""
    monkeypatch.setattr(clock, "_STEPS_PER_SLICE", 50)


def test_after_an_advance_no_full_collection_walks_the_world() -> None:
    """Finding 8: reads answer within a second during an advance; a full collection of
    the grown world (seconds) no longer happens inside a slice."""
    app = _grown_app(owns_heap=True)
    world = app.state.sim.world
    assert gc.get_freeze_count() > 0
    assert not _walked(world.log) and not _walked(world.env)
    assert all(r.kind for r in world.log)  # frozen, not gone: the world is whole
    assert app.state.sim.world.log.digest() == _grown_app(owns_heap=False).state.sim \
        .world.log.digest()  # when memory is reclaimed never changes what happens


def test_a_realtime_tick_freezes_nothing() -> None:
    """A run of one slice that is not an operator's advance (the realtime ticker's, every
    20 ms) leaves the collector alone: no request's garbage is caught frozen."""
    app = _grown_app(owns_heap=True)
    gc.unfreeze()
    world = app.state.sim.world
    asyncio.run(app.state.clock._run(Wait(world, world.now_ms + 1_000)))
    assert gc.get_freeze_count() == 0
    assert _walked(app.state.sim.world.env)


@pytest.mark.usefixtures("small_slices")
def test_a_reset_releases_the_old_world() -> None:
    app = _grown_app(owns_heap=True)
    old = weakref.ref(app.state.sim.world)
    client = Client(app)
    try:
        reset = client.request("POST", "/sim/v1/reset",
                               headers={"Authorization": f"Bearer {TOKEN}"}, json={})
    finally:
        client.close()
    assert reset.status_code == 200
    assert old() is None  # its cycles were collected: nothing leaks across resets
    assert gc.get_freeze_count() == 0 or not _walked(app.state.sim.world.log)


def test_an_app_that_does_not_own_its_process_freezes_nothing() -> None:
    gc.unfreeze()
    app = _grown_app(owns_heap=False)
    assert gc.get_freeze_count() == 0
    assert _walked(app.state.sim.world.env)
