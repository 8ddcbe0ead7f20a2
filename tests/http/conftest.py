"""Fixtures for the HTTP shim: the app behind httpx's ASGI transport, a cast, a receiver."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from attrs import define, field
from starlette.applications import Starlette

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.journal import JournalFile
from clearing_sim.http.recorder import request_of
from clearing_sim.http.replay import replay_copy
from clearing_sim.http.sealing import Sealer
from clearing_sim.http.simulation import Simulation
from clearing_sim.service.api import ServiceAPI
from clearing_sim.sim.examples import issuer_profile
from clearing_sim.sim.world import World

TOKEN = "operator-token-1"
OP = {"Authorization": f"Bearer {TOKEN}"}


#: World-file sections the HTTP tests share: Ether Pound (Mode 2, GBPE on evm) and
#: Northbank's subscription to ``transaction.settled``.
ETHER_POUND_YAML = """\
issuers:
  etherpound:
    name: Ether Pound
    rtgs: "1000000.00"
    assets: [GBPE]
    profile: {commitPoint: ON_INSTRUCTION, preBurnTransferRequired: false,
              custodyModel: POOLED_ISSUER_WALLET, feedbackChannel: [POLLABLE_RESOURCE],
              fiatLeg: NUVANTE_SETTLES_RTGS, ledger: evm,
              apiBaseUrl: "https://issuer.example/api"}
"""
SETTLED_HOOK_YAML = """\
webhooks:
  hook: {participant: northbank, url: "https://hooks.example.com/w",
         events: [transaction.settled]}
"""


#: Sol Quid (Mode 3, GBPQ on solana) at ``%(url)s``: the issuer the gateway tests put on a
#: real gateway (a ``gateway:`` line follows it in each world file).
SOL_QUID_YAML = """\
issuers:
  solquid:
    name: Sol Quid
    rtgs: "1000000.00"
    assets: [GBPQ]
    profile: {commitPoint: ON_INSTRUCTION, preBurnTransferRequired: true,
              custodyModel: POOLED_ISSUER_WALLET, feedbackChannel: [POLLABLE_RESOURCE],
              fiatLeg: NUVANTE_SETTLES_RTGS, ledger: solana, apiBaseUrl: "%(url)s"}
"""


class Client:
    """A synchronous face on ``httpx.AsyncClient`` over ``httpx.ASGITransport``: one event
    loop per client, so the shim's locks and tasks live on one loop, as under uvicorn."""

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                      base_url="http://shim.test")

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.run(self.http.request(method, url, **kwargs))  # type: ignore[no-any-return]

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", url, **kwargs)

    def op(self, method: str, url: str, json: Any = None) -> httpx.Response:
        """An operator call."""
        return self.request(method, url, headers=OP, json=json)

    def advance(self, seconds: float) -> dict[str, Any]:
        response = self.op("POST", "/sim/v1/clock/advance", {"seconds": seconds})
        assert response.status_code == 200, response.text
        return dict(response.json()["data"])

    @property
    def sim(self) -> Simulation:
        sim: Simulation = self.app.state.sim
        return sim

    def close(self) -> None:
        self.run(self.http.aclose())
        self.loop.close()


@define
class Party:
    id: str
    key: str
    admin: str
    asset: dict[str, str] | None = None

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    @property
    def admin_auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin}"}


def issuer_body(name: str = "Ether Pound", code: str = "GBPE", ledger: str = "evm",
                **more: Any) -> dict[str, Any]:
    return {"kind": "stablecoin_issuer", "name": name, "rtgsBalanceGbp": "1000000.00",
            "assets": [{"code": code, "ledger": ledger}], **more}


def member_body(name: str = "Northbank", **wallets: str) -> dict[str, Any]:
    return {"kind": "clearing_member", "name": name, "wallets": wallets or {"GBPE": "1000.00"}}


def redeem_body(asset: dict[str, str], amount: str = "100.00",
                reference: str = "INV-1") -> dict[str, Any]:
    return {"useCase": "redeem", "paymentReference": reference,
            "source": {"amount": amount, "asset": asset},
            "target": {"amount": amount, "asset": {"code": "GBP"}}}


def add(client: Client, body: dict[str, Any]) -> Party:
    response = client.op("POST", "/sim/v1/participants", body)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    return Party(data["participantId"], data["apiKey"], data["adminToken"],
                 data["assets"][0] if data["assets"] else None)


@define
class Shim:
    client: Client
    issuer: Party
    member: Party

    def initiate(self, amount: str = "100.00", reference: str = "INV-1") -> str:
        assert self.issuer.asset is not None
        response = self.client.post("/api/v1/transactions", headers=self.member.auth,
                                    json=redeem_body(self.issuer.asset, amount, reference))
        assert response.status_code == 201, response.text
        return str(response.json()["data"]["id"])


def make_client(**options: Any) -> Client:
    return Client(create_app(ServeOptions(operator_token=TOKEN, **options)))


