"""Hostile input at the HTTP door (issue 14): the ASGI app is fuzzed on every route of both
surfaces with every credential; a body is not read before authentication; served key
material needs the operator token; HEAD, the idempotency key in characters, paged
deliveries; a real server's own 400s are the envelope, and SIGTERM prints the digest."""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import socket
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette

from clearing_sim.domain.errors import CATALOGUE
from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.app import READ_LIMIT_BYTES
from clearing_sim.http.gateways import INBOUND_ROUTES, WEBHOOK_PREFIX
from clearing_sim.http.journal import read_journal
from clearing_sim.http.operator import OPERATOR_ROUTES
from clearing_sim.http.replay import open_journal
from clearing_sim.service.auth import Credentials
from clearing_sim.service.routes import ROUTES
from clearing_sim.sim.examples import issuer_profile
from clearing_sim.sim.inbox import ID_LOGGED_MAX
from clearing_sim.sim.world import World, WorldConfig
from clearing_sim.testing import served_world
from tests.http.conftest import TOKEN, Client
from tests.service.test_hostile_input import state_digest
from tests.strategies import hostile_bodies, hostile_texts

FAST_EXAMPLES = 200
SLOW_EXAMPLES = 4000
TRIED = {"requests": 0, "5xx": 0, "changed_on_refusal": 0}


# raw ASGI, so any bytes can be sent ---------------------------------------------------------
class Sent:
    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.body = b""
        self.reads = 0


async def _call(app: Starlette, method: str, path: str, query: bytes = b"",
                headers: list[tuple[bytes, bytes]] | None = None, body: bytes = b"",
                chunk: int = 1 << 16) -> Sent:
    sent = Sent()
    pieces = [body[i:i + chunk] for i in range(0, len(body), chunk)] or [b""]

    async def receive() -> dict[str, Any]:
        sent.reads += 1
        if sent.reads > len(pieces):
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": pieces[sent.reads - 1],
                "more_body": sent.reads < len(pieces)}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent.status = message["status"]
            sent.headers = dict(message["headers"])
        else:
            sent.body += message.get("body", b"")

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": query, "root_path": "", "headers": headers or [],
             "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1)}
    await app(scope, receive, send)  # type: ignore[arg-type]
    return sent


def call(app: Starlette, *args: Any, **kwargs: Any) -> Sent:
    return asyncio.run(_call(app, *args, **kwargs))


def _cast(app: Starlette) -> dict[str, str]:
    sim = app.state.sim
    world, credentials = sim.world, sim.api.credentials
    issuer = world.add_issuer("Ether Pound", issuer_profile(2), (), Decimal("1000000.00"))
    asset = world.issue_asset(issuer.id, "GBPE")
    member = world.add_member("Northbank", Decimal("0.00"), {asset: Decimal("1000.00")})
    return {"issuer": issuer.id, "member": member.id,
            "member_key": credentials.issue_api_key(member.id)[1],
            "member_admin": credentials.issue_session(member.id),
            "issuer_admin": credentials.issue_session(issuer.id),
            "issuer_key": credentials.issue_api_key(issuer.id)[1]}


# the findings -------------------------------------------------------------------------------
def test_a_body_is_not_read_before_authentication() -> None:
    """Finding 9: 15 MiB was read before the credential was looked at."""
    app = create_app(ServeOptions(operator_token=TOKEN))
    big = b"{" * (15 << 20)
    for path, headers in (("/api/v1/transactions", []),
                          ("/api/v1/transactions", [(b"authorization", b"Bearer junk")]),
                          ("/sim/v1/reset", [(b"authorization", b"Bearer wrong-token")]),
                          ("/nowhere", [])):
        sent = call(app, "POST", path, headers=headers, body=big)
        assert sent.status in (401, 404) and sent.reads == 0, (path, sent.status)
        assert json.loads(sent.body)["errors"]


def test_an_issuer_webhook_for_no_issuer_of_this_world_is_refused_unread_and_logged_short(
        ) -> None:
    """Authentication 8, and the hostile-input rule: an anonymous POST to
    ``/issuer-webhooks/<anything>`` read its megabyte, journaled it (fsynced) and logged the
    whole path and instruction id: five posts grew a journal by 5 MB. The answer cannot
    depend on the body when the issuer is not this world's, so it is 401 unread; what a
    dropped delivery logs of its ids is bounded."""
    app = create_app(ServeOptions(operator_token=TOKEN))
    world = app.state.sim.world
    body = json.dumps({"instructionId": "i" * 500_000}).encode()
    sent = call(app, "POST", "/issuer-webhooks/" + "n" * 5000, body=body)
    assert sent.status == 401 and sent.reads == 0
    issuer = _cast(app)["issuer"]
    sent = call(app, "POST", f"/issuer-webhooks/{issuer}", body=body)
    assert sent.status == 401 and sent.reads > 0  # a known issuer: its signature is checked
    logged = world.log.select("issuer.webhook")
    assert [len(str(r["issuerId"])) for r in logged] == [ID_LOGGED_MAX, len(issuer)]
    assert [r["instructionId"] for r in logged] == [None, "i" * ID_LOGGED_MAX]


