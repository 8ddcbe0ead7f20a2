"""Real issuers in the shim: an issuer put on its real gateway (the reference gateway over
real HTTP) settles redeems and a swap in Modes 2 and 3; its status webhooks arrive at
``/issuer-webhooks/{issuerId}`` and are only prompts; forged ones are dropped and ignored.

Spec, "Issuer-side contract" (status webhooks signed like outgoing webhooks; "a delivery
unsigned or with a wrong signature is dropped, logged and not retried"; the service calls
GET /instructions/{id} after every delivery before acting) and Authentication 8.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from attrs import define
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.domain.signing import signature_header
from clearing_sim.gateway.reference import (
    Defect,
    GatewaySettings,
    ReferenceIssuer,
)
from clearing_sim.gateway.reference import (
    create_app as reference_app,
)
from clearing_sim.gateway.serving import ServerThread
from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.cli import load_world
from tests.http.conftest import SOL_QUID_YAML
from tests.service.test_hostile_input import state_digest
from tests.strategies import HOSTILE_RAW, hostile_bodies

from .conftest import OP, TOKEN, Client, issuer_body, redeem_body
from .served import served


@define
class Party:
    id: str
    key: str
    asset: dict[str, str] | None
    admin: str = ""


@define
class Stage:
    shim: httpx.Client
    base: str
    issuers: dict[int, Party]
    member: Party

    def op(self, method: str, url: str, body: Any = None) -> httpx.Response:
        return self.shim.request(method, url, headers=OP, json=body)

    def initiate(self, body: dict[str, Any]) -> str:
        response = self.shim.post("/api/v1/transactions", json=body,
                                  headers={"Authorization": f"Bearer {self.member.key}"})
        assert response.status_code == 201, response.text
        return str(response.json()["data"]["id"])

    def tx(self, tx_id: str) -> dict[str, Any]:
        response = self.shim.get(f"/api/v1/transactions/{tx_id}",
                                 headers={"Authorization": f"Bearer {self.member.key}"})
        return dict(response.json()["data"])

    def settle_all(self, ids: list[str], rounds: int = 70) -> list[dict[str, Any]]:
        """Advance 15 virtual seconds at a time until every transaction is terminal, 30 ms
        of wall time apart: a webhook-only issuer's callbacks (the saga's only prompt) reach
        the shim between advances, as they would under a realtime clock."""
        for _ in range(rounds):
            time.sleep(0.03)
            txs = [self.tx(i) for i in ids]
            if all(t["terminal"] for t in txs):
                return txs
            assert self.op("POST", "/sim/v1/clock/advance", {"seconds": 15}).status_code == 200
        return [self.tx(i) for i in ids]

    def log(self, kind: str) -> list[dict[str, Any]]:
        response = self.op("GET", f"/sim/v1/log?kind={kind}&limit=1000")
        return list(response.json()["data"])


def _add(stage_shim: httpx.Client, body: dict[str, Any]) -> Party:
    response = stage_shim.post("/sim/v1/participants", headers=OP, json=body)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    return Party(data["participantId"], data["apiKey"],
                 data["assets"][0] if data["assets"] else None, data["adminToken"])


def _start(defects: dict[int, frozenset[Defect]]) -> Iterator[Stage]:
    shim_server = ServerThread(create_app(ServeOptions(operator_token=TOKEN, seed=3))).start()
    gateways: list[ServerThread] = []
    try:
        with httpx.Client(base_url=shim_server.base_url, timeout=30) as shim:
            issuers = {2: _add(shim, issuer_body("Ether Pound", "GBPE", "evm")),
                       3: _add(shim, issuer_body("Sol Quid", "GBPQ", "solana"))}
            member = _add(shim, {"kind": "clearing_member", "name": "Northbank",
                                 "wallets": {"GBPE": "1000.00", "GBPQ": "1000.00"}})
            stage = Stage(shim, shim_server.base_url, issuers, member)
            for mode, issuer in issuers.items():
                secret = f"whsec_issuer_{mode}"
                settings = GatewaySettings(
                    seed=mode, mode=f"MODE_{mode}", step_ms=5,
                    webhook_url=f"{shim_server.base_url}/issuer-webhooks/{issuer.id}",
                    signing_secret=secret, defects=defects.get(mode, frozenset()))
                gateway = ServerThread(reference_app(ReferenceIssuer(settings))).start()
                gateways.append(gateway)
                put = stage.op("PUT", f"/sim/v1/operator/issuers/{issuer.id}/gateway", {
                    "apiBaseUrl": gateway.base_url, "webhookSecret": secret,
                    "patienceMs": 200,
                    "providerStatesUrl": gateway.base_url + "/_pact/provider-states"})
                assert put.status_code == 200, put.text
                assert put.json()["data"]["webhookPath"] == f"/issuer-webhooks/{issuer.id}"
            yield stage
    finally:
        for gateway in gateways:
            gateway.stop()
        shim_server.stop()


@pytest.fixture
def stage() -> Iterator[Stage]:
    yield from _start({})


@pytest.fixture
def forging_stage() -> Iterator[Stage]:
    yield from _start({2: frozenset({Defect.WRONG_SECRET_CALLBACKS})})


def test_redeems_and_a_swap_settle_through_real_gateways_in_modes_2_and_3(
        stage: Stage) -> None:
    e, q = stage.issuers[2].asset, stage.issuers[3].asset
    assert e is not None and q is not None
    ids = [stage.initiate(redeem_body(e, "100.00", "INV-2")),
           stage.initiate(redeem_body(q, "50.00", "INV-3")),
           stage.initiate({"useCase": "swap", "paymentReference": "SWP-1",
                           "source": {"amount": "10.00", "asset": e},
                           "target": {"amount": "10.00", "asset": q}})]
    txs = stage.settle_all(ids)
    assert [t["lifecycleStatus"] for t in txs] == ["settled"] * 3, txs
    balances = stage.op("GET", f"/sim/v1/balances?participantId={stage.member.id}")
    wallets = balances.json()["data"]["wallets"]
    minted = Decimal(txs[2]["target"]["amount"]["amount"])  # the swap's target, after its fee
    assert wallets == {"GBPE": "890.00", "GBPQ": f"{Decimal('950.00') + minted:.2f}"}
    calls = stage.log("issuer.http")
    urls = [c["fields"]["url"] for c in calls]
    assert any(u.endswith("/burn-instructions") for u in urls)
    assert any(u.endswith("/mint-instructions") for u in urls)
    assert any(u.endswith("/execute") for u in urls)  # Mode 2's irrevocable signal
    webhooks = stage.log("issuer.webhook")
    assert webhooks and all(w["fields"]["verified"] for w in webhooks)


def test_forged_status_webhooks_are_dropped_and_change_nothing(forging_stage: Stage) -> None:
    stage = forging_stage
    issuer = stage.issuers[2]
    assert issuer.asset is not None
    tx_id = stage.initiate(redeem_body(issuer.asset, "100.00", "INV-F"))
    stage.op("POST", "/sim/v1/clock/advance", {"seconds": 5})
    raw = b'{"instructionId":"x","status":"COMPLETED","onchain":{"txHash":"00","ledgerSequence":1}}'
    forged = stage.shim.post(f"/issuer-webhooks/{issuer.id}", content=raw, headers={
        "Service-Signature": signature_header("whsec_guess", 1_767_225_600, raw)})
    unsigned = stage.shim.post(f"/issuer-webhooks/{issuer.id}", content=raw)
    assert forged.status_code == 401 and unsigned.status_code == 401
    [tx] = stage.settle_all([tx_id])
    # Mode 2 with SIGNED_WEBHOOK only: execute went out once the instruction was created
    # (wherever the issuer holds), but no valid prompt ever came, so the saga never read the
    # instruction and parked at exactly approvalSlaSeconds after the execute call.
    assert tx["lifecycleStatus"] == "failed" and tx["parked"], tx
    webhooks = stage.log("issuer.webhook")
    assert webhooks and not any(w["fields"]["verified"] for w in webhooks)
    assert all(w["fields"]["outcome"] == "dropped" for w in webhooks)
    calls = [c["fields"]["url"] for c in stage.log("issuer.http")
             if "/instructions/" in c["fields"]["url"]]
    assert len(calls) == 1 and calls[0].endswith("/execute"), calls  # no read, one execute


def test_the_issuer_conformance_route_runs_the_suite_on_a_real_gateway(stage: Stage) -> None:
    """POST /api/v1/issuers/{id}/conformance/run on an issuer on its real gateway: the same
    suite, armed through the gateway's provider-state set-up URL."""
    issuer = stage.issuers[3]
    admin = {"Authorization": f"Bearer {issuer.admin}"}
    started = stage.shim.post(f"/api/v1/issuers/{issuer.id}/conformance/run", headers=admin)
    assert started.status_code == 202, started.text
    for _ in range(80):
        time.sleep(0.02)
        results = stage.shim.get(f"/api/v1/issuers/{issuer.id}/conformance/results",
                                 headers=admin).json()["data"]
        if results["status"] == "completed":
            break
        stage.op("POST", "/sim/v1/clock/advance", {"seconds": 15})
    verdicts = {s["name"]: s["status"] for s in results["scenarios"]}
    assert results["passed"] is True, verdicts
    assert verdicts["rejection_unwinds"] == "passed" and verdicts["silence_parks"] == "passed"
    armed = stage.log("issuer.armed")
    assert {a["fields"]["via"] for a in armed} == {"provider-state"}


