"""The kit's stage on a served world: real transactions, the events the channel would send,
and the receiver's fetches seen in the API's own log (spec, Events: Delivery; guarantee 3)."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal

import httpx
import pytest

from clearing_sim.conformance.receiver_kit import REFERENCES
from clearing_sim.conformance.receiver_stage import FAULT_CODE, Precondition, Stage, add_cast
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.http import ServeOptions, create_app
from clearing_sim.service.messages import Request


def _stage() -> Stage:
    app = create_app(ServeOptions(operator_token="operator-token-1"))
    sim = app.state.sim
    key = add_cast(sim.world, lambda pid: sim.api.credentials.issue_api_key(pid)[1])
    return Stage.open(sim, app.state.clock, key)


def test_a_staged_transaction_yields_each_change_as_the_channel_would_send_it() -> None:
    stage = _stage()

    async def play() -> str:
        tx_id = await stage.initiate("CONFORMANCE-B", Outcome.FAILED)
        await stage.run_until(lambda: stage.transaction(tx_id).parked)
        await stage.resolve(tx_id)
        return tx_id

    tx_id = asyncio.run(play())
    types = [e.type for e in stage.events[tx_id]]
    assert types == [EventType.RECEIVED, EventType.IN_FLIGHT, EventType.PARKED,
                     EventType.IN_FLIGHT]
    again = stage.event(tx_id, EventType.IN_FLIGHT, nth=1)
    assert again.id != stage.event(tx_id, EventType.IN_FLIGHT).id
    assert again.id.startswith("evt_") and b'"lifecycleStatus":"in-flight"' in again.body()
    assert stage.view(tx_id).lifecycle_status == "in-flight"


def test_fetches_of_staged_transactions_are_seen_with_their_status() -> None:
    stage = _stage()
    tx_id = asyncio.run(stage.initiate("CONFORMANCE-A", Outcome.COMPLETE))
    before = stage.seq
    for token in (stage.api_key, "sk_sandbox_" + "0" * 64):
        stage.sim.api.handle(Request.build("GET", f"/api/v1/transactions/{tx_id}",
                                           token=token))
    stage.sim.api.handle(Request.build("GET", "/api/v1/transactions/other", token="x"))
    assert [(f.status, f.participant_id) for f in stage.fetched(tx_id, before)] == [
        (200, stage.member.id), (401, None)]
    stage.close()  # a running shim outlives the battery: its log stops telling the stage
    stage.sim.api.handle(Request.build("GET", f"/api/v1/transactions/{tx_id}",
                                       token=stage.api_key))
    assert len(stage.fetched(tx_id, before)) == 2


def test_a_key_it_cannot_stage_with_is_a_precondition() -> None:
    app = create_app(ServeOptions(operator_token="operator-token-1"))
    sim = app.state.sim
    with pytest.raises(Precondition) as unknown:
        Stage.open(sim, app.state.clock, "sk_sandbox_nope")
    issuer = sim.world.add_issuer("Lonely Issuer")
    poor = sim.world.add_member("Poor Member", Decimal("5.00"))
    codes = [unknown.value.problems[0].code]
    for participant in (issuer, poor):
        with pytest.raises(Precondition) as refused:
            Stage.open(sim, app.state.clock, sim.api.credentials.issue_api_key(participant.id)[1])
        codes.append(refused.value.problems[0].code)
    assert codes == ["kit_api_key_unknown", "kit_not_a_member", "kit_nothing_to_redeem"]


def test_the_kit_fails_one_fetch_with_a_structured_503_the_world_never_sees() -> None:
    """The receiver kit's ``fetch-failure-retried``: the member's next GET of the transaction
    is answered 503 (the error envelope: type, code, message; meta) once, by the shim in the
    API's place; the next is the API's 200; another key's GET is the API's own answer."""
    app = create_app(ServeOptions(operator_token="operator-token-1"))
    sim = app.state.sim
    key = add_cast(sim.world, lambda pid: sim.api.credentials.issue_api_key(pid)[1])
    stage = Stage.open(sim, app.state.clock, key)
    tx_id = asyncio.run(stage.initiate("CONFORMANCE-D", Outcome.COMPLETE))
    stage.fail_next_fetch(tx_id)
    log_before = len(sim.world.log)

    async def get(token: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://shim") as client:
            return await client.get(f"/api/v1/transactions/{tx_id}",
                                    headers={"Authorization": f"Bearer {token}"})

    other = asyncio.run(get("sk_sandbox_" + "0" * 64))
    failed, again = asyncio.run(get(key)), asyncio.run(get(key))
    assert other.status_code == 401
    assert failed.status_code == 503 and again.status_code == 200
    error = failed.json()["errors"][0]
    assert (error["type"], error["code"]) == ("api_error", FAULT_CODE) and error["message"]
    assert "commandId" in failed.json()["meta"]
    assert [(f.status, f.participant_id) for f in stage.fetches] == [
        (401, None), (503, stage.member.id), (200, stage.member.id)]
    logged = [r["status"] for r in list(sim.world.log)[log_before:] if r.kind == "api.request"]
    assert logged == [401, 200]  # the world saw the API's answers, not the kit's 503
    assert not sim.api_faults
    stage.fail_next_fetch(tx_id)
    stage.close()  # an unused fault goes with the battery
    assert not sim.api_faults


def test_the_staged_references_reach_the_receiver_as_raw_utf8_that_json_does_not_round_trip(
        ) -> None:
    """Spec, Events, Signature: the HMAC is over the raw body. The kit's B, C and D carry a
    paymentReference the API accepts (NFC, non-ASCII, & < >) and the channel sends raw."""
    stage = _stage()
    tx_id = asyncio.run(stage.initiate(REFERENCES["C"], Outcome.COMPLETE))
    body = stage.event(tx_id, EventType.RECEIVED).body()
    assert REFERENCES["C"].encode() in body and not body.isascii()
    assert json.dumps(json.loads(body), separators=(",", ":")).encode() != body
    assert json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).encode() \
        == body  # the service's own form: compact, spec order, raw UTF-8
