"""``clearing-sim serve``: bad options exit 2 with a message; a real server, end to end."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.cli import main
from clearing_sim.testing import served_world
from clearing_sim.webhooks import verify
from tests.http.conftest import SOL_QUID_YAML
from tests.http.served import served

EXE = Path(sys.executable).with_name("clearing-sim")
TOKEN = "subprocess-token"


def _serve(*args: str) -> Any:
    return CliRunner().invoke(main, ["serve", *args])


def test_help_has_an_example() -> None:
    result = _serve("--help")
    assert result.exit_code == 0
    assert "Example:" in result.output and "clearing-sim serve --seed 7" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--speed", "2"], "--speed applies to --clock realtime only"),
    (["--clock", "realtime", "--speed", "0"], "must be a number above 0"),
    (["--clock", "realtime", "--speed", "nan"], "must be a number above 0"),
    (["--operator-token", "short"], "8 to 256 visible ASCII characters"),
    (["--operator-token", "has a space in it"], "8 to 256 visible ASCII characters"),
    (["--port", "70000"], "70000 is not in the range"),
    (["--clock", "sometimes"], "'sometimes' is not one of"),
    (["--seed", "x"], "'x' is not a valid integer"),
    (["--host", "256.0.0.1", "--port", "0"], "cannot listen on 256.0.0.1:0"),
    (["--world", "no/such/world.yaml"], "no/such/world.yaml: no such file"),
])
def test_a_bad_option_exits_2_with_a_message(args: list[str], message: str) -> None:
    result = _serve(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_port_in_use_exits_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = _serve("--port", str(taken.getsockname()[1]), "--operator-token", TOKEN)
    assert result.exit_code == 2
    assert "cannot listen on 127.0.0.1:" in result.output


def test_a_bad_world_file_exits_2_naming_its_lines(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text("members:\n  northbank:\n    wallets: {GBPX: \"1.00\"}\n")
    result = _serve("--world", str(world))
    assert result.exit_code == 2
    assert f"{world}:3:" in result.output and "GBPX" in result.output


def test_a_world_file_that_contradicts_environment_exits_2(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text("world: {environment: production}\n")
    result = _serve("--world", str(world), "--environment", "sandbox")
    assert result.exit_code == 2 and "contradicts" in result.output


# a real server ---------------------------------------------------------------------------------
class _Receiver:
    """A receiver under test, as the spec tells integrators to write one: verify the
    signature against *its injected clock* (here the shim's virtual clock), deduplicate on
    Service-Webhook-Id, fetch the transaction before believing anything."""

    def __init__(self, base: str, secret: str, api_key: str) -> None:
        self.base, self.secret, self.api_key = base, secret, api_key
        self.seen: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = receiver.receive(dict(self.headers.items()), body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/webhooks"

    def receive(self, headers: dict[str, str], body: bytes) -> int:
        with httpx.Client(base_url=self.base, timeout=5) as shim:
            clock = shim.get("/sim/v1/clock",
                             headers={"Authorization": f"Bearer {TOKEN}"}).json()["data"]
            now_s = clock["unixSeconds"]  # the injected clock: virtual time, not time.time()
            verified = verify(self.secret, headers.get("Service-Signature"), body, now_s)
            event = json.loads(body)
            fetched = shim.get(f"/api/v1/transactions/{event['data']['transactionId']}",
                               headers={"Authorization": f"Bearer {self.api_key}"})
        self.seen.append({"headers": headers, "body": body, "verified": verified,
                          "clock": clock, "fetched": fetched.json()["data"]})
        return 200 if verified else 401


def test_serve_drives_a_redeem_to_a_verified_signed_settled_webhook() -> None:
    with served_world(seed=11, operator_token=TOKEN,
                      args=("--deliver-webhooks", "--allow-private-webhook-urls")) as server:
        base = server.base_url
        op = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=base, timeout=10) as http:
            issuer = http.post("/sim/v1/participants", headers=op, json={
                "kind": "stablecoin_issuer", "name": "Ether Pound",
                "rtgsBalanceGbp": "1000000.00", "assets": [{"code": "GBPE", "ledger": "evm"}]})
            assert issuer.status_code == 201, issuer.text
            asset = issuer.json()["data"]["assets"][0]
            member = http.post("/sim/v1/participants", headers=op, json={
                "kind": "clearing_member", "name": "Northbank", "wallets": {"GBPE": "500.00"}})
            key = member.json()["data"]["apiKey"]
            auth = {"Authorization": f"Bearer {key}"}
            receiver = _Receiver(base, "", key)
            hook = http.post("/api/v1/webhooks", headers=auth, json={
                "url": receiver.url, "events": ["transaction.settled"]})
            assert hook.status_code == 201, hook.text
            receiver.secret = hook.json()["data"]["signingSecret"]
            tx = http.post("/api/v1/transactions", headers=auth, json={
                "useCase": "redeem", "paymentReference": "INV-SUBPROCESS",
                "source": {"amount": "120.00", "asset": asset},
                "target": {"amount": "120.00", "asset": {"code": "GBP"}}})
            assert tx.status_code == 201, tx.text
            tx_id = tx.json()["data"]["id"]
            clock = http.post("/sim/v1/clock/advance", headers=op, json={"seconds": 3600})
            assert clock.json()["data"]["now"] == "2026-01-01T01:00:00.000Z"
            attempts = http.get(f"/sim/v1/deliveries?transactionId={tx_id}",
                                headers=op).json()["data"]
        receiver.server.shutdown()
        assert [a["outcome"] for a in attempts] == ["delivered"]
        [seen] = receiver.seen
        assert seen["verified"]
        event = json.loads(seen["body"])
        assert (event["type"], event["data"]["transactionId"]) == ("transaction.settled", tx_id)
        assert seen["fetched"]["lifecycleStatus"] == "settled"
        # the receiver's callbacks were served at the delivery's virtual instant
        t = int(seen["headers"]["Service-Signature"].split(",")[0][2:])
        assert seen["clock"]["unixSeconds"] == t
        assert seen["clock"]["advancingTo"] == "2026-01-01T01:00:00.000Z"
        assert attempts[0]["request"]["body"].encode() == seen["body"]
    assert server.process.returncode == 0, server.stderr
    assert f"--> {event['id']} attempt 1 POST {receiver.url} [200]" in server.stdout
    assert "Traceback" not in server.stderr


def test_serve_world_prints_signing_secrets_and_the_operator_reads_them(tmp_path: Path) -> None:
    """A receiver set up from a world file can verify: the banner prints each staged
    subscription's secret, and GET /sim/v1/webhooks gives every subscription's."""
    with served(tmp_path, "--access-log") as server:
        [line] = [b for b in server.banner if b.startswith("webhook hook: ")]
        secret = line.split()[-1]
        assert secret.startswith("whsec_") and "https://hooks.example.com/w" in line
        listed = httpx.get(f"{server.base}/sim/v1/webhooks", headers=server.operator)
        assert listed.status_code == 200, listed.text
        [hook] = listed.json()["data"]
        assert hook["signingSecret"] == secret and hook["id"] == line.split()[2]
        assert hook["participantId"] == server.participant_id("northbank")
        mine = httpx.get(f"{server.base}/sim/v1/webhooks", headers=server.operator,
                         params={"participantId": server.participant_id("etherpound")})
        assert mine.json()["data"] == []
        assert httpx.get(f"{server.base}/sim/v1/webhooks").status_code == 401
    assert '"GET /sim/v1/webhooks HTTP/1.1" 200' in server.output  # --access-log
    assert "Traceback" not in server.errors


def test_serve_has_no_access_log_by_default(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        httpx.get(f"{server.base}/sim/v1/clock", headers=server.operator).raise_for_status()
    assert "GET /sim/v1/clock" not in server.output and "clearing-sim stopped" in server.output


# the world file's gateway: TLS files beside the world file ----------------------------------
GATEWAY_WORLD = """\
world: {seed: 5}
members:
  northbank: {name: Northbank, wallets: {GBPQ: "100.00"}}
""" + SOL_QUID_YAML + """\
    gateway: {apiBaseUrl: "%(url)s", patienceMs: 100,
              caFile: %(ca)s, clientCert: %(cert)s, clientKey: %(key)s}
webhooks:
  hook: {participant: northbank, url: "https://hooks.example.com/w",
         events: [transaction.settled]}
"""
_CERTS = {"ca": "certs/ca.crt", "cert": "certs/service-client.crt",
          "key": "certs/service-client.key"}


def test_serve_from_another_folder_reads_the_gateways_tls_files_beside_the_world_file(
        tmp_path: Path) -> None:
    """Authentication 8 over mTLS, with the world file's relative caFile/clientCert/clientKey
    read from its own folder although ``serve`` runs in the project's folder: a Mode 3
    redeem settles through the reference gateway."""
    import datetime as dt

    from clearing_sim.gateway.reference import GatewaySettings, ReferenceIssuer, create_app
    from clearing_sim.gateway.serving import ServerThread, ServerTls
    from clearing_sim.tls import write_bundle

    bundle = write_bundle(tmp_path / "certs", dt.datetime.now(dt.UTC))
    tls = ServerTls(bundle.server_cert, bundle.server_key, client_ca=bundle.ca_cert)
    issuer = ReferenceIssuer(GatewaySettings(mode="MODE_3", step_ms=5))
    with ServerThread(create_app(issuer), tls=tls) as gateway, \
            served(tmp_path, world=GATEWAY_WORLD % {"url": gateway.base_url, **_CERTS}) \
            as server:
        assert Path.cwd() != tmp_path
        auth = {"Authorization": f"Bearer {server.api_key('northbank')}"}
        listed = httpx.get(f"{server.base}/sim/v1/participants", headers=server.operator)
        [quid] = [p for p in listed.json()["data"] if p["participantName"] == "Sol Quid"]
        made = httpx.post(f"{server.base}/api/v1/transactions", headers=auth, json={
            "useCase": "redeem", "paymentReference": "INV-TLS",
            "source": {"amount": "40.00", "asset": quid["assets"][0]},
            "target": {"amount": "40.00", "asset": {"code": "GBP"}}})
        assert made.status_code == 201, made.text
        tx_id = made.json()["data"]["id"]
        httpx.post(f"{server.base}/sim/v1/clock/advance", headers=server.operator,
                   json={"seconds": 120}, timeout=60).raise_for_status()
        tx = httpx.get(f"{server.base}/api/v1/transactions/{tx_id}", headers=auth).json()
    assert tx["data"]["lifecycleStatus"] == "settled", tx
    assert len(issuer.instructions) == 1
    assert "Traceback" not in server.errors


def test_serve_with_a_missing_gateway_tls_file_exits_2_at_its_line(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(GATEWAY_WORLD % {"url": "https://127.0.0.1:9", **_CERTS})
    result = _serve("--world", str(world))
    assert result.exit_code == 2
    assert f"{world}:13:" in result.output and "gateway.caFile" in result.output
    assert "no such file" in result.output and str(tmp_path) in result.output


def test_serve_with_a_gateway_tls_file_that_is_not_pem_exits_2_at_the_issuer(
        tmp_path: Path) -> None:
    (tmp_path / "certs").mkdir()
    for name in _CERTS.values():
        (tmp_path / name).write_text("not a certificate\n")
    world = tmp_path / "world.yaml"
    world.write_text(GATEWAY_WORLD % {"url": "https://127.0.0.1:9", **_CERTS})
    result = _serve("--world", str(world))
    assert result.exit_code == 2, result.output
    assert f"{world}:6:" in result.output and "issuers.solquid" in result.output
    assert "cannot load TLS files" in result.output and "Traceback" not in result.output


_PATH_VALUES = st.one_of(
    st.sampled_from(["certs/ca.crt", "certs/service-client.crt", "certs/service-client.key",
                     "certs", "world.yaml", ".", "..", "/dev/null", "/", "missing.pem",
                     "certs/../certs/ca.crt", "~/ca.crt", "certs/ca.crt\\u0000"]),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ca=_PATH_VALUES, cert=_PATH_VALUES, key=_PATH_VALUES)
def test_any_gateway_tls_paths_exit_2_with_a_message_never_a_traceback(
        tmp_path: Path, ca: str, cert: str, key: str) -> None:
    """``serve --world`` on a port in use: whatever the TLS fields say, the world file is
    refused at its line (exit 2) or accepted and the port refused (exit 2), never a
    traceback."""
    import datetime as dt

    from clearing_sim.tls import write_bundle

    if not (tmp_path / "certs").exists():
        write_bundle(tmp_path / "certs", dt.datetime.now(dt.UTC))
    world = tmp_path / "world.yaml"
    world.write_text(GATEWAY_WORLD % {"url": "https://127.0.0.1:9", "ca": json.dumps(ca),
                                      "cert": json.dumps(cert), "key": json.dumps(key)})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = _serve("--world", str(world), "--port", str(taken.getsockname()[1]))
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert f"{world}:" in result.output or "cannot listen" in result.output, result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--webhook-ca", "{ca}"], "--webhook-ca applies to --deliver-webhooks only"),
    (["--deliver-webhooks", "--webhook-ca", "missing.pem"], "expected a PEM file"),
    (["--deliver-webhooks", "--webhook-ca", "{folder}"], "expected a PEM file"),
    (["--deliver-webhooks", "--webhook-ca", "{key}"], "no CA certificate could be loaded"),
    (["--deliver-webhooks", "--webhook-ca", "/dev/zero"], "expected a PEM file"),
])
def test_a_bad_webhook_ca_exits_2_with_a_message(tmp_path: Path, args: list[str],
                                                 message: str) -> None:
    """``--webhook-ca``: a PEM CA bundle for real deliveries to https receivers; anything
    else is refused before the world is built (never read without bound: /dev/zero)."""
    import datetime as dt

    from clearing_sim.tls import write_bundle

    bundle = write_bundle(tmp_path / "certs", dt.datetime.now(dt.UTC))
    names = {"ca": str(bundle.ca_cert), "folder": str(tmp_path), "key": str(bundle.server_key)}
    result = _serve(*(a.format(**names) for a in args))
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ca=_PATH_VALUES)
def test_any_webhook_ca_path_exits_2_with_a_message_never_a_traceback(tmp_path: Path,
                                                                      ca: str) -> None:
    """On a port in use: the bundle is refused (exit 2) or accepted and the port refused
    (exit 2); never a traceback."""
    import datetime as dt

    from clearing_sim.tls import write_bundle

    if not (tmp_path / "certs").exists():
        write_bundle(tmp_path / "certs", dt.datetime.now(dt.UTC))
    with contextlib.chdir(tmp_path), socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = _serve("--deliver-webhooks", "--webhook-ca", ca,
                        "--port", str(taken.getsockname()[1]))
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert "--webhook-ca" in result.output or "cannot listen" in result.output, result.output