WORLD = """\
world: {seed: 5}
members:
  northbank: {wallets: {GBPQ: "100.00"}}
""" + SOL_QUID_YAML + """\
    gateway: {apiBaseUrl: "%(url)s", bearer: t0ken, patienceMs: 200}
"""


def test_a_world_file_puts_an_issuer_on_its_real_gateway(tmp_path: Path) -> None:
    """The world file's ``gateway`` field: the staged issuer's saga calls go over HTTP."""
    from clearing_sim.gateway.reference.app import Auth

    issuer = ReferenceIssuer(GatewaySettings(mode="MODE_3", step_ms=5))
    with ServerThread(reference_app(issuer, Auth(bearer="t0ken"))) as gateway:
        path = tmp_path / "world.yaml"
        path.write_text(WORLD % {"url": gateway.base_url})
        client = Client(create_app(ServeOptions(operator_token=TOKEN),
                                   scenario=load_world(str(path))))
        try:
            staged = {s.key: s for s in client.sim.staged}
            asset = {"code": "GBPQ", "issuer": str(staged["solquid"].participant.assets[0]
                                                   .issuer)}
            auth = {"Authorization": f"Bearer {staged['northbank'].api_key}"}
            made = client.post("/api/v1/transactions", headers=auth,
                               json=redeem_body(asset, "40.00", "INV-W"))
            assert made.status_code == 201, made.text
            tx_id = made.json()["data"]["id"]
            client.advance(120)
            tx = client.get(f"/api/v1/transactions/{tx_id}", headers=auth).json()["data"]
        finally:
            client.close()
    assert tx["lifecycleStatus"] == "settled", tx
    assert len(issuer.instructions) == 1


