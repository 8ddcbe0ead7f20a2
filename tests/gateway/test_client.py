"""The HTTP gateway treats a real issuer's answers as untrusted input: never a crash.

Spec, "Issuer-side contract" and the saga's rules: a timeout, a 5xx, a malformed or oversized
answer is logged with its request and response and counts as silence (the transaction parks
at exactly approvalSlaSeconds); a status change the spec forbids is logged as a protocol
violation and read as FAILED (parked, nothing undone).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from clearing_sim.domain.instruction import Outcome
from clearing_sim.gateway.answers import UNANSWERED
from clearing_sim.gateway.client import HttpGateway
from clearing_sim.gateway.serving import ServerThread
from clearing_sim.gateway.transport import GatewayConfig
from clearing_sim.sim.examples import example_world, redeem
from clearing_sim.sim.gateway import ExternalCalls
from clearing_sim.sim.world import World

BEHAVIOUR: dict[str, str] = {"mode": "5xx"}


async def _create(request: Request) -> Response:
    mode = BEHAVIOUR["mode"]
    if mode == "5xx":
        return JSONResponse({"error": "down"}, 503)
    if mode == "malformed":
        return JSONResponse({"instructionId": 5, "status": "DONE"}, 201)
    status = "APPROVED" if mode == "backwards" else "RECEIVED"
    return JSONResponse({"instructionId": "ins-1", "status": status}, 201)


async def _read(request: Request) -> Response:
    mode = BEHAVIOUR["mode"]
    if mode == "huge":
        return JSONResponse({"instructionId": "ins-1", "status": "RECEIVED",
                             "padding": "x" * 100_000})
    if mode == "slow":
        await asyncio.sleep(1.0)
    if mode == "backwards":
        return JSONResponse({"instructionId": "ins-1", "status": "RECEIVED"})
    if mode == "no-proof":
        return JSONResponse({"instructionId": "ins-1", "status": "COMPLETED",
                             "onchain": {"txHash": None, "ledgerSequence": "7"}})
    return Response(b"<html>not json</html>", 200)


async def _anything(request: Request) -> Response:
    return JSONResponse({"error": "down"}, 500)


APP = Starlette(routes=[
    Route("/burn-instructions", _create, methods=["POST"]),
    Route("/instructions/{id}", _read, methods=["GET"]),
    Route("/instructions/{id}/execute", _anything, methods=["POST"]),
    Route("/treasury/refunds", _anything, methods=["POST"]),
])


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    with ServerThread(APP) as server:
        yield server.base_url


def _redeem_through(base_url: str, mode: str, issuer_mode: int = 3) -> tuple[Any, Any]:
    BEHAVIOUR["mode"] = mode
    cast = example_world(approval_sla_s=60)
    world, issuer = cast.world, cast.issuers[issuer_mode]
    config = GatewayConfig(base_url, timeout_s=0.3, patience_ms=0)
    world.use_gateway(issuer.id, HttpGateway(world, issuer.id, issuer.name,
                                             world.ledgers[issuer.profile.ledger], config),
                      base_url)
    tx = world.initiate(cast.member.id, redeem(cast.asset(issuer_mode)))
    world.run_all()
    return world, world.transactions[tx.id]


@pytest.mark.parametrize("mode", ["5xx", "malformed", "huge", "slow", "no-proof"])
def test_a_broken_answer_is_logged_and_counts_as_silence(hostile: str, mode: str) -> None:
    world, tx = _redeem_through(hostile, mode)
    assert tx.parked and tx.reason_code == "approval_sla_exceeded"
    sent = world.log.select("saga.instruction_sent", transactionId=tx.id)[0]
    parked = world.log.select("transaction.state", transactionId=tx.id)[-1]
    assert parked.at_ms == sent.at_ms + 60_000  # exactly approvalSlaSeconds, virtual time
    calls = world.log.select("issuer.http", transactionId=tx.id)
    assert calls and all("requestBody" in c.fields for c in calls)
    if mode == "huge":
        assert any("larger than" in str(c["error"]) for c in calls)
    if mode == "slow":
        assert any("no answer within" in str(c["error"]) for c in calls)


def test_a_forbidden_transition_is_a_protocol_violation_read_as_failed(hostile: str) -> None:
    world, tx = _redeem_through(hostile, "backwards")
    assert tx.parked and tx.reason_code == "issuer_failed"
    violations = world.log.select("issuer.protocol_violation", transactionId=tx.id)
    assert violations and "APPROVED → RECEIVED" in str(violations[0]["problem"])


# every call handed out: the shim's clock never waits on a gateway inside a step ------------
def _run_handing_out(world: World) -> int:
    """Run the world to its end as the shim's clock does (``http/clock.py``): stop where
    calls are handed out, make them in order, feed their answers in, step on. The number
    of calls handed out."""
    external = world.external
    assert external is not None
    handed = 0
    while True:
        if external.pending:
            batch = external.take()
            handed += len(batch)
            ExternalCalls.answer(batch, [work() for work, _ in batch])
        elif world.env.peek() == float("inf"):
            return handed
        else:
            world.env.step()


def _handing_out(base_url: str) -> tuple[World, HttpGateway, str]:
    """A redeem on a gateway whose instruction POST is never answered (503), run with
    ``World.external`` set until it parks; the world, the gateway, the placeholder's id."""
    BEHAVIOUR["mode"] = "5xx"
    cast = example_world(approval_sla_s=60)
    world, issuer = cast.world, cast.issuers[3]
    world.external = ExternalCalls(world.env)
    gateway = HttpGateway(world, issuer.id, issuer.name, world.ledgers[issuer.profile.ledger],
                          GatewayConfig(base_url, timeout_s=0.3, patience_ms=0))
    world.use_gateway(issuer.id, gateway, base_url)
    tx = world.initiate(cast.member.id, redeem(cast.asset(3)))
    assert _run_handing_out(world) > 0
    assert world.transactions[tx.id].parked
    [placeholder] = [i for i in gateway.instructions if i.startswith(UNANSWERED)]
    return world, gateway, placeholder