def test_a_public_route_reads_at_most_one_mib_and_one_byte() -> None:
    app = create_app(ServeOptions(operator_token=TOKEN))
    sent = call(app, "POST", "/api/v1/onboarding/applications", body=b" " * (15 << 20))
    assert sent.status == 413
    assert json.loads(sent.body)["errors"][0]["code"] == "payload_too_large"
    assert sent.reads <= READ_LIMIT_BYTES // (1 << 16) + 1


def test_served_keys_need_the_operator_token() -> None:
    """Finding 4: a tenant-admin JWT minted from the printed seed alone is refused; the
    same seed and token give the same keys and digest, another token other keys."""
    apps = [create_app(ServeOptions(operator_token=t, seed=0))
            for t in ("token-one-1", "token-one-1", "token-two-2")]
    keys = []
    for app in apps:
        client = Client(app)
        try:
            token = app.state.sim.options.operator_token
            made = client.request("POST", "/sim/v1/participants",
                                  headers={"Authorization": f"Bearer {token}"},
                                  json={"kind": "clearing_member", "name": "Northbank"})
            keys.append(made.json()["data"]["apiKey"])
        finally:
            client.close()
    assert keys[0] == keys[1] != keys[2]
    assert apps[0].state.sim.world.log.digest() == apps[1].state.sim.world.log.digest()
    served = apps[0].state.sim.world
    member = next(iter(served.participants))
    forger = Credentials(World(WorldConfig(seed=0)))  # knows the seed, not the token
    forged = forger.issue_session(member.id)
    sent = call(apps[0], "GET", "/api/v1/system/status",
                headers=[(b"authorization", f"Bearer {forged}".encode())])
    assert sent.status == 401


def test_head_on_a_get_route_is_the_get_without_its_body() -> None:
    app = create_app(ServeOptions(operator_token=TOKEN))
    auth = [(b"authorization", f"Bearer {TOKEN}".encode())]
    got, head = call(app, "GET", "/sim/v1/clock", headers=auth), \
        call(app, "HEAD", "/sim/v1/clock", headers=auth)
    assert (head.status, head.body) == (200, b"")
    assert head.headers[b"content-length"] == got.headers[b"content-length"]


def test_the_idempotency_key_limit_counts_characters_over_http() -> None:
    """Finding 11: 256 characters of é are 512 bytes, and allowed."""
    app = create_app(ServeOptions(operator_token=TOKEN))
    cast = _cast(app)
    body = json.dumps({"url": "https://hooks.example.com/h",
                       "events": ["transaction.settled"]}).encode()
    for key, status in (("é" * 256, 201), ("é" * 257, 400)):
        sent = call(app, "POST", "/api/v1/webhooks", body=body, headers=[
            (b"authorization", f"Bearer {cast['member_key']}".encode()),
            (b"content-type", b"application/json"), (b"idempotency-key", key.encode())])
        assert sent.status == status, sent.body


def test_deliveries_are_paged() -> None:
    client = Client(create_app(ServeOptions(operator_token=TOKEN)))
    try:
        page = client.op("GET", "/sim/v1/deliveries?limit=1&cursor=0").json()
        assert (page["data"], page["meta"]["nextCursor"]) == ([], None)
        for bad in ("limit=0", "limit=" + "9" * 5000, "cursor=" + "9" * 5000, "cursor=x"):
            response = client.op("GET", f"/sim/v1/deliveries?{bad}")
            assert response.status_code == 400, bad
    finally:
        client.close()


