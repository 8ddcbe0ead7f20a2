"""Real webhook deliveries: signed POSTs to a real receiver, outcomes fed back on virtual time."""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from clearing_sim.http.delivery import (
    USER_AGENT,
    RealDeliveries,
    RealOutcome,
    _public_address,
    pinned,
)
from clearing_sim.tls.certs import CertBundle, write_bundle
from clearing_sim.tls.contexts import client_context
from clearing_sim.webhooks import verify
from tests.http.conftest import (
    OP,
    Client,
    Receiver,
    Shim,
    add,
    issuer_body,
    make_client,
    member_body,
    real_answers,
)


@pytest.fixture
def real() -> Iterator[Shim]:
    client = make_client(seed=5, deliver_webhooks=True, allow_private_webhook_urls=True)
    yield Shim(client, add(client, issuer_body()), add(client, member_body()))
    client.close()


def _subscribe(shim: Shim, url: str, *events: str, key: str | None = None) -> dict[str, Any]:
    headers = dict(shim.member.auth)
    if key is not None:
        headers["Idempotency-Key"] = key
    response = shim.client.post("/api/v1/webhooks", headers=headers, json={
        "url": url, "events": list(events or ("transaction.settled",))})
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


def _t(signature: str) -> int:
    return int(signature.split(",")[0].removeprefix("t="))


def test_a_settled_redeem_reaches_a_real_receiver_signed_on_virtual_time(
        real: Shim, receiver: Receiver) -> None:
    hook = _subscribe(real, receiver.url, "transaction.received", "transaction.settled")
    tx = real.initiate()
    real.client.advance(3600)
    assert [body for _, body in receiver.received] and len(receiver.received) == 2
    for headers, body in receiver.received:
        signature = headers["Service-Signature"]
        assert verify(hook["signingSecret"], signature, body, now_s=_t(signature))
        assert headers["Content-Type"] == "application/json"
        assert headers["User-Agent"] == USER_AGENT
    settled_headers, settled = receiver.received[-1]
    attempts = real.client.op("GET", f"/sim/v1/deliveries?transactionId={tx}").json()["data"]
    assert [a["eventType"] for a in attempts] == ["transaction.received",
                                                  "transaction.settled"]
    assert attempts[-1]["request"]["body"].encode() == settled  # the bytes that were signed
    assert attempts[-1]["request"]["headers"]["Service-Signature"] == settled_headers[
        "Service-Signature"]
    assert attempts[-1]["outcome"] == "delivered"
    # t is the attempt's virtual send time, not the wall clock
    sent = real.client.sim.world.epoch_ms // 1000 + 52
    assert abs(_t(settled_headers["Service-Signature"]) - sent) < 60


def test_a_failing_real_receiver_is_retried_on_the_virtual_schedule(
        real: Shim, receiver: Receiver) -> None:
    _subscribe(real, receiver.url)
    receiver.status = 500
    tx = real.initiate()
    real.client.advance(3600)  # settles at 67 s (seed 5); attempts at +0, +60, +360, +2160 s
    attempts = real.client.op("GET", f"/sim/v1/deliveries?transactionId={tx}").json()["data"]
    # each outcome is learned when the next attempt goes out: the 4th is still on the wire
    assert [(a["attempt"], a["response"]) for a in attempts] == [
        (n, {"status": 500}) for n in (1, 2, 3)]
    real_answers(real.client)  # the 4th POST went out (and was answered 500) before the change
    assert len(receiver.received) == 4
    receiver.status = 204
    real.client.advance(50_400)  # attempt 5 at +9360 s, learned 12 h later (+52560 s)
    attempts = real.client.op("GET", f"/sim/v1/deliveries?transactionId={tx}").json()["data"]
    assert [a["outcome"] for a in attempts] == ["failed"] * 4 + ["delivered"]
    sent_s = [_t(a["request"]["headers"]["Service-Signature"]) for a in attempts]
    assert [s - sent_s[0] for s in sent_s] == [0, 60, 360, 2160, 9360]
    assert len(receiver.received) == 5
    assert len({headers["Service-Webhook-Id"] for headers, _ in receiver.received}) == 1


