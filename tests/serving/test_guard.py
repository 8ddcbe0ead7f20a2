"""The guarded way of serving (``clearing_sim.serving``), in process, for the three apps it
serves (the shim, the reference receiver, the reference issuer gateway) and a probe app.

Issue 31: finding 1 (the header deadline; the cap that evicts the oldest connection without
a complete request head, not per address), finding 4 (a body cut off before its declared
length is never handed to a handler, and costs no traceback) and the §6 item on
absolute-form targets (RFC 9112 §3.2.2: a server MUST accept them). The same checks against
the real commands, each in its own process, are in ``test_slowloris.py`` (``-m slow``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
import resource
import socket
import struct
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from clearing_sim.conformance.receiver_server import receiver_app
from clearing_sim.gateway.reference import GatewaySettings, ReferenceIssuer
from clearing_sim.gateway.reference.app import create_app as issuer_app
from clearing_sim.gateway.serving import ServerThread as TlsServerThread
from clearing_sim.gateway.serving import ServerTls
from clearing_sim.http.app import create_app as shim_app
from clearing_sim.http.options import ServeOptions
from clearing_sim.http.protocol import EnvelopeH11Protocol
from clearing_sim.serving import ServeLimits, ServerThread
from clearing_sim.serving.guard import GuardedH11Protocol
from clearing_sim.serving.server import _RESERVED
from clearing_sim.tls import write_bundle
from clearing_sim.tls.contexts import client_context
from clearing_sim.webhooks import NaiveReceiver

PARTIAL = b"GET /api/v1/system/status HTTP/1.1\r\nHost: x\r\n"


def _probe_app(bodies: list[bytes] | None = None) -> Starlette:
    async def echo(request: HttpRequest) -> PlainTextResponse:
        body = await request.body()
        if bodies is not None:
            bodies.append(body)
        return PlainTextResponse(body)

    async def fast(request: HttpRequest) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def slow(request: HttpRequest) -> PlainTextResponse:
        await asyncio.sleep(0.8)  # inside a request: not evictable
        return PlainTextResponse("slow")

    return Starlette(routes=[Route("/x", fast), Route("/slow", slow),
                             Route("/echo", echo, methods=["POST"])])


#: the three apps the commands serve: the app, its protocol, a path that answers
APPS: dict[str, tuple[Any, type[GuardedH11Protocol], str]] = {
    "shim": (lambda: shim_app(ServeOptions(operator_token="guard-token-1")),
             EnvelopeH11Protocol, "/sim/v1/health"),
    "receiver": (lambda: receiver_app(NaiveReceiver("whsec_guard", lambda: 0)),
                 GuardedH11Protocol, "/transactions/none"),
    "issuer": (lambda: issuer_app(ReferenceIssuer(GatewaySettings())), GuardedH11Protocol,
               "/burn-instructions/none"),
}


@contextmanager
def _serving(app: Any, limits: ServeLimits,
             protocol: type[GuardedH11Protocol] = GuardedH11Protocol) -> Iterator[int]:
    server = ServerThread(app, limits=limits, protocol=protocol).start()
    try:
        yield server.port
    finally:
        server.stop()


def _connect(port: int, sent: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=3)
    if sent:
        sock.sendall(sent)
    return sock


def _get(path: str, close: bool = False) -> bytes:
    last = "Connection: close\r\n" if close else ""
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{last}\r\n".encode()


def _whole(sock: socket.socket) -> bytes:
    """Everything until the server closes (a request sent with ``close``)."""
    data = b""
    while chunk := _answer(sock):
        data += chunk
    return data


def _whole_answer(sock: socket.socket) -> bytes:
    """One answer of a kept-alive connection: its head and ``Content-Length`` bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += _answer(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += _answer(sock)
    return head + b"\r\n\r\n" + body


def _closed(sock: socket.socket, within_s: float = 0.5) -> bool:
    """Whether the server closed ``sock`` (by ``within_s``)."""
    sock.settimeout(within_s)
    try:
        return sock.recv(4096) == b""
    except TimeoutError:
        return False
    except OSError:
        return True  # reset


def _answer(sock: socket.socket, within_s: float = 2.0) -> bytes:
    sock.settimeout(within_s)
    return sock.recv(65536)


def test_a_full_cap_evicts_the_oldest_connection_still_without_a_complete_head() -> None:
    """Issue 31, finding 1: "evicts the oldest connection still without complete headers
    rather than refusing new clients". A connection inside a request is not evicted; all
    peers here share one address, so a per-address rule could not tell them apart."""
    with _serving(_probe_app(), ServeLimits(10.0, 4)) as port:
        oldest = _connect(port, PARTIAL)
        time.sleep(0.05)
        busy = _connect(port, _get("/slow", close=True))
        time.sleep(0.05)
        second = _connect(port, PARTIAL)
        silent = _connect(port)
        time.sleep(0.1)
        newcomer = _connect(port, _get("/x"))
        assert _answer(newcomer).startswith(b"HTTP/1.1 200")
        assert _closed(oldest)
        assert not _closed(second, 0.1) and not _closed(silent, 0.1)
        assert b"slow" in _whole(busy)
        for sock in (oldest, busy, second, silent, newcomer):
            sock.close()


def test_a_cap_full_of_connections_inside_requests_closes_the_new_one() -> None:
    """Nothing to evict: the newcomer is closed at once, the requests under way finish."""
    with _serving(_probe_app(), ServeLimits(10.0, 2)) as port:
        first = _connect(port, _get("/slow", close=True))
        second = _connect(port, _get("/slow", close=True))
        time.sleep(0.2)
        late = _connect(port, _get("/x"))
        assert _closed(late)
        assert b"slow" in _whole(first) and b"slow" in _whole(second)
        for sock in (first, second, late):
            sock.close()


def test_the_header_deadline_runs_again_for_the_next_head_on_a_kept_alive_connection() -> None:
    """A connection that had one answer and then drips its next head (uvicorn's keep-alive
    timeout restarts at every byte), or sends nothing (uvicorn would close it after its
    5 s keep-alive), is closed by the deadline all the same."""
    with _serving(_probe_app(), ServeLimits(0.5, 100)) as port:
        silent = _connect(port, _get("/x"))
        assert _answer(silent).startswith(b"HTTP/1.1 200")
        assert not _closed(silent, 0.2) and _closed(silent, 1.0)
        silent.close()
        sock = _connect(port, _get("/x"))
        assert _answer(sock).startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        closed_after = None
        for byte in PARTIAL:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed_after = time.monotonic() - started
                break
            if _closed(sock, 0.1):
                closed_after = time.monotonic() - started
                break
        sock.close()
    assert closed_after is not None and 0.4 <= closed_after < 1.5, closed_after


def test_a_body_not_complete_by_the_deadline_after_its_head_is_cut_off() -> None:
    """A stalled upload holds a connection the cap cannot evict (it is inside a request):
    the same deadline runs from the end of the head, then the body is cut off and its
    handler never runs; a body that comes in time is echoed."""
    bodies: list[bytes] = []
    with _serving(_probe_app(bodies), ServeLimits(0.5, 100)) as port:
        head = b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
        stalled = _connect(port, head + b"x" * 10)
        started = time.monotonic()
        assert not _closed(stalled, 0.3) and _closed(stalled, 1.2)
        closed_after = time.monotonic() - started
        whole = _connect(port, head + b"y" * 100)
        assert _whole_answer(whole).endswith(b"y" * 100)
        for sock in (stalled, whole):
            sock.close()
    assert 0.3 <= closed_after < 1.5 and bodies == [b"y" * 100]


@pytest.mark.parametrize(("soft", "cap"), [(1_024, 1_024 - _RESERVED), (20_000, 10_000),
                                          (300, 150), (resource.RLIM_INFINITY, 10_000)])
def test_the_cap_is_below_the_descriptor_limit(monkeypatch: pytest.MonkeyPatch, soft: int,
                                               cap: int) -> None:
    """At the descriptor limit every accept() fails (a traceback each, and asyncio stops
    accepting for a second): the default cap leaves room below it."""
    monkeypatch.setattr(resource, "getrlimit", lambda which: (soft, resource.RLIM_INFINITY))
    assert ServeLimits().cap() == cap
    assert ServeLimits(connections_max=7).cap() == 7


@pytest.mark.parametrize("name", sorted(APPS))
def test_half_open_connections_leave_real_clients_answered_within_a_second(name: str) -> None:
    """500 connections that never finish their head against a cap of 50: the oldest are
    evicted, a real client is answered at once; the evictions are one counted line."""
    make, protocol, path = APPS[name]
    with _serving(make(), ServeLimits(10.0, 50), protocol) as port, ExitStack() as held:
        for _ in range(500):
            held.callback(_connect(port, PARTIAL).close)
        started = time.monotonic()
        real = _connect(port, _get(path))
        answer = _answer(real, 5.0)
        answered_s = time.monotonic() - started
        real.close()
    assert answer.startswith(b"HTTP/1.1 ") and answered_s < 1.0, answered_s


@pytest.mark.parametrize("name", sorted(APPS))
def test_a_head_not_complete_by_the_header_deadline_is_closed(name: str) -> None:
    make, protocol, path = APPS[name]
    with _serving(make(), ServeLimits(0.3, 100), protocol) as port:
        silent, partial = _connect(port), _connect(port, PARTIAL)
        time.sleep(0.1)
        assert not _closed(silent, 0.05) and not _closed(partial, 0.05)
        assert _closed(silent, 1.5) and _closed(partial, 1.5)
        real = _connect(port, _get(path))
        assert _answer(real).startswith(b"HTTP/1.1 ")
        for sock in (silent, partial, real):
            sock.close()


@pytest.mark.parametrize("name", sorted(APPS))
def test_an_absolute_form_target_is_served_as_its_path(name: str) -> None:
    """RFC 9112 §3.2.2: ``GET http://h/p`` is ``GET /p`` (it was 404: the path was the URL)."""
    make, protocol, path = APPS[name]
    with _serving(make(), ServeLimits(), protocol) as port:
        answers = []
        for target in (path, f"http://h{path}", f"HTTPS://h:1{path}"):
            sock = _connect(port, _get(target, close=True))
            data = _whole(sock)
            sock.close()
            status, body = data.split(b"\r\n", 1)[0], data.split(b"\r\n\r\n", 1)[1]
            answers.append(status + re.sub(rb'"commandId":"[0-9a-f-]+"', b"", body))
    assert answers[1] == answers[0] and answers[2] == answers[0], answers


def _cut(port: int, head: bytes, sent: bytes, how: str) -> None:
    """``head`` and ``sent`` (less than it declares), then cut: half close (the peer still
    reads), full close, or reset (SO_LINGER 0)."""
    sock = _connect(port, head + sent)
    time.sleep(0.1)
    if how == "half":
        sock.shutdown(socket.SHUT_WR)
        assert _closed(sock, 2.0)  # closed without an answer
    elif how == "reset":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("how", ["half", "full", "reset"])
@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_a_cut_body_reaches_neither_the_receiver_nor_the_gateway_nor_a_log(
        how: str, framing: str) -> None:
    """Issue 31, finding 4, on the reference servers: a delivery or a burn whose body stops
    short (a ``Content-Length`` 500 bytes past what came, or a chunked body without its last
    chunk) is never handled, and Starlette's ``ClientDisconnect`` is no traceback."""
    delivered: list[bytes] = []

    class Spy(NaiveReceiver):
        def handle(self, headers: Any, body: bytes) -> int:
            delivered.append(body)
            return super().handle(headers, body)

    class SpyIssuer(ReferenceIssuer):
        def create(self, kind: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            delivered.append(repr(body).encode())
            return super().create(kind, body)

    gateway = SpyIssuer(GatewaySettings())
    body = b'{"amount": "1.00", "asset": "GBPE", "walletAddress": "0xabc"}'
    framed = body if framing == "length" else b"%x\r\n%s\r\n" % (len(body), body)
    size = (f"Content-Length: {len(body) + 500}" if framing == "length"
            else "Transfer-Encoding: chunked")
    records = _Records()
    for app, path in ((receiver_app(Spy("whsec_cut", lambda: 0)), "/webhooks"),
                      (issuer_app(gateway), "/burn-instructions")):
        with _serving(app, ServeLimits()) as port:
            # after uvicorn configured its loggers (which drops any handler already there)
            logging.getLogger("uvicorn.error").addHandler(records)
            try:
                head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                        f"\r\n{size}\r\n\r\n").encode()
                _cut(port, head, framed, how)
                time.sleep(0.2)
            finally:
                logging.getLogger("uvicorn.error").removeHandler(records)
    assert delivered == []
    assert [r for r in records.records if r.exc_info or r.levelno >= logging.ERROR] == []


def test_a_tls_handshake_not_finished_by_the_header_deadline_is_closed(
        tmp_path: Path) -> None:
    """Issue 31 finding 1 over TLS (``issuer serve --tls-cert``): a peer that opens the
    connection and never finishes its handshake never reaches the gate (asyncio hands the
    protocol over after the handshake), so the header deadline must bound the handshake too;
    it was asyncio's default of 60 s. A real client still completes its handshake and is
    answered."""
    bundle = write_bundle(tmp_path, dt.datetime.now(dt.UTC))
    tls = ServerTls(bundle.server_cert, bundle.server_key)
    server = TlsServerThread(issuer_app(ReferenceIssuer(GatewaySettings())),
                             tls=tls, limits=ServeLimits(0.5, 100)).start()
    try:
        silent = _connect(server.port)
        half_hello = _connect(server.port, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
        time.sleep(0.1)
        assert not _closed(silent, 0.05) and not _closed(half_hello, 0.05)
        assert _closed(silent, 3.0) and _closed(half_hello, 3.0)
        answer = httpx.get(f"{server.base_url}/burn-instructions/none",
                           verify=client_context(bundle.ca_cert), timeout=5)
        assert answer.status_code == 404
        for sock in (silent, half_hello):
            sock.close()
    finally:
        server.stop()
