"""``clearing-sim journal export``: a recorded session becomes a scenario file that passes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml
from click.testing import CliRunner

from clearing_sim.cli import main
from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.cli import load_world
from clearing_sim.http.replay import open_journal
from tests.http.conftest import ETHER_POUND_YAML, OP, TOKEN, Client, redeem_body

WORLD = """\
world: {seed: 7}
members:
  northbank: {name: Northbank, wallets: {GBPE: "1000.00"}}
""" + ETHER_POUND_YAML


def record(tmp_path: Path) -> tuple[Path, Path, str]:
    """A session against ``serve --world``: a redeem that settles, one armed to fail that
    parks and is fixed by the operator, a bad request, clock moves; its journal."""
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    journal = tmp_path / "session.jsonl"
    app = create_app(ServeOptions(operator_token=TOKEN), scenario=load_world(str(world)))
    open_journal(app, journal, (world.name, hashlib.sha256(world.read_bytes()).hexdigest()),
                 None)
    client = Client(app)
    staged = {s.key: s for s in client.sim.staged}
    member = {"Authorization": f"Bearer {staged['northbank'].api_key}"}
    cast = client.op("GET", "/sim/v1/participants").json()["data"]
    asset = next(p["assets"][0] for p in cast if p["participantName"] == "Ether Pound")
    first = client.post("/api/v1/transactions", headers={**member, "Idempotency-Key": "r-1"},
                        json=redeem_body(asset, reference="INV-1"))
    assert first.status_code == 201, first.text
    client.advance(120)
    assert client.get(f"/api/v1/transactions/{first.json()['data']['id']}",
                      headers=member).json()["data"]["lifecycleStatus"] == "settled"
    second = client.post("/api/v1/transactions", headers=member,
                         json=redeem_body(asset, reference="INV-2"))
    tx = second.json()["data"]["id"]
    session = client.op("POST", "/sim/v1/sessions",
                        {"participantId": staged["northbank"].participant.id})
    admin = {"Authorization": f"Bearer {session.json()['data']['token']}"}
    armed = client.post("/api/v1/conformance/run", headers=admin,
                        json={"transactionId": tx, "scenario": "failed"})
    assert armed.status_code == 200, armed.text
    client.advance(120)
    assert client.post("/api/v1/transactions", headers=member, json={}).status_code == 400
    assert client.op("POST", f"/sim/v1/operator/transactions/{tx}/resolve").status_code == 200
    client.advance(120)
    client.op("POST", "/sim/v1/checkpoints", {"name": "end"})
    digest = str(client.sim.world.log.digest())
    client.close()
    return journal, world, digest


def test_an_exported_session_passes_under_clearing_sim_run(tmp_path: Path) -> None:
    journal, world, digest = record(tmp_path)
    out = tmp_path / "found-by-hand.yaml"
    runner = CliRunner()
    result = runner.invoke(main, ["journal", "export", str(journal), "--world", str(world),
                                  "--operator-token", TOKEN, "--scenario", str(out)])
    assert result.exit_code == 0, result.output
    document = yaml.safe_load(out.read_text())
    steps = document["steps"]
    assert {"digest": digest} in [step.get("expect") for step in steps]
    assert steps[0]["call"]["as"] == "northbank" and steps[0]["expect"] == {"status": 201}
    assert any(step.get("call", {}).get("credential") == "admin" for step in steps)
    assert any("operator" in step for step in steps)
    assert any(step.get("expect", {}).get("status") == 400 for step in steps)
    run = runner.invoke(main, ["run", str(out)])
    assert run.exit_code == 0, run.output


def test_a_session_the_format_cannot_express_exits_2_naming_the_entry(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    app = create_app(ServeOptions(operator_token=TOKEN, seed=3))
    open_journal(app, journal, None, None)
    client = Client(app)
    client.request("PUT", "/sim/v1/receivers", headers=OP,
                   json={"url": "https://hooks.example.com/x", "status": 503})
    client.close()
    result = CliRunner().invoke(main, ["journal", "export", str(journal), "--operator-token",
                                       TOKEN, "--scenario", str(tmp_path / "o.yaml")])
    assert result.exit_code == 2
    assert "entry 1: PUT /sim/v1/receivers has no scenario step" in result.output
