"""The shim over a raw socket: what reaches the API (issue 31).

- Finding 4: ``POST /api/v1/transactions`` with a ``Content-Length`` 500 bytes past the JSON
  sent (or a chunked body without its last chunk), then a half close, a full close or a
  reset: the transaction was created every time. Now no transaction, no journal entry.
- §6: a body declared as anything but JSON is 415 ``unsupported_media_type`` (it created a
  transaction as ``application/xml``); a request with no body needs no ``Content-Type``;
  the API in process (scenarios, replays of journals) reads none.
- §6: an absolute-form target (``GET http://h/api/v1/…``) is served as its path (was 404).
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.cli import load_world
from clearing_sim.http.protocol import EnvelopeH11Protocol
from clearing_sim.http.replay import open_journal
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request
from clearing_sim.serving import ServerThread
from tests.http.conftest import redeem_body
from tests.http.served import WORLD

TOKEN = "cut-body-token-1"


class Served:
    def __init__(self, app: Starlette, port: int, journal: Path) -> None:
        self.app, self.port, self.journal = app, port, journal
        self.key = next(s.api_key for s in app.state.sim.staged if s.key == "northbank")

    @property
    def transactions(self) -> int:
        return len(self.app.state.sim.world.transactions)

    @property
    def journal_lines(self) -> int:
        return len(self.journal.read_bytes().splitlines())

    def head(self, method: str, target: str, headers: dict[str, str]) -> bytes:
        lines = [f"{method} {target} HTTP/1.1", "Host: shim.test",
                 f"Authorization: Bearer {self.key}",
                 *(f"{name}: {value}" for name, value in headers.items())]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def exchange(self, raw: bytes) -> tuple[int, dict[str, Any]]:
        """Send ``raw`` (a whole request, ``Connection: close``); the status and JSON body."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(raw)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split(b" ", 2)[1]), json.loads(body)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    journal = tmp_path / "session.jsonl"
    app = create_app(ServeOptions(operator_token=TOKEN), scenario=load_world(str(world)))
    open_journal(app, journal, (world.name, hashlib.sha256(world.read_bytes()).hexdigest()),
                 None)
    server = ServerThread(app, protocol=EnvelopeH11Protocol).start()
    try:
        yield Served(app, server.port, journal)
    finally:
        server.stop()
        app.state.sim.journal.writer.close()


def _asset(served: Served) -> dict[str, str]:
    status, body = served.exchange(
        f"GET /sim/v1/participants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Connection: close\r\n\r\n".encode())
    assert status == 200
    return next(p["assets"][0] for p in body["data"] if p["participantName"] == "Ether Pound")


def _body(served: Served, reference: str) -> bytes:
    return json.dumps(redeem_body(_asset(served), "1.00", reference)).encode()


def _cut(served: Served, raw: bytes, how: str) -> None:
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
    sock.sendall(raw)
    time.sleep(0.1)
    if how == "half":  # the client still reads: no answer comes, the server closes
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(3)
        assert sock.recv(4096) == b""
    elif how == "reset":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


@pytest.mark.parametrize("how", ["half", "full", "reset"])
def test_a_body_cut_before_its_declared_end_is_never_handed_to_the_api(
        served: Served, how: str) -> None:
    """Issue 31, finding 4: "A body that ends before its declared length (or a chunked body
    without its last chunk) is never handed to the API" — no transaction, no journal entry;
    the same request whole creates one (the check can see a creation)."""
    body = _body(served, f"CUT-{how}")
    json_type = {"Content-Type": "application/json"}
    short = served.head("POST", "/api/v1/transactions",
                        {**json_type, "Content-Length": str(len(body) + 500)}) + body
    chunked = served.head("POST", "/api/v1/transactions",
                          {**json_type, "Transfer-Encoding": "chunked"}) \
        + b"%x\r\n%s\r\n" % (len(body), body)  # no last chunk (0\r\n\r\n)
    lines = served.journal_lines
    _cut(served, short, how)
    _cut(served, chunked, how)
    time.sleep(0.2)
    assert (served.transactions, served.journal_lines) == (0, lines)
    whole = served.head("POST", "/api/v1/transactions",
                        {**json_type, "Content-Length": str(len(body)),
                         "Connection": "close"}) + body
    status, _ = served.exchange(whole)
    assert status == 201 and served.transactions == 1 and served.journal_lines > lines


@pytest.mark.parametrize("declared", [None, "application/xml", "text/plain",
                                      "application/x-www-form-urlencoded", "json",
                                      "application/+json", "application/jsonx"])
def test_a_body_not_declared_as_json_is_415_and_creates_nothing(
        served: Served, declared: str | None) -> None:
    body = _body(served, "XML")
    headers = {"Content-Length": str(len(body)), "Connection": "close"}
    if declared is not None:
        headers["Content-Type"] = declared
    lines = served.journal_lines
    status, answer = served.exchange(served.head("POST", "/api/v1/transactions", headers)
                                     + body)
    assert status == 415, answer
    assert answer["errors"][0]["code"] == "unsupported_media_type"
    assert (served.transactions, served.journal_lines) == (0, lines)


@pytest.mark.parametrize("declared", ["application/json", "Application/JSON; charset=utf-8",
                                      "application/merge-patch+json"])
def test_a_body_declared_as_json_is_taken(served: Served, declared: str) -> None:
    body = _body(served, "JSON")
    status, answer = served.exchange(served.head("POST", "/api/v1/transactions", {
        "Content-Type": declared, "Content-Length": str(len(body)), "Connection": "close"})
        + body)
    assert status == 201, answer


def test_a_request_without_a_body_needs_no_content_type(served: Served) -> None:
    body = _body(served, "CANCEL-ME")
    status, created = served.exchange(served.head("POST", "/api/v1/transactions", {
        "Content-Type": "application/json", "Content-Length": str(len(body)),
        "Connection": "close"}) + body)
    assert status == 201
    status, answer = served.exchange(served.head(
        "POST", f"/api/v1/transactions/{created['data']['id']}/cancel",
        {"Content-Length": "0", "Connection": "close"}))
    assert status != 415, answer


def test_the_api_in_process_reads_no_media_type(served: Served) -> None:
    """Scenario calls and journal replays go to ``ServiceAPI.handle`` with no Content-Type:
    the check is the HTTP shim's alone."""
    api: ServiceAPI = served.app.state.sim.api
    response = api.handle(Request.build("POST", "/api/v1/transactions", token=served.key,
                                        body=_body(served, "IN-PROCESS")))
    assert response.status == 201, response.body


def test_an_absolute_form_target_reaches_its_route(served: Served) -> None:
    """RFC 9112 §3.2.2 (a server MUST accept the absolute form); it was 404 route_not_found."""
    origin = served.exchange(served.head("GET", "/api/v1/transactions",
                                         {"Connection": "close"}))
    absolute = served.exchange(served.head("GET", "http://shim.test/api/v1/transactions",
                                           {"Connection": "close"}))
    assert origin[0] == absolute[0] == 200
    assert origin[1]["data"] == absolute[1]["data"]