# a real server --------------------------------------------------------------------------------
def test_a_real_servers_own_400_is_the_envelope_and_sigterm_prints_the_digest() -> None:
    """Finding 11: uvicorn's 400s were plain text; SIGTERM skipped the final digest."""
    with served_world(operator_token="sigterm-token") as server:
        host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(b"GET /api/v1/system/status HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
            answer = b""
            while chunk := raw.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
        error = json.loads(body)["errors"][0]
        assert error["code"] == "malformed_http_request" and error["code"] in CATALOGUE
        assert server.client.clock()["nowMs"] == 0
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(20)
    assert server.process.returncode == 0, server.stderr
    assert "digest " in server.stdout and "Traceback" not in server.stderr


# the fuzzer -------------------------------------------------------------------------------------
_APP = create_app(ServeOptions(operator_token=TOKEN))
_CAST = _cast(_APP)
_TABLE = sorted({(r.method, r.template) for r in ROUTES}
                | {(r.method, r.template) for r in OPERATOR_ROUTES}
                | {(r.method, r.template) for r in INBOUND_ROUTES}
                - {("POST", "/sim/v1/reset")})
_CREDENTIALS = [None, f"Bearer {TOKEN}", *(f"Bearer {_CAST[k]}" for k in (
    "member_key", "member_admin", "issuer_admin", "issuer_key"))]
_BYTES = st.binary(max_size=40) | hostile_texts(20).map(
    lambda t: t.encode("utf-8", "surrogatepass"))


def _fill(template: str, choice: str) -> str:
    known = {"issuerId": _CAST["issuer"], "id": choice, "agentId": choice}
    return "/".join(known.get(part[1:-1], choice) if part.startswith("{") else part
                    for part in template.split("/"))


@st.composite
def _requests(draw: st.DrawFn) -> tuple[str, str, bytes, list[tuple[bytes, bytes]], bytes]:
    method, template = draw(st.sampled_from(_TABLE))
    method = draw(st.sampled_from([method, method, "HEAD", "PATCH", method.lower(),
                                   "X-" + "Y" * 40]))
    path = _fill(template, draw(st.sampled_from(["x", "%00", "00000000-0000-4000-8000-0"
                                                            "00000000000", "é"])))
    headers = []
    credential = draw(st.sampled_from(_CREDENTIALS))
    if credential is not None:
        headers.append((b"authorization", credential.encode()))
    headers += draw(st.lists(st.tuples(st.sampled_from([
        b"authorization", b"idempotency-key", b"service-version", b"content-type", b"x-a"]),
        _BYTES), max_size=3))
    query = draw(st.sampled_from([b"", b"limit=" + b"9" * 5000, b"cursor=" + b"9" * 5000,
                                  b"limit=1", b"kind=api.", b"%ff%fe=%ed%a0%80"]) | _BYTES)
    return method, path, query, headers, draw(hostile_bodies() | st.just(b""))


def _send(method: str, path: str, query: bytes, headers: list[tuple[bytes, bytes]],
          body: bytes) -> None:
    world = _APP.state.sim.world
    before, records = state_digest(world), len(world.log)
    sent = call(_APP, method, path, query, headers, body)
    TRIED["requests"] += 1
    if sent.status >= 500:
        TRIED["5xx"] += 1
    assert sent.status < 500, sent.body
    if path.startswith(WEBHOOK_PREFIX):  # its own answers; a drop is logged, nothing else
        assert method == "HEAD" or (sent.status in (401, 404, 405)
                                    and "error" in json.loads(sent.body)), sent.body
        added = [r for r in itertools.islice(world.log, records, None)
                 if r.kind != "api.request"]
        assert all(r.kind == "issuer.webhook" and r["verified"] is False for r in added)
        state_digest(world)
        return
    if sent.status >= 400 and method != "HEAD":
        errors = json.loads(sent.body)["errors"]
        assert errors and all(e["code"] in CATALOGUE for e in errors), errors
    if sent.status >= 400:
        if state_digest(_APP.state.sim.world) != before:
            TRIED["changed_on_refusal"] += 1
        assert state_digest(_APP.state.sim.world) == before


@settings(max_examples=FAST_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(request=_requests())
def test_no_hostile_http_request_is_5xx_and_no_refusal_changes_anything(
        request: tuple[str, str, bytes, list[tuple[bytes, bytes]], bytes]) -> None:
    """Issue 14, Proof: the ASGI app, every route of both surfaces, every credential."""
    _send(*request)


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(request=_requests())
def test_no_hostile_http_request_is_5xx_deeper(
        request: tuple[str, str, bytes, list[tuple[bytes, bytes]], bytes]) -> None:
    _send(*request)


@pytest.fixture(scope="module")
def journaled_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[Starlette, Path]:
    path = tmp_path_factory.mktemp("journal") / "hostile.jsonl"
    app = create_app(ServeOptions(operator_token=TOKEN))
    open_journal(app, path, None, None)
    _cast(app)
    return app, path


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(request=_requests())
def test_whatever_the_shim_journals_of_a_hostile_request_its_journal_reads_back(
        journaled_app: tuple[Starlette, Path],
        request: tuple[str, str, bytes, list[tuple[bytes, bytes]], bytes]) -> None:
    """The journal's reader checks each line's shape: a shape the writer can produce and the
    reader refuses locks the served world out of its restart (a receiver's status 799 and a
    40-character method did, found by review). Every request of the hostile fuzzer, sent to
    a journaling shim, leaves a journal that reads back whole."""
    app, path = journaled_app
    method, target, query, headers, body = request
    call(app, method, target, query, headers, body)
    app.state.sim.journal.writer.flush()
    read_journal(path)  # JournalError, naming the line, if the writer outran the reader
