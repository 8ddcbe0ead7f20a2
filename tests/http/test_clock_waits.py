"""``POST /sim/v1/clock/advance`` until a transaction is terminal or the world is idle (issue
27, section 4): the first whole instant the condition holds, the digest of the same advance
given as ``until``, ``maxSeconds`` first, bad bodies refused without a change, the journal.

"terminal" is the spec's field: true "when the transaction will not change without action
outside the API"; a silent issuer parks the transaction at ``approvalSlaSeconds`` with
"parked true and terminal true" (spec, Conformance scenarios, ``silence``), counted from the
execute call in Mode 2 (docs/semantics.md, "The approval SLA")."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.http import clock as clock_module
from clearing_sim.sim.waiting import idle
from tests.http.conftest import Client, Shim, add, issuer_body, make_client, member_body
from tests.http.test_replay import journaled
from tests.service.test_hostile_input import state_digest

_HOOK = "https://hooks.northbank.example/h"


def _cast(client: Client) -> Shim:
    return Shim(client, add(client, issuer_body()), add(client, member_body()))


def _silent_redeem(shim: Shim) -> str:
    """A Mode 2 redeem (Ether Pound) whose issuer is armed to stay silent."""
    tx = shim.initiate()
    armed = shim.client.post("/api/v1/conformance/run", headers=shim.member.admin_auth,
                             json={"transactionId": tx, "scenario": "silence"})
    assert armed.status_code == 200, armed.text
    return tx


def _advance(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.op("POST", "/sim/v1/clock/advance", body)
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


def _served_digest(client: Client) -> str:
    response = client.op("GET", "/sim/v1/digest")
    assert response.status_code == 200, response.text
    return str(response.json()["data"]["digest"])


def _execute_deadline_ms(client: Client, tx: str) -> int:
    [sent] = [r for r in client.sim.world.log
              if r.kind == "saga.execute_sent" and r["transactionId"] == tx]
    return int(sent["deadlineMs"])


def _state(client: Client, shim: Shim, tx: str) -> tuple[str, bool, bool]:
    data = client.get(f"/api/v1/transactions/{tx}", headers=shim.member.auth).json()["data"]
    return data["lifecycleStatus"], data["parked"], data["terminal"]


# untilTerminal ----------------------------------------------------------------------------------
def test_until_terminal_lands_on_the_instant_a_silent_mode_2_redeem_parks() -> None:
    """Spec, scenario ``silence``: "no answer until approvalSlaSeconds elapses; then parks",
    "parked true and terminal true"; the advance stops at execute + SLA, in milliseconds."""
    client = make_client(seed=3)
    shim = _cast(client)
    tx = _silent_redeem(shim)
    started_s = time.perf_counter()
    stop = _advance(client, {"untilTerminal": tx})
    took_s = time.perf_counter() - started_s
    deadline_ms = _execute_deadline_ms(client, tx)
    assert deadline_ms > 15 * 60_000  # the default 900 s SLA from the execute call
    assert (stop["stoppedAtMs"], stop["nowMs"], stop["met"], stop["reason"]) == (
        deadline_ms, deadline_ms, True, "terminal")
    assert stop["stoppedAt"] == stop["now"] == client.sim.world.iso(deadline_ms)
    assert _state(client, shim, tx) == ("failed", True, True)
    assert took_s < 1.0, f"15 virtual minutes took {took_s:.3f} s of wall time"
    client.close()


def test_until_terminal_has_the_digest_of_the_same_advance_by_until() -> None:
    """Two fresh served worlds, the same requests: one advances untilTerminal, the other
    ``until`` the instant the first stopped at. Same world (digest): the park's whole
    instant ran (its webhook fan-out too, due at the same instant after the transaction is
    terminal); one millisecond earlier the transaction was still in-flight (so the first
    instant it holds, not a later one)."""
    waited, plain, earlier = (make_client(seed=3) for _ in range(3))
    instants = []
    for client in (waited, plain, earlier):
        shim = _cast(client)
        assert client.post("/api/v1/webhooks", headers=shim.member.auth, json={
            "url": _HOOK, "events": ["transaction.parked"]}).status_code == 201
        tx = _silent_redeem(shim)
        if client is waited:
            stop = _advance(client, {"untilTerminal": tx})
            instants.append(stop["stoppedAtMs"])
            # the whole instant ran: the terminal state is its 2nd event, 3 more follow
            assert client.sim.world.env.peek() > stop["stoppedAtMs"]
        else:
            at_ms = instants[0] - (client is earlier)
            _advance(client, {"until": client.sim.world.iso(at_ms)})
        instants.append(_state(client, shim, tx))
    assert instants[1:] == [("failed", True, True), ("failed", True, True),
                            ("in-flight", False, False)]
    assert _served_digest(waited) == _served_digest(plain) != _served_digest(earlier)
    for client in (waited, plain, earlier):
        client.close()


def test_until_terminal_of_a_terminal_transaction_stops_now(shim: Shim) -> None:
    tx = shim.initiate()
    shim.client.advance(3600)
    stop = _advance(shim.client, {"untilTerminal": tx, "maxSeconds": 60})
    assert (stop["stoppedAtMs"], stop["met"], stop["reason"]) == (3_600_000, True, "terminal")


def test_max_seconds_first_stops_at_the_bound_and_says_not_met(shim: Shim) -> None:
    tx = _silent_redeem(shim)
    shim.client.advance(1)
    stop = _advance(shim.client, {"untilTerminal": tx, "maxSeconds": 300.5})
    assert (stop["stoppedAtMs"], stop["nowMs"], stop["met"], stop["reason"]) == (
        301_500, 301_500, False, "max_seconds")
    assert _state(shim.client, shim, tx) == ("in-flight", False, False)
    idle_stop = _advance(shim.client, {"untilIdle": True, "maxSeconds": 0})
    assert (idle_stop["stoppedAtMs"], idle_stop["met"]) == (301_500, False)


# untilIdle --------------------------------------------------------------------------------------
def test_until_idle_stops_when_no_webhook_delivery_is_left_to_attempt() -> None:
    """A settled redeem whose receiver answers 503 for the first 10 minutes: the deliveries
    retry on the schedule; untilIdle stops at the instant the last one is done, not before
    (a fresh world run until one millisecond earlier still has a delivery to attempt), and
    with the digest of the same advance by ``until``."""
    worlds = [make_client(seed=3) for _ in range(3)]
    stops: list[int] = []
    for client in worlds:
        shim = _cast(client)
        hook = client.post("/api/v1/webhooks", headers=shim.member.auth, json={
            "url": _HOOK, "events": ["transaction.received", "transaction.settled"]})
        assert hook.status_code == 201, hook.text
        failing = client.op("PUT", "/sim/v1/receivers", {
            "url": _HOOK, "status": 503, "until": "2026-01-01T00:10:00Z"})
        assert failing.status_code == 200, failing.text
        tx = shim.initiate()
        if not stops:
            stop = _advance(client, {"untilIdle": True})
            assert (stop["met"], stop["reason"]) == (True, "idle")
            stops.append(stop["stoppedAtMs"])
        else:
            _advance(client, {"until": client.sim.world.iso(stops[0] - len(stops) + 1)})
            stops.append(client.sim.world.now_ms)
        assert _state(client, shim, tx)[0] == "settled"  # in all three: reads are logged
    waited, plain, earlier = worlds
    attempts = [r for r in waited.sim.world.log if r.kind == "webhook.attempt"]
    assert len(attempts) > 2 and stops[0] > 600_000  # retried past the outage
    assert idle(waited.sim.world) and idle(plain.sim.world)
    assert not idle(earlier.sim.world) and earlier.sim.world.webhooks.busy
    assert _served_digest(waited) == _served_digest(plain) != _served_digest(earlier)
    for client in worlds:
        client.close()


def test_until_idle_with_a_real_receiver_waits_for_its_answers(receiver: Any) -> None:
    """Real webhook deliveries pause the advance as a plain advance does: while the real
    receiver answers 503 a retry is always left (not idle at the bound); once it answers 200,
    untilIdle stops after its answer is in."""
    client = make_client(seed=5, deliver_webhooks=True, allow_private_webhook_urls=True)
    shim = _cast(client)
    assert client.post("/api/v1/webhooks", headers=shim.member.auth, json={
        "url": receiver.url, "events": ["transaction.settled"]}).status_code == 201
    tx = shim.initiate()
    receiver.status = 503
    bounded = _advance(client, {"untilIdle": True, "maxSeconds": 600})
    assert (bounded["stoppedAtMs"], bounded["met"], bounded["reason"]) == (
        600_000, False, "max_seconds")
    assert client.sim.world.webhooks.busy and len(receiver.received) >= 2
    receiver.status = 200
    stop = _advance(client, {"untilIdle": True, "maxSeconds": 86_400})
    assert (stop["met"], stop["reason"]) == (True, "idle")
    assert not client.sim.world.webhooks.busy
    assert all(tx in body.decode() for _, body in receiver.received)
    [last] = [r for r in client.sim.world.log if r.kind == "webhook.attempt"][-1:]
    assert last.at_ms <= stop["stoppedAtMs"]
    client.close()


# bad bodies -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("body", "status", "code", "param"), [
    ({"untilTerminal": "00000000-0000-4000-8000-000000000000"}, 404, "transaction_not_found",
     "untilTerminal"),
    ({"untilTerminal": ""}, 400, "invalid_value", "untilTerminal"),
    ({"untilTerminal": 7}, 400, "invalid_type", "untilTerminal"),
    ({"untilIdle": False}, 400, "invalid_value", "untilIdle"),
    ({"untilIdle": "yes"}, 400, "invalid_type", "untilIdle"),
    ({"untilIdle": True, "maxSeconds": -1}, 400, "invalid_value", "maxSeconds"),
    ({"untilIdle": True, "maxSeconds": 0.0001}, 400, "invalid_value", "maxSeconds"),
    ({"untilIdle": True, "maxSeconds": 400 * 86_400}, 400, "invalid_value", "maxSeconds"),
    ({"untilIdle": True, "untilTerminal": "x"}, 400, "invalid_value", "untilIdle"),
    ({"seconds": 5, "untilIdle": True}, 400, "invalid_value", "untilIdle"),
    ({"seconds": 5, "maxSeconds": 10}, 400, "invalid_value", "maxSeconds"),
    ({"until": "2026-01-02T00:00:00Z", "maxSeconds": 10}, 400, "invalid_value", "maxSeconds"),
    ({"maxSeconds": 10}, 400, "required", None),
    ({"untilIdle": True, "maxMinutes": 1}, 400, "unknown_field", "maxMinutes"),
])
def test_a_bad_wait_is_refused_naming_the_field_and_changes_nothing(
        shim: Shim, body: dict[str, Any], status: int, code: str, param: str | None) -> None:
    tx = _silent_redeem(shim)
    shim.client.advance(10)
    before = state_digest(shim.client.sim.world)
    response = shim.client.op("POST", "/sim/v1/clock/advance", body)
    assert response.status_code == status, response.text
    error = response.json()["errors"][0]
    assert (error["code"], error.get("param")) == (code, param)
    assert state_digest(shim.client.sim.world) == before
    assert _state(shim.client, shim, tx) == ("in-flight", False, False)


_FIELD_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**9),
                          st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
                          st.just("2026-01-01T00:01:00Z"), st.just([]), st.just({}))
_BODIES = st.dictionaries(st.sampled_from(["seconds", "until", "untilTerminal", "untilIdle",
                                           "maxSeconds", "x"]), _FIELD_VALUES, max_size=4)
@pytest.fixture(scope="module")
def fuzzed() -> Iterator[tuple[Client, str]]:
    """One world for every example: a cast and a redeem an untilTerminal may name."""
    client = make_client(seed=3)
    yield client, _cast(client).initiate()
    client.close()


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(body=_BODIES, known_tx=st.booleans())
def test_any_advance_body_is_answered_and_a_refusal_changes_nothing(
        fuzzed: tuple[Client, str], body: dict[str, Any], known_tx: bool) -> None:
    """Whatever the body: 200 only for exactly one form (``maxSeconds`` only beside a wait),
    else a structured 400 (404 for an unknown transaction) and the world unchanged."""
    client, tx = fuzzed
    if known_tx and "untilTerminal" in body:
        body["untilTerminal"] = tx
    world = client.sim.world
    before = state_digest(world)
    response = client.op("POST", "/sim/v1/clock/advance", body)
    given_forms = [k for k in ("seconds", "until", "untilTerminal", "untilIdle")
                   if body.get(k) is not None]
    if response.status_code == 200:
        assert len(given_forms) == 1 and "x" not in body
        assert body.get("maxSeconds") is None or given_forms[0] in ("untilTerminal",
                                                                     "untilIdle")
        return
    assert response.status_code in (400, 404), response.text
    errors = response.json()["errors"]
    assert errors and all(e["code"] for e in errors)
    assert state_digest(world) == before


# the journal ------------------------------------------------------------------------------------
@pytest.mark.parametrize("slice_steps", [2_000, 3])
def test_a_journaled_until_terminal_advance_replays_to_the_same_digest(
        tmp_path: Path, slice_steps: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal records where the advance stopped (its clock entries), not the condition:
    a restart replays it to the same digest, also when it ran in many slices."""
    monkeypatch.setattr(clock_module, "_STEPS_PER_SLICE", slice_steps)
    path = tmp_path / "j.jsonl"
    first, _ = journaled(path)
    shim = _cast(first)
    tx = _silent_redeem(shim)
    stop = _advance(first, {"untilTerminal": tx})
    idle_stop = _advance(first, {"untilIdle": True})
    assert (stop["met"], idle_stop["met"]) == (True, True)
    before, now_ms = str(first.sim.world.log.digest()), first.sim.world.now_ms
    first.close()
    second, lines = journaled(path)
    assert "replayed" in lines[-1] and before in lines[-1]
    assert str(second.sim.world.log.digest()) == before
    assert second.sim.world.now_ms == now_ms == stop["stoppedAtMs"]
    second.close()