@pytest.fixture(scope="module")
def fuzz_client() -> Iterator[tuple[Client, str]]:
    client = Client(create_app(ServeOptions(operator_token=TOKEN, seed=4)))
    response = client.op("POST", "/sim/v1/participants",
                         issuer_body("Ether Pound", "GBPE", "evm"))
    yield client, response.json()["data"]["participantId"]
    client.close()


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["apiBaseUrl", "caFile", "bearer", "tokenUrl", "patienceMs",
                         "timeoutSeconds", "webhookSecret", "instructionId", "status", "x"]),
        inner, max_size=4), max_leaves=8)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(_JSON_VALUES.map(json.dumps), st.text(max_size=60),
                     hostile_bodies().map(lambda raw: raw.decode("utf-8", "surrogateescape"))),
       signature=st.one_of(st.none(), st.text(st.characters(min_codepoint=32,
                                                            max_codepoint=126), max_size=60)),
       suffix=st.sampled_from(["", "/x", "/", "/%0A"]))
def test_no_issuer_webhook_makes_a_5xx_or_a_prompt(fuzz_client: tuple[Client, str],
                                                   body: str, signature: str | None,
                                                   suffix: str) -> None:
    client, issuer_id = fuzz_client
    headers = {} if signature is None else {"Service-Signature": signature}
    response = client.post(f"/issuer-webhooks/{issuer_id}{suffix}",
                           content=body.encode("utf-8", "surrogateescape"), headers=headers)
    assert response.status_code in (401, 404), response.text


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(_JSON_VALUES.map(json.dumps), st.text(max_size=60)))
def test_no_gateway_body_makes_a_5xx(fuzz_client: tuple[Client, str], body: str) -> None:
    client, issuer_id = fuzz_client
    response = client.request("PUT", f"/sim/v1/operator/issuers/{issuer_id}/gateway",
                              content=body.encode(), headers=OP)
    assert response.status_code < 500, response.text