@pytest.fixture
def client() -> Iterator[Client]:
    made = make_client(seed=3)
    yield made
    made.close()


@pytest.fixture
def shim(client: Client) -> Shim:
    """Ether Pound (Mode 2, GBPE on evm, £1 000 000 at the RTGS) and Northbank (1 000 GBPE)."""
    return Shim(client, add(client, issuer_body()), add(client, member_body()))


def stage_in_process(world: World, api: ServiceAPI) -> dict[str, Party]:
    """The same cast as ``shim``, made by the calls ``POST /sim/v1/participants`` makes."""
    credentials = api.credentials
    issuer = world.add_issuer("Ether Pound", issuer_profile(2, ledger="evm"), (),
                              Decimal("1000000.00"), None)
    asset = world.issue_asset(issuer.id, "GBPE", "GBP")
    issuer_key = credentials.issue_api_key(issuer.id)[1]
    issuer_admin = credentials.issue_session(issuer.id)
    member = world.add_member("Northbank", Decimal("0.00"), {asset: Decimal("1000.00")})
    member_key = credentials.issue_api_key(member.id)[1]
    member_admin = credentials.issue_session(member.id)
    return {"issuer": Party(issuer.id, issuer_key, issuer_admin,
                            {"code": asset.code, "issuer": str(asset.issuer)}),
            "member": Party(member.id, member_key, member_admin)}


@define
class Receiver:
    """A real HTTP receiver on a free loopback port: records every POST, answers ``status``."""

    server: ThreadingHTTPServer
    received: list[tuple[dict[str, str], bytes]] = field(factory=list)
    status: int = 200

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hooks"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            holder[0].received.append(({k: v for k, v in self.headers.items()}, body))
            self.send_response(holder[0].status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(server))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield holder[0]
    server.shutdown()
    server.server_close()


def real_answers(client: Client) -> None:
    """Run the shim's loop until every real webhook delivery on the wire has its answer:
    under uvicorn the loop runs on between requests, this test client's only during one."""
    deliveries = client.sim.deliveries
    assert deliveries is not None
    client.run(deliveries.answers(deliveries.missing_by(math.inf)))


def resend(journal: JournalFile, token: str) -> Client:
    """A fresh shim without a journal, sent the journal's requests through its doors and each
    clock entry as an advance to the instant it reached (the crash test's uninterrupted run;
    what an export does): equal digests show the journal holds nothing a client could not."""
    client = Client(create_app(ServeOptions(operator_token=token, seed=journal.header.seed)))
    sealer = Sealer(token, journal.header.salt)
    for _, entry in journal.entries:
        if entry["k"] in ("api", "op"):
            request = request_of(entry, sealer, token)
            answer = client.request(request.method, request.path, params=list(request.query),
                                    headers=list(request.headers), content=request.body)
            assert answer.status_code == entry["status"], (entry, answer.text)
        elif entry["k"] == "clock" and entry["to"] is not None:
            moved = client.request("POST", "/sim/v1/clock/advance",
                                   headers={"Authorization": f"Bearer {token}"},
                                   json={"seconds": (entry["to"] - client.sim.world.now_ms)
                                         / 1000})
            assert moved.status_code == 200, moved.text
    return client


@define
class HeldReceiver:
    """A real receiver on loopback answering every POST 200 once ``release`` is set (set at
    once unless ``held``); ``arrived`` is set when a POST has come in."""

    server: ThreadingHTTPServer
    arrived: threading.Event
    release: threading.Event

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hooks"


@contextmanager
def held_receiver(held: bool = True) -> Iterator[HeldReceiver]:
    arrived, release = threading.Event(), threading.Event()
    if not held:
        release.set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            arrived.set()
            release.wait(20)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield HeldReceiver(server, arrived, release)
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def _cut_instants(journal: JournalFile, token: str) -> tuple[list[int], list[int]]:
    """Replaying ``journal``: the ``clock`` entries (``n``) whose slice ended inside an
    instant (events still due at the instant it reached), and the requests served right
    after one of them."""
    slices: list[int] = []
    served: list[int] = []
    inside = False

    def observe(entry: dict[str, Any], *_: object) -> None:
        nonlocal inside
        if entry["k"] == "clock":
            inside = entry["to"] is not None and sims[0].world.env.peek() <= entry["to"]
            if inside:
                slices.append(int(entry["n"]))
        elif inside and entry["k"] in ("api", "op", "issuer"):
            served.append(int(entry["n"]))

    sims: list[Simulation] = []
    replay_copy(journal, token, None, observe, before=sims.append)
    return slices, served


def slices_inside(journal: JournalFile, token: str) -> list[int]:
    """The ``clock`` entries after which events were still due at the instant they reached."""
    return _cut_instants(journal, token)[0]


def served_inside_an_instant(journal: JournalFile, token: str) -> list[int]:
    """The requests served right after a slice that ended inside an instant: what a shim
    sent requests between whole advances (``resend``, an exported scenario) cannot repeat."""
    return _cut_instants(journal, token)[1]
