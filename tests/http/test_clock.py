"""The virtual clock over HTTP: manual advances, their refusals, serialisation, realtime."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clearing_sim.http import clock as clock_module
from clearing_sim.http.options import ClockMode
from tests.http.conftest import OP, Client, Shim, make_client


def test_the_clock_starts_at_the_epoch(client: Client) -> None:
    response = client.op("GET", "/sim/v1/clock")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["now"] == "2026-01-01T00:00:00.000Z"
    assert (data["nowMs"], data["mode"], data["speed"], data["advancingTo"]) == (0, "manual",
                                                                                None, None)
    assert data["unixSeconds"] == 1_767_225_600


def test_advance_by_seconds_and_until(client: Client) -> None:
    assert client.advance(1.5)["now"] == "2026-01-01T00:00:01.500Z"
    response = client.op("POST", "/sim/v1/clock/advance", {"until": "2026-01-01T01:00:00Z"})
    assert response.status_code == 200
    assert response.json()["data"]["nowMs"] == 3_600_000
    same = client.op("POST", "/sim/v1/clock/advance", {"until": "2026-01-01T01:00:00.000Z"})
    assert same.status_code == 200  # to now: nothing to run, not backwards


@pytest.mark.parametrize(("body", "code", "param"), [
    ({"seconds": -1}, "invalid_value", "seconds"),
    ({"until": "2025-12-31T23:59:59Z"}, "invalid_value", "until"),
    ({"until": "tomorrow"}, "invalid_timestamp", "until"),
    ({"until": "2026-01-02T00:00:00"}, "invalid_timestamp", "until"),
    ({}, "required", None),
    ({"seconds": 1, "until": "2026-01-02T00:00:00Z"}, "invalid_value", "until"),
    ({"seconds": 0.0005}, "invalid_value", "seconds"),
    ({"seconds": "60"}, "invalid_type", "seconds"),
    ({"seconds": True}, "invalid_type", "seconds"),
    ({"seconds": 400 * 86_400}, "invalid_value", "seconds"),
    ({"until": "2027-06-01T00:00:00Z"}, "invalid_value", "until"),
    ({"seconds": 1, "days": 1}, "unknown_field", "days"),
])
def test_a_bad_advance_is_400_and_moves_nothing(client: Client, body: dict[str, object],
                                                code: str, param: str | None) -> None:
    client.advance(10)
    response = client.op("POST", "/sim/v1/clock/advance", body)
    assert response.status_code == 400, response.text
    error = response.json()["errors"][0]
    assert (error["type"], error["code"], error.get("param")) == ("invalid_request_error",
                                                                   code, param)
    assert client.op("GET", "/sim/v1/clock").json()["data"]["nowMs"] == 10_000


def test_moving_backwards_says_so(client: Client) -> None:
    client.advance(60)
    response = client.op("POST", "/sim/v1/clock/advance", {"until": "2026-01-01T00:00:30Z"})
    assert response.status_code == 400
    assert "backwards" in response.json()["errors"][0]["message"]


def test_an_advance_runs_every_event_due_before_it_answers(shim: Shim) -> None:
    tx = shim.initiate()
    assert shim.client.get(f"/api/v1/transactions/{tx}", headers=shim.member.auth).json()[
        "data"]["lifecycleStatus"] == "received"  # manual: nothing moves by itself
    shim.client.advance(0.2)  # intake_ms: received → in-flight at exactly 200 ms
    data = shim.client.get(f"/api/v1/transactions/{tx}", headers=shim.member.auth).json()["data"]
    assert data["lifecycleStatus"] == "in-flight"
    shim.client.advance(3600)
    data = shim.client.get(f"/api/v1/transactions/{tx}", headers=shim.member.auth).json()["data"]
    assert (data["lifecycleStatus"], data["terminal"]) == ("settled", True)


@pytest.mark.parametrize("slice_steps", [2_000, 7])
def test_concurrent_advances_take_turns_and_reads_see_the_world_between_events(
        shim: Shim, slice_steps: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14, finding 8: reads answer between an advance's slices (a time it has
    reached, ``advancingTo`` set); advances still take turns and each ends where asked."""
    monkeypatch.setattr(clock_module, "_STEPS_PER_SLICE", slice_steps)
    for n in range(20):
        shim.initiate(reference=f"INV-{n}")
    http = shim.client.http

    async def together() -> list[dict[str, Any]]:
        calls = [http.post("/sim/v1/clock/advance", headers=OP, json={"seconds": 1800}),
                 http.get("/sim/v1/clock", headers=OP),
                 http.post("/sim/v1/clock/advance", headers=OP, json={"seconds": 1800}),
                 http.get("/sim/v1/clock", headers=OP)]
        return [r.json()["data"] for r in await asyncio.gather(*calls)]

    seen = shim.client.run(together())
    ends = {seen[0]["nowMs"], seen[2]["nowMs"]}
    assert ends == {1_800_000, 3_600_000}
    for read in (seen[1], seen[3]):
        assert 0 <= read["nowMs"] <= 3_600_000
        if read["nowMs"] not in (0, 1_800_000, 3_600_000):
            assert read["advancingTo"] is not None