@pytest.mark.parametrize("fields", [
    {"bearer": "D\u00ed`c\U000d8d61"}, {"bearer": "tok en"}, {"bearer": "t\nX-Evil: 1"},
    {"apiBaseUrl": "http://[::1"}, {"apiBaseUrl": "https:///no-host"},
    {"apiBaseUrl": "ftp://issuer.example"}, {"refundUrl": "https://"},
    {"tokenUrl": "not a url", "clientId": "c", "clientSecret": "s"},
    {"providerStatesUrl": "http://[::1"}])
def test_a_gateway_credential_or_url_the_client_cannot_send_is_400(
        fuzz_client: tuple[Client, str], fields: dict[str, str]) -> None:
    """Issue 14 (found by Schemathesis, --checks all): a non-ASCII bearer was 500
    internal_error (httpx cannot put it in a header; the transport's set-up refuses it
    now); a URL httpx cannot parse would have failed later, inside an advance. Both are
    400 invalid_value, and change nothing."""
    client, issuer_id = fuzz_client
    world = client.app.state.sim.world
    before = state_digest(world)
    body = {"apiBaseUrl": "https://issuer-2.example/api", **fields}
    response = client.request("PUT", f"/sim/v1/operator/issuers/{issuer_id}/gateway",
                              json=body, headers=OP)
    assert response.status_code == 400, response.text
    error = response.json()["errors"][0]
    assert error["code"] == "invalid_value"
    assert error.get("param") in fields or "bearer token" in error["message"]
    assert state_digest(world) == before


_TEXTS = st.text(max_size=20) | st.sampled_from(["https://issuer.example/x", "http://[::1",
                                                 "https://a b", "tok\u00e9n", ""])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=st.dictionaries(st.sampled_from([
    "bearer", "tokenUrl", "clientId", "clientSecret", "refundUrl", "providerStatesUrl",
    "webhookSecret"]), _TEXTS, max_size=4))
def test_no_gateway_body_with_a_valid_base_makes_a_5xx(fuzz_client: tuple[Client, str],
                                                       fields: dict[str, str]) -> None:
    client, issuer_id = fuzz_client
    response = client.request("PUT", f"/sim/v1/operator/issuers/{issuer_id}/gateway",
                              json={"apiBaseUrl": "https://issuer-2.example/api", **fields},
                              headers=OP)
    assert response.status_code < 500, response.text


@pytest.mark.parametrize("raw", HOSTILE_RAW, ids=lambda raw: repr(raw[:10]))
@pytest.mark.parametrize("signed", [False, True])
def test_a_hostile_issuer_webhook_body_is_a_401_drop_never_a_500(
        fuzz_client: tuple[Client, str], raw: bytes, signed: bool) -> None:
    """Authentication 8, hostile input: a body nested past the interpreter's limit
    (``"[" * 1000``: json.loads raised RecursionError, not ValueError) was a 500 with a
    traceback, unauthenticated. Every hostile body, signed with the issuer's own secret or
    not, is dropped (401, logged ``verified: false``) and changes nothing else."""
    client, issuer_id = fuzz_client
    world = client.app.state.sim.world
    headers = {}
    if signed:
        now_s = (world.epoch_ms + world.now_ms) // 1000
        headers["Service-Signature"] = signature_header(
            world.issuers[issuer_id].webhook_secret, now_s, raw)
    before = state_digest(world)
    response = client.post(f"/issuer-webhooks/{issuer_id}", content=raw, headers=headers)
    assert response.status_code == 401, response.text
    assert response.json() == {"error": "invalid_signature"}
    dropped = world.log.select("issuer.webhook")[-1]
    assert dropped["verified"] is False and dropped["instructionId"] is None
    assert state_digest(world) != before  # the drop is logged (spec: "logged") ...
    assert [r.kind for r in world.log.select("issuer.webhook", outcome="prompt")] == []