def test_the_simulated_endpoint_stands_in_front_of_the_real_receiver(
        real: Shim, receiver: Receiver) -> None:
    _subscribe(real, receiver.url)
    real.client.op("PUT", "/sim/v1/receivers", {"url": receiver.url, "status": 503,
                                                "until": "2026-01-01T00:05:00Z"})
    real.initiate()
    real.client.advance(3600)
    outcomes = [a["outcome"] for a in real.client.op("GET", "/sim/v1/deliveries").json()["data"]]
    assert outcomes == ["failed", "failed", "delivered"]
    assert len(receiver.received) == 1  # only the request that found the endpoint up


def test_a_network_duplicate_reaches_the_real_receiver_twice(real: Shim,
                                                             receiver: Receiver) -> None:
    _subscribe(real, receiver.url)
    real.client.op("PUT", "/sim/v1/receivers", {"url": receiver.url, "status": 200,
                                                "duplicateRate": 1})
    real.initiate()
    real.client.advance(3600)
    ids = [headers["Service-Webhook-Id"] for headers, _ in receiver.received]
    assert len(ids) == 2 and ids[0] == ids[1]


def test_an_unreachable_receiver_answers_like_a_gateway(real: Shim) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/hooks"  # nobody listens
    _subscribe(real, url)
    real.initiate()
    real.client.advance(3600)
    records = real.client.op("GET", "/sim/v1/log?kind=http.delivery").json()["data"]
    assert records and all(r["fields"]["status"] == 502 for r in records)
    assert "ConnectError" in records[0]["fields"]["error"]
    attempts = real.client.op("GET", "/sim/v1/deliveries").json()["data"]
    assert [a["outcome"] for a in attempts] == ["failed"] * 3  # the 4th learned at +9360 s


def test_private_urls_keep_their_real_url_everywhere(real: Shim, receiver: Receiver) -> None:
    first = _subscribe(real, receiver.url, key="hook-1")
    replay = _subscribe(real, receiver.url, key="hook-1")
    assert first == replay and first["url"] == receiver.url
    listed = real.client.get("/api/v1/webhooks", headers=real.member.auth).json()["data"]
    assert [h["url"] for h in listed] == [receiver.url]
    records = real.client.op("GET", "/sim/v1/log?kind=webhook.subscribed").json()["data"]
    assert [r["fields"]["url"] for r in records] == [receiver.url]
    bad = real.client.post("/api/v1/webhooks", headers=real.member.auth,
                           json={"url": "ftp://127.0.0.1/x", "events": ["transaction.settled"]})
    assert bad.json()["errors"][0]["code"] == "invalid_url"


@pytest.mark.parametrize(("url", "code"), [("http://127.0.0.1:9/hooks", "invalid_url"),
                                           ("https://127.0.0.1:9/hooks", "url_not_public"),
                                           ("https://localhost/hooks", "url_not_public")])
def test_without_the_option_the_public_address_rule_stands(url: str, code: str) -> None:
    client: Client = make_client(seed=5, deliver_webhooks=True)
    try:
        add(client, issuer_body())
        member = add(client, member_body())
        response = client.post("/api/v1/webhooks", headers=member.auth,
                               json={"url": url, "events": ["transaction.settled"]})
        assert response.status_code == 400
        assert response.json()["errors"][0]["code"] == code
    finally:
        client.close()


def test_the_real_resolver_is_checked_too() -> None:
    for url in ("http://127.0.0.1:9/", "https://localhost:9/"):
        refused = asyncio.run(_public_address(url))
        assert isinstance(refused, str) and refused.startswith("address_not_public")


# hostile receivers (issue 14, findings 6 and 7) ------------------------------------------------
class _Hostile(BaseHTTPRequestHandler):
    mode = "drip"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", str(100 << 20))
        self.end_headers()
        try:
            while True:  # one byte at a time (drip) or 100 MiB as fast as it goes (flood)
                self.wfile.write(b"x" if self.mode == "drip" else b"x" * 65536)
                self.wfile.flush()
                if self.mode == "drip":
                    time.sleep(0.2)
        except OSError:
            return

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _one(deliveries: RealDeliveries, url: str) -> RealOutcome:
    async def go() -> RealOutcome:
        async with httpx.AsyncClient(trust_env=False) as client:
            return await deliveries._post(client, url, (), b"{}")
    return asyncio.run(go())


