"""The kit's status-webhook receiver over HTTPS, with the service's webhook certificate from
the test CA (``clearing-sim issuer certs``), as a real service's webhook endpoint: a real
handshake that an issuer's gateway verifies against the CA it was given.

Spec, Issuer-side contract: the issuer sends signed status webhooks to its declared
``webhookUrl``; Authentication 8: certificates from the onboarding CA."""

from __future__ import annotations

import socket
import time
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from clearing_sim.conformance.cli import conformance
from clearing_sim.domain.signing import signature_header
from clearing_sim.gateway.callbacks import CallbackReceiver
from clearing_sim.gateway.client import CallbackQueue
from clearing_sim.gateway.serving import ServerTls
from clearing_sim.tls import CertBundle, client_context
from tests.gateway.conftest import run_kit

from .conftest import Served

RAW = b'{"instructionId":"i-1","status":"APPROVED"}'


def _post(url: str, verify: Any) -> httpx.Response:
    header = signature_header("whsec_x", int(time.time()), RAW)
    with httpx.Client(verify=verify, timeout=5) as client:
        return client.post(url, content=RAW, headers={"Service-Signature": header})


def test_the_receiver_serves_https_that_a_client_trusting_the_test_ca_verifies(
        certs: CertBundle) -> None:
    queue = CallbackQueue()
    tls = ServerTls(certs.webhook_cert, certs.webhook_key)
    with CallbackReceiver(queue, tls=tls) as receiver:
        assert receiver.url.startswith("https://127.0.0.1:")
        answer = _post(receiver.url, client_context(certs.ca_cert))
    assert answer.status_code == 200
    [(signature, raw, _)] = queue.take()
    assert raw == RAW and signature is not None and signature.startswith("t=")
    assert receiver.handshake_failures == []


def test_a_client_that_does_not_trust_the_test_ca_fails_the_handshake(
        certs: CertBundle) -> None:
    queue = CallbackQueue()
    with CallbackReceiver(queue, tls=ServerTls(certs.webhook_cert, certs.webhook_key)) \
            as receiver:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            _post(receiver.url, True)  # the system store: no test CA in it
        for _ in range(100):  # the server's side of the failed handshake, in its thread
            if receiver.handshake_failures:
                break
            time.sleep(0.01)
    assert queue.take() == []
    assert receiver.handshake_failures


def test_plain_http_to_the_https_receiver_is_refused(certs: CertBundle) -> None:
    queue = CallbackQueue()
    with CallbackReceiver(queue, tls=ServerTls(certs.webhook_cert, certs.webhook_key)) \
            as receiver:
        plain = receiver.url.replace("https://", "http://")
        with pytest.raises(httpx.HTTPError):
            _post(plain, True)
    assert queue.take() == []


def _https_callbacks(certs: CertBundle) -> list[str]:
    return ["--callback-tls-cert", str(certs.webhook_cert),
            "--callback-tls-key", str(certs.webhook_key)]


def test_the_kit_takes_signed_status_webhooks_over_https_from_the_reference_gateway(
        serve: type[Served], certs: CertBundle) -> None:
    gateway = serve("--webhook-ca", str(certs.ca_cert))
    code, report = run_kit(gateway.base_url, *_https_callbacks(certs))
    assert code == 0, report
    assert any(n.startswith("status webhooks to https://127.0.0.1:") for n in report["notes"])
    signatures = next(c for c in report["checks"] if c["id"] == "callback_signatures")
    verified = [n for n in signatures["evidence"]["notes"] if n.endswith("-> verified")]
    assert verified, signatures
    assert not any("handshake failed" in n for n in report["notes"])


def test_a_gateway_that_does_not_trust_the_receivers_ca_delivers_nothing(
        serve: type[Served], certs: CertBundle) -> None:
    """Without --webhook-ca the reference gateway checks the receiver against the system
    store: every handshake fails, no callback arrives, and the report says why."""
    gateway = serve()
    code, report = run_kit(gateway.base_url, *_https_callbacks(certs))
    assert code == 1
    failed = {c["id"] for c in report["checks"] if c["verdict"] == "fail"}
    assert failed == {"callback_signatures"}, report
    assert any("callback TLS handshake failed" in n for n in report["notes"]), report["notes"]


def test_callback_tls_options_go_together_and_bad_files_exit_2(certs: CertBundle) -> None:
    half = CliRunner().invoke(conformance, [
        "issuer", "--api-base-url", "http://127.0.0.1:9", "--triggers",
        "--callback-tls-cert", str(certs.webhook_cert)])
    assert half.exit_code == 2 and "go together" in half.output


def _raw_post(port: int, head: bytes, body: bytes = b"") -> bytes:
    """One request as bytes on a plain socket; the status line of the answer. Nothing is
    sent that the receiver might leave unread (its close would then be a reset)."""
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(head + body)
        return sock.recv(200).split(b"\r\n", 1)[0]


@pytest.mark.parametrize(("length", "status"), [
    (b"-1", b"400"), (b"+5", b"400"), (b"5 5", b"400"), (b"\xd9\xa3", b"400"),
    (b"65537", b"413"), (b"99999999999999999999", b"413"),
    (str(len(RAW)).encode(), b"200")])
def test_a_callbacks_length_is_a_plain_number_within_the_bound(length: bytes,
                                                               status: bytes) -> None:
    """A ``Content-Length: -1`` passed the size check and read the connection to its end
    (a flood of 2.8 GB into the kit, unauthenticated). Only a plain number up to
    ``BODY_MAX`` is read; the queue holds only what was read whole."""
    queue = CallbackQueue()
    with CallbackReceiver(queue) as receiver:
        port = int(receiver.url.split(":")[2].split("/")[0])
        head = (b"POST /issuer-webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: " + length
                + b"\r\n\r\n")
        body = RAW if status == b"200" else b""  # a refusal reads no body (a -1 read to EOF)
        assert _raw_post(port, head, body).split(b" ")[1] == status
    assert queue.received == ([(None, RAW, queue.received[0][2])] if status == b"200" else [])


def test_the_queue_keeps_at_most_its_bound_and_refuses_the_rest() -> None:
    queue = CallbackQueue()
    kept = [queue.put(None, RAW) for _ in range(CallbackQueue.KEPT_MAX + 5)]
    assert kept.count(True) == CallbackQueue.KEPT_MAX and kept[-5:] == [False] * 5
    assert len(queue.take()) == len(queue.received) == CallbackQueue.KEPT_MAX


def test_a_peer_dripping_its_request_head_is_closed_by_the_header_deadline() -> None:
    """Issue 31 finding 1 for the kit's callback receiver: it was ``http.server`` with a
    thread per connection and a timeout per read, so a byte every 0.1 s held a thread for
    ever; served like every server of the project, the head has a deadline in all."""
    with CallbackReceiver(CallbackQueue(), header_timeout_s=0.5) as receiver:
        port = int(receiver.url.split(":")[2].split("/")[0])
        sock = socket.create_connection(("127.0.0.1", port), timeout=3)
        started, closed = time.monotonic(), False
        try:
            for byte in b"POST /issuer-webhooks HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40:
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
        except OSError:
            closed = True
        if not closed:
            sock.settimeout(1.0)
            try:
                closed = sock.recv(1) == b""
            except OSError:
                closed = True
        sock.close()
        assert closed and time.monotonic() - started < 3.0
        assert httpx.post(receiver.url, content=b"{}").status_code == 200