def test_another_method_on_the_issuer_webhook_route_is_405_with_allow_post(
        fuzz_client: tuple[Client, str]) -> None:
    """RFC 9110 §15.5.6: a 405 names the allowed methods; the route is POST only."""
    client, issuer_id = fuzz_client
    response = client.get(f"/issuer-webhooks/{issuer_id}")
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


async def _nested_answer(scope: Any, receive: Any, send: Any) -> None:
    """A hostile gateway: every call answered 201 with 5,000 ``[`` (under 64 KiB)."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 201,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b"[" * 5000})


def test_a_gateway_answering_json_nested_past_any_limit_is_silence_and_parks_at_the_sla(
        ) -> None:
    """States and transitions, silence past ``approvalSlaSeconds``; docs/semantics.md, a
    gateway's malformed answer is no news. Before, the answer's RecursionError escaped the
    transport: the advance was a 500 and the saga died in-flight, never parked."""
    (tx,), violations = _redeems_through(_nested_answer, ("10.00",), 16)  # past 900 s
    assert (tx["lifecycleStatus"], tx["parked"], tx["terminal"]) == ("failed", True, True), tx
    assert violations == []


def _lying_gateway(instruction_id: str) -> Any:
    """A hostile gateway: every creation answered with ``instruction_id``; a read of it
    COMPLETED with an on-chain proof; anything else ``{}``."""
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path, body = scope["path"], {}
        if path.endswith("-instructions"):
            body = {"instructionId": instruction_id, "status": "RECEIVED"}
        elif path.startswith("/instructions/"):  # the id as sent: one encoded segment
            named = unquote(scope["raw_path"].decode().rsplit("/", 1)[1])
            body = {"instructionId": named, "status": "COMPLETED",
                    "onchain": {"txHash": "ab" * 32, "ledgerSequence": 7}}
        await send({"type": "http.response.start", "status": 201 if "-instr" in path else 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})
    return app


def _redeems_through(app: Any, amounts: tuple[str, ...], minutes: int
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Redeems of ``amounts`` by one member through an issuer on ``app``, the clock run
    ``minutes`` a minute at a time (every advance 200): the transactions and the log's
    protocol violations."""
    gateway = ServerThread(app).start()
    shim_server = ServerThread(create_app(ServeOptions(operator_token=TOKEN, seed=3))).start()
    try:
        with httpx.Client(base_url=shim_server.base_url, timeout=30) as shim:
            quid = _add(shim, issuer_body("Sol Quid", "GBPQ", "solana"))
            member = _add(shim, {"kind": "clearing_member", "name": "Northbank",
                                 "wallets": {"GBPQ": "100.00"}})
            put = shim.put(f"/sim/v1/operator/issuers/{quid.id}/gateway", headers=OP,
                           json={"apiBaseUrl": gateway.base_url, "patienceMs": 0})
            assert put.status_code == 200, put.text
            assert quid.asset is not None
            auth = {"Authorization": f"Bearer {member.key}"}
            ids = []
            for n, amount in enumerate(amounts):
                made = shim.post("/api/v1/transactions", headers=auth,
                                 json=redeem_body(quid.asset, amount, f"INV-{n}"))
                assert made.status_code == 201, made.text
                ids.append(made.json()["data"]["id"])
            for _ in range(minutes):
                advanced = shim.post("/sim/v1/clock/advance", headers=OP, json={"seconds": 60})
                assert advanced.status_code == 200, advanced.text
            txs = [shim.get(f"/api/v1/transactions/{tx}", headers=auth).json()["data"]
                   for tx in ids]
            log = shim.get("/sim/v1/log?kind=issuer.protocol_violation", headers=OP)
            violations = [r["fields"] for r in log.json()["data"]]
    finally:
        shim_server.stop()
        gateway.stop()
    return txs, violations


def test_an_instruction_id_answered_for_two_instructions_settles_only_the_first() -> None:
    """Settlement only on proof of the transaction's own burn: a gateway answering one id
    for two creations settled both redeems on the one burn (the member paid 30.00 and the
    20.00 was never burned). The second creation's answer is a protocol violation: FAILED,
    parked, nothing undone (the issuer cannot be trusted about that asset)."""
    (first, second), violations = _redeems_through(_lying_gateway("ins_1"),
                                                   ("10.00", "20.00"), 3)
    assert (first["lifecycleStatus"], first["parked"]) == ("settled", False), first
    assert (second["lifecycleStatus"], second["parked"]) == ("failed", True), second
    assert [v["transactionId"] for v in violations] == [second["id"]]
    assert "names instruction 'ins_1', which another instruction" in violations[0]["problem"]