def test_expire_hands_its_last_replay_out_instead_of_calling_inside_the_step(
        hostile: str) -> None:
    """docs/conformance.md, "How virtual time meets wall time": expiring a never-answered
    instruction replays its POST once more (a replay the spec makes safe), handed out to
    whoever steps the world like every other call: the shim's clock makes it off its event
    loop, so a slow issuer never holds the shim inside an engine step."""
    world, gateway, placeholder = _handing_out(hostile)
    calls = len(world.log.select("issuer.http"))
    expiring = world.env.process(gateway.expire(placeholder))
    assert _run_handing_out(world) == 1  # made by the driver, not inside the step
    assert expiring.value is True
    replay = world.log.select("issuer.http")[calls:]
    assert [(c["method"], c["url"]) for c in replay] == [("POST", hostile + "/burn-instructions")]
    [expired] = world.log.select("issuer.expired")
    assert expired["instructionId"] == placeholder and expired.at_ms == replay[0].at_ms


def test_arm_hands_the_provider_state_call_out_ahead_of_later_calls(hostile: str) -> None:
    """Arming (``POST /api/v1/conformance/run``, a route that cannot wait) hands the
    provider-state set-up call out at once, ahead of any call the engine makes after it;
    ``issuer.armed`` is logged, at the arm's virtual instant, when its answer is fed in."""
    world, gateway, _ = _handing_out(hostile)
    gateway.config = GatewayConfig(hostile, timeout_s=0.3, patience_ms=0,
                                   provider_states_url=hostile + "/_pact/provider-states")
    [tx] = list(world.transactions)
    gateway.arm(tx.id, Outcome.FAILED)
    assert world.external is not None and len(world.external.pending) == 1
    assert world.log.select("issuer.armed") == []  # no answer yet: nothing said
    at_ms = world.now_ms
    assert _run_handing_out(world) == 1
    [armed] = world.log.select("issuer.armed")
    assert (armed["via"], armed.at_ms) == ("provider-state-refused", at_ms)  # no such route
    call = world.log.select("issuer.http")[-1]
    assert (call["url"], call["status"]) == (hostile + "/_pact/provider-states", 404)


RECORDED: list[tuple[str, bytes, dict[str, str]]] = []


async def _record(request: Request) -> Response:
    RECORDED.append((request.url.path, await request.body(), dict(request.headers)))
    if request.url.path.endswith("-instructions"):
        return JSONResponse({"instructionId": "ins-9", "status": "RECEIVED"}, 201)
    return JSONResponse({"instructionId": "ins-9", "status": "RECEIVED"})


def test_instruction_bodies_are_the_specs_byte_for_byte() -> None:
    """Spec, Issuer-side contract: idempotencyKey (UUIDv5 of command id and leg), reference
    (≤ 35 characters), sourceWalletId, amount (decimal string), assetCode; compact JSON."""
    import json
    import uuid

    from clearing_sim.domain.ids import instruction_idempotency_key, instruction_reference

    app = Starlette(routes=[Route("/{path:path}", _record, methods=["GET", "POST"])])
    RECORDED.clear()
    with ServerThread(app) as server:
        cast = example_world(approval_sla_s=10)
        world, issuer = cast.world, cast.issuers[3]
        config = GatewayConfig(server.base_url, patience_ms=0, bearer="b")
        world.use_gateway(issuer.id, HttpGateway(world, issuer.id, issuer.name,
                                                 world.ledgers[issuer.profile.ledger], config),
                          server.base_url)
        tx = world.initiate(cast.member.id, redeem(cast.asset(3), "12.50"))
        world.run_all()
    path, raw, headers = RECORDED[0]
    assert path == "/burn-instructions"
    assert headers["authorization"] == "Bearer b"
    assert headers["content-type"] == "application/json"
    body = json.loads(raw)
    assert raw == json.dumps(body, separators=(",", ":")).encode()
    assert list(body) == ["idempotencyKey", "reference", "sourceWalletId", "amount",
                          "assetCode"]
    record = world.transactions[tx.id]
    assert body["idempotencyKey"] == instruction_idempotency_key(record.command_id, "burn")
    assert uuid.UUID(body["idempotencyKey"]).version == 5
    assert body["reference"] == instruction_reference(tx.id) and len(body["reference"]) <= 35
    assert body["amount"] == "12.50" and body["assetCode"] == cast.asset(3).code
    refunds = [r for r in RECORDED if r[0] == "/treasury/refunds"]  # Mode 3 silence: refund
    assert refunds and set(json.loads(refunds[0][1])) == {"transactionId", "reason",
                                                           "refundToWalletId"}
