"""A write during a long advance waits at most ``WRITE_WAIT_S`` of wall time, then is
answered 409 ``clock_advancing`` with ``Retry-After``, applied nowhere: not in the world, not
in the journal, its ``Idempotency-Key`` not stored (issue 31 §3: a write waited 262 s behind
a 5-day advance with readers; docs/semantics.md says why it is refused, not queued)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clearing_sim.http import clock as clock_module
from clearing_sim.http.journal import read_journal
from tests.http.conftest import OP, Client, add, issuer_body, member_body, redeem_body
from tests.http.test_replay import digest, journaled


def _cast(client: Client) -> tuple[dict[str, str], dict[str, Any]]:
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    return member.auth, redeem_body(issuer.asset)


def test_a_write_behind_a_running_advance_is_refused_after_its_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock_module, "WRITE_WAIT_S", 0.05)
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    auth, body = _cast(client)
    entries = len(read_journal(path).entries)
    before = digest(client)
    clock = client.app.state.clock
    clock.running_events = True  # an advance in the middle of its events
    try:
        headers = {**auth, "Idempotency-Key": "k-1"}
        refused = client.post("/api/v1/transactions", headers=headers, json=body)
        operator = client.op("POST", "/sim/v1/participants",
                             {**member_body(), "name": "Latebank"})
    finally:
        clock.running_events = False
    for answer in (refused, operator):
        assert answer.status_code == 409, answer.text
        assert answer.json()["errors"][0]["code"] == "clock_advancing"
        assert answer.headers["Retry-After"] == "1"
    assert digest(client) == before
    assert len(read_journal(path).entries) == entries  # nothing journaled, nothing to replay
    again = client.post("/api/v1/transactions", headers=headers, json=body)
    assert again.status_code == 201 and "Idempotent-Replayed" not in again.headers
    client.close()
    reopened, _ = journaled(path)
    assert reopened.sim.world.transactions.get(again.json()["data"]["id"]) is not None
    reopened.close()


def test_a_real_advance_refuses_a_write_that_cannot_wait_and_replays_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end on one event loop: a 5-day advance of a world with traffic, a write sent
    while it runs events, with no patience at all; then replay gives the same digest."""
    monkeypatch.setattr(clock_module, "WRITE_WAIT_S", 0.0)
    monkeypatch.setattr(clock_module, "_STEPS_PER_SLICE", 50)  # slices on any machine
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    auth, body = _cast(client)
    for n in range(200):  # enough events that the advance runs in several slices
        client.post("/api/v1/transactions", headers={**auth, "Idempotency-Key": f"a-{n}"},
                    json=body)

    async def both() -> tuple[Any, Any]:
        advance = asyncio.ensure_future(client.http.post(
            "/sim/v1/clock/advance", headers=OP, json={"seconds": 5 * 86_400}))
        while not client.app.state.clock.running_events and not advance.done():
            await asyncio.sleep(0)
        assert not advance.done(), "the advance ended before the write was sent"
        write = await client.http.post("/api/v1/transactions",
                                       headers={**auth, "Idempotency-Key": "late"}, json=body)
        return await advance, write

    advanced, write = client.run(both())
    assert advanced.status_code == 200
    assert (write.status_code, write.json()["errors"][0]["code"]) == (409, "clock_advancing")
    after = digest(client)
    client.close()
    reopened, _ = journaled(path)
    assert digest(reopened) == after
    reopened.close()