@pytest.mark.parametrize("instruction_id", ["INS/2024/17", "ins:2024:00017",
                                            "urn:uuid:0e5f…", "a+b/c==", "é 1"])
def test_an_instruction_id_of_any_text_is_read_back_percent_encoded(
        instruction_id: str) -> None:
    """Issuer-side contract: ``instructionId`` is a string. It is one path segment of the
    read, percent-encoded (RFC 3986 §3.3), so an issuer's own format settles."""
    (tx,), violations = _redeems_through(_lying_gateway(instruction_id), ("10.00",), 3)
    assert (tx["lifecycleStatus"], tx["parked"]) == ("settled", False), tx
    assert violations == []


def test_an_instruction_id_that_makes_no_url_is_a_malformed_answer_not_a_500() -> None:
    """``"a\u0007b"`` went into the next read's URL: httpx.InvalidURL escaped the call,
    the advance answered 500 and the batch of calls was lost. It is a malformed answer
    now (no news): the redeem parks at its SLA, and every advance is 200."""
    (tx,), violations = _redeems_through(_lying_gateway("a\u0007b"), ("10.00",), 16)
    assert (tx["lifecycleStatus"], tx["parked"]) == ("failed", True), tx
    assert violations == []


# virtual time and wall time: a real gateway call does not block the shim ------------------
class _Held:
    """The reference gateway, holding each call to a path ending ``suffix`` (the
    instruction POSTs by default) until the test lets it go (a
    slow issuer: its calls take real time while the shim must stay responsive). ``arrived``
    is set when a call comes in; a call held ``HOLD_MAX_S`` without ``release`` goes through
    and sets ``expired``: what a read queued behind the call would have waited for."""

    def __init__(self, app: Any, suffix: str = "-instructions") -> None:
        self.app, self.suffix = app, suffix
        self.arrived, self.release = threading.Event(), threading.Event()
        self.expired = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].endswith(self.suffix):
            self.arrived.set()
            if not await asyncio.to_thread(self.release.wait, HOLD_MAX_S):
                self.expired = True
        await self.app(scope, receive, send)


HOLD_MAX_S = 20.0


@define
class HeldStage:
    """A shim with one issuer on the reference gateway behind ``_Held`` and one member whose
    redeem of 10.00 through it is initiated (the clock not yet advanced)."""

    shim: httpx.Client
    base_url: str
    held: _Held
    member: Party
    tx_id: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.member.key}"}

    def advancing(self, seconds: int) -> threading.Thread:
        """``POST /sim/v1/clock/advance`` from another client, in a thread of its own."""

        def advance() -> None:
            with httpx.Client(base_url=self.base_url, timeout=60) as other:
                other.post("/sim/v1/clock/advance", headers=OP,
                           json={"seconds": seconds}).raise_for_status()

        runner = threading.Thread(target=advance)
        runner.start()
        return runner

    def tx(self) -> dict[str, Any]:
        return dict(self.shim.get(f"/api/v1/transactions/{self.tx_id}",
                                  headers=self.auth).json()["data"])


@contextmanager
def _held_stage(suffix: str, **paths: str) -> Iterator[HeldStage]:
    """``paths``: gateway settings that are URLs on the gateway (``providerStatesUrl``)."""
    issuer = ReferenceIssuer(GatewaySettings(mode="MODE_3", step_ms=5))
    held = _Held(reference_app(issuer), suffix)
    gateway = ServerThread(held).start()
    shim_server = ServerThread(create_app(ServeOptions(operator_token=TOKEN, seed=3))).start()
    try:
        with httpx.Client(base_url=shim_server.base_url, timeout=30) as shim:
            quid = _add(shim, issuer_body("Sol Quid", "GBPQ", "solana"))
            member = _add(shim, {"kind": "clearing_member", "name": "Northbank",
                                 "wallets": {"GBPQ": "100.00"}})
            put = shim.put(f"/sim/v1/operator/issuers/{quid.id}/gateway", headers=OP, json={
                "apiBaseUrl": gateway.base_url, "patienceMs": 100,
                **{name: gateway.base_url + path for name, path in paths.items()}})
            assert put.status_code == 200, put.text
            assert quid.asset is not None
            made = shim.post("/api/v1/transactions",
                             headers={"Authorization": f"Bearer {member.key}"},
                             json=redeem_body(quid.asset, "10.00", "INV-HELD"))
            assert made.status_code == 201, made.text
            yield HeldStage(shim, shim_server.base_url, held, member, made.json()["data"]["id"])
    finally:
        held.release.set()
        shim_server.stop()
        gateway.stop()


