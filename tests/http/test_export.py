"""``clearing-sim journal export``: a recorded session becomes a scenario file that passes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from clearing_sim.cli import main
from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.cli import load_world
from clearing_sim.http.export import REDACTED
from clearing_sim.http.replay import open_journal
from tests.http.conftest import (
    ETHER_POUND_YAML,
    OP,
    SETTLED_HOOK_YAML,
    TOKEN,
    Client,
    redeem_body,
)

WORLD = """\
world: {seed: 7}
members:
  northbank: {name: Northbank, wallets: {GBPE: "1000.00"}}
""" + ETHER_POUND_YAML


def _journaled(tmp_path: Path, text: str = WORLD) -> tuple[Client, Path, Path, str]:
    """A shim on the world file ``text``, journaling; Northbank's API key."""
    world = tmp_path / "world.yaml"
    world.write_text(text)
    journal = tmp_path / "session.jsonl"
    app = create_app(ServeOptions(operator_token=TOKEN), scenario=load_world(str(world)))
    open_journal(app, journal, (world.name, hashlib.sha256(world.read_bytes()).hexdigest()),
                 None)
    client = Client(app)
    key = next(s.api_key for s in client.sim.staged if s.key == "northbank")
    return client, journal, world, key


def record(tmp_path: Path) -> tuple[Path, Path, str]:
    """A session against ``serve --world``: a redeem that settles, one armed to fail that
    parks and is fixed by the operator, a bad request, clock moves; its journal."""
    client, journal, world, _ = _journaled(tmp_path)
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


def _export(journal: Path, world: Path, out: Path) -> Any:
    return CliRunner().invoke(main, ["journal", "export", str(journal), "--world", str(world),
                                     "--operator-token", TOKEN, "--scenario", str(out)])


def test_no_credential_of_the_session_is_written_into_the_scenario(tmp_path: Path) -> None:
    """Isolation and secrets: the API key sent as ``authorization: bearer`` (any case,
    extra spaces: the service takes it) is the cast member's ``as``, not a header with the
    live key in clear; a credential the service refused (the operator token sent to the
    wrong door, an unknown key) is written redacted and refused the same way. Before, the
    key was copied into the file, and the exported scenario failed on its own recording."""
    client, journal, world, key = _journaled(tmp_path)
    for authorization in (f"bearer {key}", f"BEARER   {key}  ", f"Bearer {TOKEN}",
                          "Bearer sk_sandbox_0000", "Basic abc", ""):
        answer = client.get("/api/v1/transactions", headers={"Authorization": authorization})
        assert answer.status_code == (200 if key in authorization else 401), authorization
    digest = str(client.sim.world.log.digest())
    client.close()
    out = tmp_path / "exported.yaml"
    result = _export(journal, world, out)
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert key not in text and TOKEN not in text and "sk_sandbox_0000" not in text
    calls = [step["call"] for step in yaml.safe_load(text)["steps"] if "call" in step]
    assert [c.get("as") for c in calls[:2]] == ["northbank", "northbank"]
    assert [c.get("headers", {}).get("Authorization") for c in calls[2:]] == [
        REDACTED, REDACTED, REDACTED, ""]
    assert {"digest": digest} in [s.get("expect") for s in yaml.safe_load(text)["steps"]]
    run = CliRunner().invoke(main, ["run", str(out)])
    assert run.exit_code == 0, run.output