def test_during_a_long_advance_reads_answer_and_writes_wait_for_its_end(
        shim: Shim, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14, finding 8: a long advance no longer locks every route. The operator's clock
    and an API read answer while it runs; a write waits and applies at the time reached."""
    monkeypatch.setattr(clock_module, "_STEPS_PER_SLICE", 5)
    for n in range(30):
        shim.initiate(reference=f"LONG-{n}")
    http = shim.client.http
    order: list[str] = []

    async def scenario() -> tuple[Any, Any, Any, Any]:
        advance = asyncio.ensure_future(http.post("/sim/v1/clock/advance", headers=OP,
                                                  json={"seconds": 7200}))
        while shim.client.sim.world.now_ms == 0:
            await asyncio.sleep(0)
        clock = await http.get("/sim/v1/clock", headers=OP)
        listed = await http.get("/api/v1/transactions?limit=1", headers=shim.member.auth)
        order.append("read" if not advance.done() else "late")
        write = await http.post("/api/v1/transactions", headers=shim.member.auth, json={
            "useCase": "redeem", "paymentReference": "AFTER",
            "source": {"amount": "1.00", "asset": shim.issuer.asset},
            "target": {"amount": "1.00", "asset": {"code": "GBP"}}})
        order.append("write" if advance.done() else "early")
        return clock, listed, write, await advance

    clock, listed, write, advanced = shim.client.run(scenario())
    assert order == ["read", "write"]
    assert clock.status_code == listed.status_code == 200
    assert clock.json()["data"]["advancingTo"] == "2026-01-01T02:00:00.000Z"
    assert 0 < clock.json()["data"]["nowMs"] <= 7_200_000
    assert advanced.json()["data"]["nowMs"] == 7_200_000
    assert write.status_code == 201
    assert write.json()["data"]["initiatedAt"] == "2026-01-01T02:00:00.000Z"


def test_realtime_follows_the_wall_clock_times_speed() -> None:
    client = make_client(seed=1, clock=ClockMode.REALTIME, speed=60.0)
    try:
        wall = [100.0]
        clock = client.app.state.clock
        clock._wall_s = lambda: wall[0]
        clock.rebase()
        wall[0] += 10  # ten wall seconds at 60× are ten virtual minutes
        data = client.op("GET", "/sim/v1/clock").json()["data"]  # a request catches up first
        assert (data["mode"], data["speed"], data["nowMs"]) == ("realtime", 60.0, 600_000)
        client.advance(3600)  # an advance jumps ahead; the clock follows the wall from there
        wall[0] += 1
        client.get("/api/v1/system/status")
        assert client.sim.world.now_ms == 4_260_000
    finally:
        client.close()


def test_the_realtime_ticker_moves_the_world_without_requests() -> None:
    client = make_client(seed=1, clock=ClockMode.REALTIME, speed=1000.0)
    app = client.app

    async def run() -> int:
        """Virtual time once it passed 100 s (0.1 s of wall at 1000×) or 10 s of wall went
        by: no fixed sleep, so a loaded machine that runs the ticker late does not fail it."""
        async with app.router.lifespan_context(app):
            for _ in range(500):
                await asyncio.sleep(0.02)
                if app.state.sim.world.now_ms >= 100_000:
                    break
        return int(app.state.sim.world.now_ms)

    try:
        assert client.run(run()) >= 100_000  # no request was made: the ticker moved it
    finally:
        client.close()
