"""The receiver battery over loopback HTTP against the reference and naive receivers (spec,
Events: guarantees 1-3, Signature and its 300-second replay window)."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator

import httpx
import pytest
import stripe
from starlette.applications import Starlette
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from clearing_sim.conformance.forge import FORGED_KINDS
from clearing_sim.conformance.receiver_kit import (
    CHECKS,
    PROCESS_WITHIN_S,
    KitOptions,
    TargetUnreachable,
    probe_target,
)
from clearing_sim.conformance.receiver_run import KitShim
from clearing_sim.conformance.receiver_server import (
    HttpTransactionSource,
    ReceiverServer,
    receiver_app,
    wall_clock_s,
)
from clearing_sim.conformance.report import Exchange, Report, Verdict, exit_code
from clearing_sim.http.kit_shim import run_receiver_kit, shim_api_key
from clearing_sim.webhooks import REPLAY_WINDOW_S, ReferenceReceiver
from tests.conformance.conftest import SECRET, Serve, free_port, free_ports

#: What the naive receiver (dedup on type + transaction, trusts the payload, no window,
#: never fetches) must fail; it must pass every other check. It fails
#: refusal-not-remembered because it accepts the stale attempt (no window at all).
NAIVE_FAILS = {"timestamp-stale", "timestamp-future", "refusal-not-remembered",
               "fetch-failure-retried", "reentry-not-duplicate", "reordered-pair",
               "fetch-after-delivery", "state-after-fetch", "view-matches-service"}
#: The checks that need the receiver's state: skipped without --probe-url.
PROBE_ONLY = {"state-after-fetch", "view-matches-service"}
#: The time limit (``KitOptions.process_within_s``) of runs against receivers that fail: one
#: that never fetches costs the kit the whole limit once per run (10 s by default). The
#: receivers here that pass process in a few ms.
QUICK_S = 1.0


def _run(url: str, port: int, probe: str | None = None, within_s: float = QUICK_S) -> Report:
    return asyncio.run(run_receiver_kit(KitOptions(f"{url}/webhooks", SECRET, probe,
                                                   process_within_s=within_s), port=port))


def _verdicts(report: Report) -> dict[str, Verdict]:
    return {check.id: check.verdict for check in report.checks}


def test_the_reference_receiver_passes_every_check_with_its_probe(
        serve_receiver: Serve) -> None:
    server, port = serve_receiver("reference")
    report = _run(server.url, port, f"{server.url}/transactions/{{id}}", PROCESS_WITHIN_S)
    assert [c.id for c in report.checks] == list(CHECKS)
    assert _verdicts(report) == dict.fromkeys(CHECKS, Verdict.PASS), report.checks
    assert exit_code(report) == 0
    assert not any(n.startswith("advice: ") for n in report.notes)  # it fetches, then answers
    _stripe_agrees(report)


def _stripe_verifies(exchange: Exchange) -> bool:
    header = dict(exchange.request_headers).get("Service-Signature")
    try:  # Stripe's own header is Stripe-Signature: its value is passed
        stripe.WebhookSignature.verify_header(exchange.request_body.encode(), header, SECRET,
                                              tolerance=REPLAY_WINDOW_S)
    except stripe.SignatureVerificationError:
        return False
    return True


def _stripe_agrees(report: Report) -> None:
    """The deliveries the kit really sent, as its evidence holds them: valid ones verify with
    stripe-python, forged ones do not (a future t is out of the spec's window only: Stripe
    bounds the age of t, so it is left out here; tests/conformance/test_forge.py)."""
    for check in report.checks:
        posts = [e for e in check.evidence.exchanges if e.method == "POST"]
        if check.id == "refusal-not-remembered":  # a stale t, a wrong v1, then valid
            assert [_stripe_verifies(e) for e in posts] == [False, False, True]
        elif check.id in FORGED_KINDS and check.id != "timestamp-future":
            assert posts and not any(_stripe_verifies(e) for e in posts), check.id
        elif check.id not in FORGED_KINDS:
            assert all(_stripe_verifies(e) for e in posts), check.id


def test_the_naive_receiver_fails_exactly_the_checks_it_should(serve_receiver: Serve) -> None:
    server, port = serve_receiver("naive")
    report = _run(server.url, port, f"{server.url}/transactions/{{id}}")
    failed = {c for c, v in _verdicts(report).items() if v is Verdict.FAIL}
    assert failed == NAIVE_FAILS
    assert all(v is Verdict.PASS for c, v in _verdicts(report).items() if c not in NAIVE_FAILS)
    assert exit_code(report) == 1
    reentry = next(c for c in report.checks if c.id == "reentry-not-duplicate")
    assert '"parked": true' in reentry.reason  # its view stayed parked: taken for a duplicate


def test_without_a_probe_fetches_judge_and_the_view_check_is_skipped(
        serve_receiver: Serve) -> None:
    server, port = serve_receiver("naive")
    report = _run(server.url, port)
    verdicts = _verdicts(report)
    assert {c for c, v in verdicts.items() if v is Verdict.SKIP} == PROBE_ONLY
    assert {c for c, v in verdicts.items() if v is Verdict.FAIL} == NAIVE_FAILS - PROBE_ONLY
    skipped = [c for c in report.checks if c.verdict is Verdict.SKIP]
    assert all(c.reason.startswith("no --probe-url: ") for c in skipped)


def test_every_delivery_carries_its_request_and_response_as_evidence(
        serve_receiver: Serve) -> None:
    server, port = serve_receiver("reference")
    seen: list[KitShim] = []
    report = asyncio.run(run_receiver_kit(
        KitOptions(f"{server.url}/webhooks", SECRET), port=port, on_ready=seen.append))
    assert seen[0].api_key == shim_api_key(0) and seen[0].base_url.endswith(f":{port}")
    stale = next(c for c in report.checks if c.id == "timestamp-stale")
    exchange = stale.evidence.exchanges[0]
    assert exchange.status == 401 and dict(exchange.request_headers)["Service-Webhook-Id"]
    assert '"type":"transaction.in_flight"' in exchange.request_body


def test_a_receiver_that_answers_nothing_is_unreachable_not_failed() -> None:
    with pytest.raises(TargetUnreachable, match="ConnectError"):
        receiver_port, shim_port = free_ports(2)
        _run(f"http://127.0.0.1:{receiver_port}", shim_port)


def test_a_receiver_that_accepts_everything_fails_every_refusal() -> None:
    async def ok(_: object) -> Response:
        return Response("ok")

    server = ReceiverServer(Starlette(routes=[Route("/webhooks", ok, methods=["POST"])]))
    server.start()
    try:
        verdicts = _verdicts(_run(server.url, free_port()))
    finally:
        server.stop()
    for kind in ("signature-wrong", "secret-wrong", "body-tampered", "signature-missing",
                 "signature-malformed", "timestamp-stale", "timestamp-future"):
        assert verdicts[kind] is Verdict.FAIL
    assert verdicts["valid-delivery"] is Verdict.PASS


def test_probe_urls_take_the_id_in_place_or_at_the_end() -> None:
    assert probe_target("http://r/x/{id}/view", "t1") == "http://r/x/t1/view"
    assert probe_target("http://r/tx/", "t1") == "http://r/tx/t1"
    assert httpx.URL(probe_target("http://r/tx", "t1")).path == "/tx/t1"


def test_a_receiver_with_the_wrong_api_key_is_told_so() -> None:
    port = free_port()
    hook = ReferenceReceiver(HttpTransactionSource(f"http://127.0.0.1:{port}"),
                             "sk_sandbox_" + "0" * 64, SECRET, wall_clock_s)
    server = ReceiverServer(receiver_app(hook)).start()
    try:
        report = _run(server.url, port)
    finally:
        server.stop()
    valid = report.checks[0]  # it answered 503: not processed
    assert valid.verdict is Verdict.FAIL and "the shim answered 401" in valid.reason
    fetch = next(c for c in report.checks if c.id == "fetch-after-delivery")
    assert fetch.verdict is Verdict.SKIP and "no new event was answered 2xx" in fetch.reason


_BOMB = gzip.compress(gzip.compress(bytes(64 << 20), compresslevel=9), compresslevel=9)


def test_a_receiver_answering_a_bomb_and_a_drip_costs_the_kit_its_bounds_only() -> None:
    """A receiver's answer is untrusted input: the kit read it whole, inflated (a 1.5 MB
    gzip bomb took it to 9 GB) and with no deadline on the whole (a probe dripping a byte
    every 0.1 s held it as long as it liked). Now each answer is read raw, at most 64 KiB,
    whole within the kit's timeout; the bomb is a 200 like any other, the drip no answer."""
    async def bomb(_: object) -> Response:
        return Response(_BOMB, headers={"Content-Encoding": "gzip, gzip"})

    async def drip(_: object) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            for _ in range(600):  # a minute, unless the kit hangs up
                await asyncio.sleep(0.1)
                yield b" "
        return StreamingResponse(body(), media_type="application/json")

    server = ReceiverServer(Starlette(routes=[Route("/webhooks", bomb, methods=["POST"]),
                                              Route("/transactions/{id}", drip)]))
    server.start()
    try:
        report = asyncio.run(run_receiver_kit(KitOptions(
            f"{server.url}/webhooks", SECRET, f"{server.url}/transactions/{{id}}",
            timeout_s=1.0, process_within_s=QUICK_S), port=free_port()))
    finally:
        server.stop()
    verdicts = _verdicts(report)
    assert verdicts["valid-delivery"] is Verdict.PASS, report.checks
    exchanges = [e for check in report.checks for e in check.evidence.exchanges]
    posts = [e for e in exchanges if e.method == "POST"]
    gets = [e for e in exchanges if e.method == "GET"]
    assert posts and all(len(e.response_body) <= 4 * 65_536 for e in posts)
    assert all("Content-Encoding: gzip, gzip" in (e.error or "") for e in posts)
    assert gets and all(e.status is None and "no answer within 1 s" in (e.error or "")
                        for e in gets)
