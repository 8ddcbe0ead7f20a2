"""The receivers as HTTP servers: deliveries in, statuses out, the probe, fetching over HTTP
(spec, Events: guarantee 3 — the receiver fetches the transaction before changing state)."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.conformance.receiver_server import (
    HttpTransactionSource,
    ReceiverServer,
    receiver_app,
)
from clearing_sim.service.messages import Request, Response
from clearing_sim.webhooks import NaiveReceiver, ReferenceReceiver, signature_header
from tests.conformance.conftest import SECRET, free_port

BODY = (b'{"id":"evt_1","type":"transaction.in_flight","createdAt":"2026-01-01T00:00:00Z",'
        b'"data":{"transactionId":"tx-1","paymentReference":"R","lifecycleStatus":"in-flight",'
        b'"terminal":false,"parked":false}}')


def _post(url: str, t: int, sent: bytes = BODY) -> httpx.Response:
    """``BODY`` signed at ``t``; ``sent`` is what goes on the wire."""
    return httpx.post(f"{url}/webhooks", content=sent, headers={
        "Service-Signature": signature_header(SECRET, BODY, t), "Service-Webhook-Id": "evt_1"})


def test_the_naive_server_takes_a_delivery_and_shows_its_view_any_t() -> None:
    lines: list[str] = []
    server = ReceiverServer(receiver_app(NaiveReceiver(SECRET, lambda: 1_000, None),
                                         echo=lines.append)).start()
    try:
        assert httpx.get(f"{server.url}/transactions/tx-1").status_code == 404
        assert _post(server.url, t=1).status_code == 200  # no replay window at all
        assert httpx.get(f"{server.url}/transactions/tx-1").json() == {
            "lifecycleStatus": "in-flight", "parked": False, "terminal": False}
        assert _post(server.url, t=1, sent=BODY + b" ").status_code == 401
        assert lines == ["<-- evt_1 [200] ok", "<-- evt_1 [401] signature refused"]
    finally:
        server.stop()


def test_the_reference_server_answers_503_when_it_cannot_fetch() -> None:
    source = HttpTransactionSource(f"http://127.0.0.1:{free_port()}/api/v1/")
    assert source.base.endswith(f":{source.base.rsplit(':', 1)[1]}")
    hook = ReferenceReceiver(source, "sk_sandbox_x", SECRET, lambda: int(time.time()))
    server = ReceiverServer(receiver_app(hook)).start()
    try:
        response = _post(server.url, t=int(time.time()))
        assert response.status_code == 503 and "retry" in response.text
        assert hook.fetch_failures == 1 and not hook.views
    finally:
        server.stop()


def test_the_http_source_strips_api_v1_and_says_503_for_no_answer() -> None:
    source = HttpTransactionSource(f"http://127.0.0.1:{free_port()}/api/v1")
    assert not source.base.endswith("/api/v1")
    assert source.handle(Request.build("GET", "/api/v1/transactions/x")).status == 503


def _event(transaction_id_json: str, event_id: str = "evt_1") -> bytes:
    return (f'{{"id":"{event_id}","type":"transaction.in_flight",'
            '"createdAt":"2026-01-01T00:00:00Z",'
            f'"data":{{"transactionId":{transaction_id_json},"paymentReference":"R",'
            '"lifecycleStatus":"in-flight","terminal":false,"parked":false}}').encode()


@pytest.fixture(scope="module")
def reference_server() -> Iterator[tuple[str, list[str]]]:
    """A real reference receiver server whose transaction source answers 404 to every
    fetch: its URL, and the paths fetched (cleared by each example)."""
    paths: list[str] = []

    class Source:
        def handle(self, request: Request) -> Response:
            paths.append(request.path)
            return Response(404, (), b"")

    hook = ReferenceReceiver(Source(), "sk_sandbox_x", SECRET, lambda: 1_000)
    server = ReceiverServer(receiver_app(hook)).start()
    try:
        yield server.url, paths
    finally:
        server.stop()


_EVENT_IDS = itertools.count()


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.sampled_from(['"\\ud800"', '"\\udfff"', '"a\\ud800b"', '"../../sim/v1/log"',
                                  '"x?y#z"', '"%2e%2e"', '""', '"\\u0000"', "17", "null"]),
                 st.text(max_size=12).map(json.dumps)))
def test_a_signed_delivery_never_makes_the_reference_server_answer_5xx(
        reference_server: tuple[str, list[str]], value: str) -> None:
    """Issue 31 §7: a signed delivery whose ``transactionId`` was a lone surrogate answered
    500 with a traceback. Whatever the id, the answer is 200, 400 (unreadable) or 503 (could
    not fetch: retry), and the fetch names one path segment of ``/api/v1/transactions``.
    Each example is a new event (its own id) to the same real server."""
    url, paths = reference_server
    paths.clear()
    event_id = f"evt_{next(_EVENT_IDS)}"
    body = _event(value, event_id)
    response = httpx.post(f"{url}/webhooks", content=body, headers={
        "Service-Signature": signature_header(SECRET, body, 1_000),
        "Service-Webhook-Id": event_id})
    assert response.status_code in (200, 400, 503), response.text
    assert all(p.startswith("/api/v1/transactions/") and p.count("/") == 4 for p in paths)