def test_a_live_credential_the_cast_does_not_hold_is_refused_naming_the_entry(
        tmp_path: Path) -> None:
    """A sandbox key issued during the session (onboarding) cannot be a scenario's ``as``;
    writing it would put a live secret in a file meant to be committed: exit 2, no file."""
    client, journal, world, _ = _journaled(tmp_path)
    applied = client.post("/api/v1/onboarding/applications", json={
        "organisationName": "Eastbank plc", "role": "participant",
        "primaryContact": {"name": "Ada Lovelace", "email": "ada@eastbank.example"},
        "custodyModel": "mpc", "chains": ["evm"]})
    assert applied.status_code == 201, applied.text
    secret = applied.json()["data"]["sandbox"]["apiKeySecret"]
    assert client.get("/api/v1/transactions",
                      headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    client.close()
    out = tmp_path / "exported.yaml"
    result = _export(journal, world, out)
    assert result.exit_code == 2, result.output
    assert "entry 2: the request carries a live credential of this world" in result.output
    assert secret not in result.output and not out.exists()


def test_a_session_whose_webhooks_are_signed_with_token_sealed_keys_exports_a_passing_file(
        tmp_path: Path) -> None:
    """A served world's signing secrets are sealed with its operator token, which a scenario
    file does not hold: the exported file expected the session's digest and failed its own
    run (docs/examples/journal-walkthrough.sh did). It expects the digest its run gives
    after the session's steps, naming the session's beside it."""
    client, journal, world, key = _journaled(tmp_path, WORLD + SETTLED_HOOK_YAML)
    cast = client.op("GET", "/sim/v1/participants").json()["data"]
    asset = next(p["assets"][0] for p in cast if p["participantName"] == "Ether Pound")
    made = client.post("/api/v1/transactions", headers={"Authorization": f"Bearer {key}"},
                       json=redeem_body(asset, reference="INV-1"))
    assert made.status_code == 201, made.text
    client.advance(120)
    session = str(client.sim.world.log.digest())
    assert client.sim.world.log.select("webhook.attempt")  # signed with a sealed secret
    client.close()
    out = tmp_path / "exported.yaml"
    result = _export(journal, world, out)
    assert result.exit_code == 0, result.output
    [step] = [s for s in yaml.safe_load(out.read_text())["steps"]
              if "digest" in s.get("expect", {})]
    assert step["expect"]["digest"] != session and session in step["name"]
    run = CliRunner().invoke(main, ["run", str(out)])
    assert run.exit_code == 0, run.output


def test_a_request_body_that_is_not_utf8_refuses_the_export_naming_the_entry(
        tmp_path: Path) -> None:
    """The journal keeps such a body as base64; a scenario's ``raw`` body is text: exit 2
    naming the entry (it was a UnicodeDecodeError traceback)."""
    client, journal, world, key = _journaled(tmp_path)
    answer = client.post("/api/v1/transactions", content=b"\xff\xfe",
                         headers={"Authorization": f"Bearer {key}",
                                  "Content-Type": "application/json"})
    assert answer.status_code == 400
    client.close()
    result = _export(journal, world, tmp_path / "exported.yaml")
    assert result.exit_code == 2, result.output
    assert "entry 1: the request's body is not UTF-8 text" in result.output


def test_a_credential_the_service_never_checked_is_written_redacted(tmp_path: Path) -> None:
    """A request refused before its credential was looked at (no such route, a version the
    service does not speak) carried a key the world does not take: it is written redacted
    and refused the same way, not a refusal of the export saying the key was live."""
    client, journal, world, _ = _journaled(tmp_path)
    junk = {"Authorization": "Bearer sk_sandbox_never_issued"}
    assert client.get("/api/v1/nowhere", headers=junk).status_code == 404
    assert client.get("/api/v1/transactions", headers={
        **junk, "Service-Version": "1999-01-01"}).status_code == 400
    client.close()
    out = tmp_path / "exported.yaml"
    result = _export(journal, world, out)
    assert result.exit_code == 0, result.output
    assert "sk_sandbox_never_issued" not in out.read_text()
    assert CliRunner().invoke(main, ["run", str(out)]).exit_code == 0


def test_participants_the_session_added_become_add_participant_steps(tmp_path: Path) -> None:
    """Issue 27: ``POST /sim/v1/participants`` refused the export ("has no scenario step").
    Each is now an ``add_participant`` step keyed by its name (``-2`` after a name the file
    uses), its API key and admin token ``as`` that key; the file replays to the session's
    digest."""
    client, journal, world, _ = _journaled(tmp_path, WORLD.replace(
        "members:\n", "members:\n  eastbank: {name: East Bank plc}\n"))
    added = client.op("POST", "/sim/v1/participants", {
        "kind": "clearing_member", "name": "Eastbank", "wallets": {"GBPE": "500.00"}})
    assert added.status_code == 201, added.text
    data = added.json()["data"]
    cast = client.op("GET", "/sim/v1/participants").json()["data"]
    asset = next(p["assets"][0] for p in cast if p["participantName"] == "Ether Pound")
    made = client.post("/api/v1/transactions",
                       headers={"Authorization": f"Bearer {data['apiKey']}"},
                       json=redeem_body(asset, reference="INV-E"))
    assert made.status_code == 201, made.text
    armed = client.post("/api/v1/conformance/run",
                        headers={"Authorization": f"Bearer {data['adminToken']}"},
                        json={"transactionId": made.json()["data"]["id"],
                              "scenario": "failed"})
    assert armed.status_code == 200, armed.text
    client.advance(120)
    digest = str(client.sim.world.log.digest())
    client.close()
    out = tmp_path / "exported.yaml"
    result = _export(journal, world, out)
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert data["apiKey"] not in text and data["adminToken"] not in text
    steps = yaml.safe_load(text)["steps"]
    assert steps[0] == {"operator": {"add_participant": {
        "key": "eastbank-2", "kind": "clearing_member", "name": "Eastbank",
        "wallets": {"GBPE": "500.00"}}}}
    calls = [s["call"] for s in steps if "call" in s]
    assert [(c.get("as"), c.get("credential")) for c in calls] == [
        ("eastbank-2", None), ("eastbank-2", "admin")]
    assert {"digest": digest} in [s.get("expect") for s in steps]
    run = CliRunner().invoke(main, ["run", str(out)])
    assert run.exit_code == 0, run.output


def test_a_portal_session_for_an_added_participant_is_its_admin_credential(
        tmp_path: Path) -> None:
    """A ``POST /sim/v1/sessions`` for a participant the session added names it (it was an
    export refusal); being its second session (``add_participant`` issued one), the digest is
    left out and the export says why, as for the file's own cast."""
    client, journal, world, _ = _journaled(tmp_path)
    added = client.op("POST", "/sim/v1/participants", {"kind": "clearing_member",
                                                       "name": "Eastbank"})
    session = client.op("POST", "/sim/v1/sessions",
                        {"participantId": added.json()["data"]["participantId"]})
    token = session.json()["data"]["token"]
    assert client.get("/api/v1/webhooks", headers={"Authorization": f"Bearer {token}"}) \
        .status_code == 200
    client.close()
    out = tmp_path / "exported.yaml"
    result = _export(journal, world, out)
    assert result.exit_code == 0, result.output
    assert "eastbank was issued a second portal session" in result.output
    steps = yaml.safe_load(out.read_text())["steps"]
    [call] = [s["call"] for s in steps if "call" in s]
    assert (call["as"], call["credential"]) == ("eastbank", "admin")
    assert not [s for s in steps if "digest" in s.get("expect", {})]
    assert CliRunner().invoke(main, ["run", str(out)]).exit_code == 0