def test_a_slow_gateway_call_pauses_the_advance_and_leaves_the_shim_answering() -> None:
    """docs/conformance.md, "How virtual time meets wall time": the advance stops at the
    call's virtual instant and the call is made off the event loop; a GET during the call is
    answered while the call is still held, seeing the world at that instant
    (``advancingTo`` set), the advance waits for the call, and the redeem then settles
    exactly as without the wait. No wall-clock bound: the gateway holds the call until the
    reads are answered, so a read queued behind it could only come back once the hold
    expired."""
    with _held_stage("-instructions") as stage:
        runner = stage.advancing(60)
        assert stage.held.arrived.wait(30)  # the advance is at the POST /burn-instructions
        clock = stage.shim.get("/sim/v1/clock", headers=OP).json()["data"]
        during = stage.tx()
        still_advancing = runner.is_alive()
        stage.held.release.set()
        runner.join(30)
        after = stage.tx()
    assert not stage.held.expired, "a GET waited behind the gateway call"
    assert still_advancing, "the advance ended while its gateway call was still held"
    assert clock["advancingTo"] == "2026-01-01T00:01:00.000Z"
    assert clock["nowMs"] < 60_000 and not during["terminal"]
    assert after["lifecycleStatus"] == "settled", after


def test_a_slow_provider_state_call_leaves_the_shim_answering() -> None:
    """Arming a transaction on a real gateway (``POST /api/v1/conformance/run``, spec
    "Conformance (sandbox only)") answers at once; its provider-state set-up call is made
    by the next advance, at the arm's virtual instant and before the transaction's
    instruction POST, off the event loop like every gateway call: a read during it is
    answered while it is held (before, the route made it inside the engine step, holding
    the whole shim for as long as the gateway took)."""
    with _held_stage("/provider-states", providerStatesUrl="/_pact/provider-states") as stage:
        armed = stage.shim.post("/api/v1/conformance/run",
                                headers={"Authorization": f"Bearer {stage.member.admin}"},
                                json={"scenario": "failed", "transactionId": stage.tx_id})
        arrived_before_advance = stage.held.arrived.is_set()
        runner = stage.advancing(3600)
        assert stage.held.arrived.wait(30)  # the advance is at the set-up call
        clock = stage.shim.get("/sim/v1/clock", headers=OP).json()["data"]
        still_advancing = runner.is_alive()
        stage.held.release.set()
        runner.join(30)
        after = stage.tx()
        log = stage.shim.get("/sim/v1/log?limit=1000", headers=OP).json()["data"]
    assert armed.status_code == 200 and armed.json()["data"]["armed"], armed.text
    assert not arrived_before_advance
    assert not stage.held.expired, "a GET waited behind the provider-state call"
    assert still_advancing and clock["nowMs"] == 0  # paused at the arm's instant
    assert clock["advancingTo"] == "2026-01-01T01:00:00.000Z"
    calls = [r["fields"]["url"] for r in log if r["kind"] == "issuer.http"]
    assert calls[0].endswith("/_pact/provider-states") and calls[1].endswith(
        "/burn-instructions"), calls
    [arming] = [r for r in log if r["kind"] == "issuer.armed"]
    assert arming["fields"]["via"] == "provider-state"
    assert (after["lifecycleStatus"], after["parked"]) == ("failed", True), after


REALTIME_WORLD = """\
world: {seed: 5}
members:
  northbank: {name: Northbank, wallets: {GBPQ: "100.00"}}
""" + SOL_QUID_YAML + """\
    gateway: {apiBaseUrl: "%(url)s", patienceMs: 100}
webhooks:
  hook: {participant: northbank, url: "https://hooks.example.com/w",
         events: [transaction.settled]}
"""