def test_a_dripping_receiver_is_cut_off_at_the_total_deadline(
        hostile: ThreadingHTTPServer) -> None:
    """Finding 6: the timeout was per read, so one byte every 5 s held an advance for 40 s."""
    _Hostile.mode = "drip"
    started = time.monotonic()
    outcome = _one(RealDeliveries(True, deadline_s=0.6),
                   f"http://127.0.0.1:{hostile.server_address[1]}/h")
    assert outcome.status == 504 and time.monotonic() - started < 3


def test_a_flooding_receiver_is_read_no_further_than_the_cap(
        hostile: ThreadingHTTPServer) -> None:
    """Finding 6: a 100 MiB answer was read whole; only its status counts."""
    _Hostile.mode = "flood"
    outcome = _one(RealDeliveries(True, deadline_s=5),
                   f"http://127.0.0.1:{hostile.server_address[1]}/h")
    assert outcome.status == 200


@pytest.mark.parametrize(("url", "address", "expected", "host"), [
    ("https://hooks.example.com/in?a=1", "93.184.216.34", "https://93.184.216.34/in?a=1",
     "hooks.example.com"),
    ("https://hooks.example.com:8443/in", "2606:2800:220:1::1",
     "https://[2606:2800:220:1::1]:8443/in", "hooks.example.com:8443")])
def test_the_request_goes_to_the_address_that_was_checked(url: str, address: str,
                                                          expected: str, host: str) -> None:
    """Finding 7: the name was resolved to check it, then again by httpx to connect."""
    rewritten, host_header, extensions = pinned(url, ip_address(address))
    assert (rewritten, host_header) == (expected, host)
    assert extensions == {"sni_hostname": "hooks.example.com"}


# https receivers and --webhook-ca -----------------------------------------------------------
class _Hooks(BaseHTTPRequestHandler):
    received: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        self.received.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def tls_files(tmp_path: Path) -> CertBundle:
    return write_bundle(tmp_path / "tls", dt.datetime.now(dt.UTC))


@pytest.fixture
def https_receiver(tls_files: CertBundle) -> Iterator[str]:
    """A real HTTPS receiver on loopback whose certificate (for localhost) a private test CA
    signed: what a member's receiver under test usually has."""
    _Hooks.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hooks)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(tls_files.server_cert, tls_files.server_key)
    server.socket = served.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"https://localhost:{server.server_address[1]}/hooks"
    server.shutdown()
    server.server_close()


def test_an_https_receiver_with_a_private_ca_fails_tls_unless_that_ca_is_trusted(
        https_receiver: str, tls_files: CertBundle) -> None:
    """Without ``--webhook-ca`` the receiver's certificate chains to no trusted root: a TLS
    failure answers 502, as a gateway in front of it would; with its CA trusted, the real
    receiver's own status (204) is the attempt's."""
    refused = _one(RealDeliveries(True, deadline_s=5), https_receiver)
    assert refused.status == 502 and refused.error is not None
    assert "CERTIFICATE_VERIFY_FAILED" in refused.error
    trusted = RealDeliveries(True, deadline_s=5, trust=client_context(tls_files.ca_cert))

    async def go() -> RealOutcome:
        async with httpx.AsyncClient(trust_env=False, verify=trusted.trust) as client:
            return await trusted._post(client, https_receiver, (), b"{}")
    assert asyncio.run(go()) == RealOutcome(204)


def test_a_settled_redeem_reaches_an_https_receiver_the_webhook_ca_vouches_for(
        https_receiver: str, tls_files: CertBundle) -> None:
    """End to end through the shim (``serve --deliver-webhooks --webhook-ca``): the signed
    POSTs reach the HTTPS receiver and each attempt is delivered."""
    client = make_client(seed=5, deliver_webhooks=True, allow_private_webhook_urls=True,
                         webhook_ca=tls_files.ca_cert)
    try:
        shim = Shim(client, add(client, issuer_body()), add(client, member_body()))
        hook = _subscribe(shim, https_receiver, "transaction.received", "transaction.settled")
        tx = shim.initiate()
        client.advance(3600)
        attempts = client.get(f"/sim/v1/deliveries?transactionId={tx}",
                              headers=OP).json()["data"]
        assert [a["eventType"] for a in attempts] == ["transaction.received",
                                                      "transaction.settled"]
        assert [a["outcome"] for a in attempts] == ["delivered", "delivered"]
        assert _Hooks.received == [a["request"]["body"].encode() for a in attempts]
        assert hook["url"] == https_receiver
    finally:
        client.close()
