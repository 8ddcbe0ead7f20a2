"""A real gateway's answer is input like any other: bounded in size and in time, never
inflated, never a crash (the hostile-input rule; spec, "Issuer-side contract"). Each case is
a real HTTP server on loopback doing what a broken or hostile gateway does."""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import time
from typing import Any

import pytest

from clearing_sim.gateway.serving import ServerThread
from clearing_sim.gateway.transport import RESPONSE_BYTES_MAX, GatewayConfig, Transport
from tests.gateway.conftest import run_kit

#: two gzip layers over 64 MiB of zeros: a few hundred KiB on the wire
_BOMB = gzip.compress(gzip.compress(bytes(64 << 20), compresslevel=9), compresslevel=9)
_DRIP_S = 30.0  # how long the dripping server goes on, at most


async def _hostile(scope: Any, receive: Any, send: Any) -> None:
    """``/gzip2``: the bomb, ``Content-Encoding: gzip, gzip``; ``/drip``: headers, then a
    byte every 0.1 s (each read well inside its timeout); ``/oauth/token``: the bomb as
    the token endpoint's answer; ``/ttl``: a token whose ``expires_in`` is 1e400."""
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/drip":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", b"100000")]})
        for _ in range(int(_DRIP_S / 0.1)):
            try:  # a tenth of a second, or until the client hangs up
                if (await asyncio.wait_for(receive(), 0.1))["type"] == "http.disconnect":
                    return
            except TimeoutError:
                pass
            await send({"type": "http.response.body", "body": b" ", "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    if path == "/ttl":
        body = b'{"access_token":"t0ken","token_type":"Bearer","expires_in":1e400}'
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-encoding", b"gzip, gzip"),
                            (b"content-length", str(len(_BOMB)).encode())]})
    await send({"type": "http.response.body", "body": _BOMB})


def _transport(base: str, **more: Any) -> Transport:
    return Transport(GatewayConfig(base, timeout_s=1.0, **more))


def test_a_compressed_answer_is_never_inflated() -> None:
    """Two gzip layers (64 MiB inflated) went past the 64 KiB bound: httpx inflated each
    chunk through both layers before the size was counted (a 2.6 KB answer took the shim to
    3 GB). Identity is asked for; an encoded answer is a malformed one, its bytes as sent."""
    with ServerThread(_hostile) as server:
        transport = _transport(server.base_url)
        try:
            call = transport.request("GET", server.base_url + "/gzip2")
        finally:
            transport.close()
    assert call.status == 200 and call.error is not None
    assert "Content-Encoding: gzip, gzip" in call.error
    assert len(call.response_body.encode("utf-8", "surrogateescape")) <= 4 * RESPONSE_BYTES_MAX
    assert ("Accept-Encoding", "identity") in [(k.title(), v) for k, v in call.request_headers]
    assert call.parsed() is None or call.error  # read as no news by answers._body


def test_an_answer_dripping_under_each_reads_timeout_ends_at_the_calls_deadline() -> None:
    """``timeoutSeconds`` bounded each read only: a byte every 0.1 s held the call (and the
    advance waiting on it) for as long as the gateway liked. The whole body must come
    within the timeout; the drip goes on for 30 s, so an answer means the deadline held."""
    with ServerThread(_hostile) as server:
        transport = _transport(server.base_url)
        try:
            call = transport.request("GET", server.base_url + "/drip")
        finally:
            transport.close()
    assert call.error is not None and "no answer within 1 s" in call.error, call
    assert call.status is None


def test_the_token_endpoints_answer_is_bounded_and_its_lifetime_believed_only_if_sane(
        ) -> None:
    """The OAuth answer was read whole (a 2 MB gzip bomb: 4 GB); ``expires_in: 1e400``
    made a token that never expired. Now the token answer is read as any call's, and a
    lifetime that is not a whole number of seconds up to a day is the default 300 s."""
    with ServerThread(_hostile) as server:
        bombed = _transport(server.base_url, token_url=server.base_url + "/oauth/token",
                            client_id="a", client_secret="b")
        sane = _transport(server.base_url, token_url=server.base_url + "/ttl",
                          client_id="a", client_secret="b")
        try:
            refused = bombed.request("GET", server.base_url + "/gzip2")
            sane.request("GET", server.base_url + "/gzip2")
            assert sane.token is not None and sane.token.value == "t0ken"
            lifetime = sane.token.expires_at
        finally:
            bombed.close()
            sane.close()
    assert refused.error is not None and "OAuth token request" in refused.error
    assert "Content-Encoding: gzip, gzip" in refused.error
    assert lifetime - time.monotonic() < 300


def test_a_gateway_dripping_its_headers_is_given_up_at_the_deadline() -> None:
    """The body's deadline cannot see a status line and headers sent a byte every 0.1 s
    (each read inside its timeout; h11 takes up to 16 KiB of them: hours at that pace). The
    call is given up once it could have timed out, its connection never reused."""
    stop = threading.Event()
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def drip() -> None:
            connection, _ = server.accept()
            with connection:
                connection.recv(65_536)
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 600:
                    if stop.wait(0.1):
                        return
                    try:
                        connection.sendall(bytes([byte]))
                    except OSError:
                        return

        thread = threading.Thread(target=drip, daemon=True)
        thread.start()
        transport = _transport(f"http://127.0.0.1:{port}")
        try:
            call = transport.request("GET", f"http://127.0.0.1:{port}/instructions/x")
        finally:
            stop.set()
            transport.close()
            thread.join(5)
    assert call.status is None and call.error is not None, call
    assert "held its status line and headers" in call.error
    assert transport.abandoned == 1


async def _empty_object(scope: Any, receive: Any, send: Any) -> None:
    """``{}`` with 200 to every request."""
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{}"})


async def _redirect(scope: Any, receive: Any, send: Any) -> None:
    """307 to every request, to a place that does not exist."""
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 307,
                    "headers": [(b"location", b"http://127.0.0.1:9/elsewhere"),
                                (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


@pytest.mark.parametrize("mode", ["2", "3"])
@pytest.mark.parametrize(("app", "refusal"), [
    (_empty_object, "instructionId is missing or not a string"),
    (_redirect, "answered HTTP 307")], ids=["empty-object", "redirect"])
def test_a_gateway_that_accepts_nothing_passes_no_check(app: Any, refusal: str,
                                                        mode: str) -> None:
    """Spec, Conformance: "silence beyond approvalSlaSeconds parks the transaction" is a
    check of an instruction the gateway accepted and then left silent. A gateway answering
    ``{}`` (or a 307) to everything accepted none: silence_parks passed on
    ``"instructionStatuses": []``. Now no check passes on such a gateway, each failure names
    what the gateway answered, and the score says 0 passed."""
    with ServerThread(app) as server:
        code, report = run_kit(server.base_url, "--mode", mode)
    assert code == 1
    verdicts = {c["id"]: c["verdict"] for c in report["checks"]}
    assert "pass" not in verdicts.values(), verdicts
    silence = next(c for c in report["checks"] if c["id"] == "silence_parks")
    assert "an instruction the issuer accepted" in silence["reason"]
    assert refusal in silence["reason"] and "(×" in silence["reason"]  # once, with a count
    assert report["score"]["passed"] == 0