def test_a_redeem_settles_through_a_real_gateway_on_the_realtime_clock(
        tmp_path: Path) -> None:
    """``serve --clock realtime``: nobody advances the clock; the ticker and each request
    catch the world up with the wall clock (× speed), the saga's calls go to the reference
    gateway over real HTTP and the redeem settles. The gateway holds the instruction POST
    until a read made during the call has been answered: a read queued behind the call
    could only come back once the hold expired (no wall-clock bound, which once failed on
    a loaded machine)."""
    issuer = ReferenceIssuer(GatewaySettings(mode="MODE_3", step_ms=5))
    held = _Held(reference_app(issuer))
    with ServerThread(held) as gateway, \
            served(tmp_path, "--clock", "realtime", "--speed", "20",
                   world=REALTIME_WORLD % {"url": gateway.base_url}) as server:
        try:
            auth = {"Authorization": f"Bearer {server.api_key('northbank')}"}
            listed = httpx.get(f"{server.base}/sim/v1/participants", headers=server.operator)
            [quid] = [p for p in listed.json()["data"] if p["participantName"] == "Sol Quid"]
            made = httpx.post(f"{server.base}/api/v1/transactions", headers=auth,
                              json=redeem_body(quid["assets"][0], "40.00", "INV-RT"))
            assert made.status_code == 201, made.text
            tx_id = made.json()["data"]["id"]
            assert held.arrived.wait(30)  # the ticker reached the instruction POST
            during = httpx.get(f"{server.base}/api/v1/transactions/{tx_id}", headers=auth,
                               timeout=60).json()["data"]
            held.release.set()
            tx = during
            deadline = time.monotonic() + 30
            while not tx["terminal"] and time.monotonic() < deadline:
                time.sleep(0.05)
                tx = httpx.get(f"{server.base}/api/v1/transactions/{tx_id}", headers=auth,
                               timeout=10).json()["data"]
            clock = httpx.get(f"{server.base}/sim/v1/clock", headers=server.operator).json()
        finally:
            held.release.set()
    assert not held.expired, "a read waited behind the gateway call"
    assert not during["terminal"]
    assert tx["lifecycleStatus"] == "settled", tx
    assert clock["data"]["mode"] == "realtime"
    assert len(issuer.instructions) == 1
    assert "Traceback" not in server.errors


def test_a_bearer_that_cannot_travel_in_a_header_is_a_400(
        fuzz_client: tuple[Client, str]) -> None:
    """RFC 6750: refused when the gateway is set up, not at the engine's first call."""
    client, issuer_id = fuzz_client
    response = client.request("PUT", f"/sim/v1/operator/issuers/{issuer_id}/gateway",
                              headers=OP, json={"apiBaseUrl": "http://127.0.0.1:9",
                                                "bearer": "t\u00f6ken"})
    assert response.status_code == 400, response.text
    assert "bearer token" in response.json()["errors"][0]["message"]


def test_an_encrypted_client_key_is_a_400_saying_so_never_a_prompt(
        fuzz_client: tuple[Client, str], tmp_path: Path) -> None:
    """A passphrase-protected ``clientKey``: OpenSSL would have prompted on the shim's
    terminal and held the server; it is 400 with the reason, and nothing changes."""
    import datetime as dt

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    from clearing_sim.tls import write_bundle

    bundle = write_bundle(tmp_path / "tls", dt.datetime.now(dt.UTC))
    key = load_pem_private_key(bundle.client_key.read_bytes(), None)
    encrypted = tmp_path / "encrypted.key"
    encrypted.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                            serialization.PrivateFormat.PKCS8,
                                            serialization.BestAvailableEncryption(b"pw")))
    client, issuer_id = fuzz_client
    world = client.app.state.sim.world
    before = state_digest(world)
    response = client.request("PUT", f"/sim/v1/operator/issuers/{issuer_id}/gateway",
                              json={"apiBaseUrl": "https://127.0.0.1:9/api",
                                    "caFile": str(bundle.ca_cert),
                                    "clientCert": str(bundle.client_cert),
                                    "clientKey": str(encrypted)}, headers=OP)
    assert response.status_code == 400, response.text
    assert "is encrypted" in response.json()["errors"][0]["message"]
    assert state_digest(world) == before
