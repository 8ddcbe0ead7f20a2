"""``POST /sim/v1/conformance/receivers``: the receiver battery from a running shim, against a
real receiver that fetches from that shim (spec, Events: guarantees 1-3)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from clearing_sim.conformance.receiver_kit import CHECKS
from clearing_sim.conformance.receiver_server import (
    HttpTransactionSource,
    ReceiverServer,
    receiver_app,
    wall_clock_s,
)
from clearing_sim.http import ServeOptions, create_app
from clearing_sim.webhooks import ReferenceReceiver
from tests.http.conftest import OP, TOKEN, held_receiver

SECRET = "whsec_route_test"
ROUTE = "/sim/v1/conformance/receivers"


@pytest.fixture
def shim() -> Iterator[ReceiverServer]:
    server = ReceiverServer(create_app(ServeOptions(operator_token=TOKEN))).start()
    yield server
    server.stop()


def _member_key(base: str) -> str:
    issuer = httpx.post(f"{base}/sim/v1/participants", headers=OP, json={
        "kind": "stablecoin_issuer", "name": "Ether Pound", "rtgsBalanceGbp": "1000000.00",
        "assets": [{"code": "GBPE", "ledger": "evm"}]})
    assert issuer.status_code == 201, issuer.text
    member = httpx.post(f"{base}/sim/v1/participants", headers=OP, json={
        "kind": "clearing_member", "name": "Northbank", "wallets": {"GBPE": "1000.00"}})
    assert member.status_code == 201, member.text
    return str(member.json()["data"]["apiKey"])


def _run(base: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{base}{ROUTE}", headers=OP, json=body, timeout=60)


def test_the_battery_runs_from_the_shim_against_a_receiver_that_fetches_from_it(
        shim: ReceiverServer) -> None:
    key = _member_key(shim.url)
    hook = ReferenceReceiver(HttpTransactionSource(shim.url), key, SECRET, wall_clock_s)
    receiver = ReceiverServer(receiver_app(hook)).start()
    try:
        response = _run(shim.url, {"url": f"{receiver.url}/webhooks", "secret": SECRET,
                                   "apiKey": key,
                                   "probeUrl": f"{receiver.url}/transactions/{{id}}"})
    finally:
        receiver.stop()
    assert response.status_code == 200, response.text
    report = response.json()["data"]
    assert report["passed"] and report["exitCode"] == 0
    assert [c["id"] for c in report["checks"]] == list(CHECKS)
    assert hook.accepted >= 7 and hook.rejected >= 11


def test_a_wrong_secret_fails_the_valid_delivery_but_still_reports(
        shim: ReceiverServer) -> None:
    key = _member_key(shim.url)
    hook = ReferenceReceiver(HttpTransactionSource(shim.url), key, SECRET, wall_clock_s)
    receiver = ReceiverServer(receiver_app(hook)).start()
    try:
        response = _run(shim.url, {"url": f"{receiver.url}/webhooks", "secret": "whsec_other",
                                   "apiKey": key})
    finally:
        receiver.stop()
    report = response.json()["data"]
    assert response.status_code == 200 and report["exitCode"] == 1
    assert report["checks"][0]["verdict"] == "fail"


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"url": "http://127.0.0.1:9/x", "secret": "s", "apiKey": "sk_sandbox_nope"}, 409,
     "kit_api_key_unknown"),
    ({"url": "ftp://x", "secret": "s", "apiKey": "k"}, 400, "invalid_value"),
    ({"url": "http://[::1", "secret": "s", "apiKey": "k"}, 400, "invalid_value"),  # was 500
    ({"url": "http://127.0.0.1:99999/x", "secret": "s", "apiKey": "k"}, 400,
     "invalid_value"),  # was 500 (OverflowError inside httpx)
    ({"url": "http://x", "probeUrl": "http://[", "secret": "s", "apiKey": "k"}, 400,
     "invalid_value"),
    ({"url": "http://x", "secret": "s"}, 400, "required"),
    ({"url": "http://x", "secret": "s", "apiKey": "k", "extra": 1}, 400, "unknown_field"),
])
def test_bad_bodies_are_refused_with_the_envelope(shim: ReceiverServer, body: dict[str, Any],
                                                  status: int, code: str) -> None:
    response = _run(shim.url, body)
    assert response.status_code == status, response.text
    assert response.json()["errors"][0]["code"] == code


def test_a_member_with_nothing_to_redeem_and_an_unreachable_receiver(
        shim: ReceiverServer) -> None:
    empty = httpx.post(f"{shim.url}/sim/v1/participants", headers=OP, json={
        "kind": "clearing_member", "name": "Southbank"}).json()["data"]["apiKey"]
    response = _run(shim.url, {"url": "http://127.0.0.1:9/x", "secret": "s", "apiKey": empty})
    assert (response.status_code, response.json()["errors"][0]["code"]) == \
        (409, "kit_nothing_to_redeem")
    key = _member_key(shim.url)
    before = httpx.get(f"{shim.url}/sim/v1/digest", headers=OP).json()["data"]
    response = _run(shim.url, {"url": "http://127.0.0.1:9/x", "secret": "s", "apiKey": key})
    assert (response.status_code, response.json()["errors"][0]["code"]) == \
        (400, "receiver_unreachable")
    # nothing was staged and the clock did not move (they were, before: 3 redeems, 3 min)
    assert httpx.get(f"{shim.url}/sim/v1/digest", headers=OP).json()["data"] == before


def test_a_reset_while_the_battery_runs_ends_it_with_409_not_a_500(
        shim: ReceiverServer) -> None:
    """The battery kept handles to the world it staged in: a reset (or a rewind) during it
    gave a KeyError 500, and a ValueError from unwatching a log it had never watched. It
    ends with 409 ``kit_world_replaced``, and the shim goes on answering."""
    key = _member_key(shim.url)
    answers: list[httpx.Response] = []
    with held_receiver() as receiver:
        battery = threading.Thread(target=lambda: answers.append(_run(shim.url, {
            "url": receiver.url, "secret": SECRET, "apiKey": key})))
        battery.start()
        assert receiver.arrived.wait(20), "the battery never delivered"
        reset = httpx.post(f"{shim.url}/sim/v1/reset", headers=OP, json={}, timeout=30)
        receiver.release.set()
        battery.join(60)
    assert reset.status_code == 200, reset.text
    [answer] = answers
    assert answer.status_code == 409, answer.text
    assert answer.json()["errors"][0]["code"] == "kit_world_replaced"
    assert httpx.get(f"{shim.url}/sim/v1/clock", headers=OP).status_code == 200
