"""The console's reads (issue 28 §2, "Reads that change nothing"): ``GET /sim/v1/transactions``,
``/transactions/{id}/story``, ``/overview`` and ``/tail`` answer the world as it is and change
nothing: no log record, no journal entry, no command id drawn from the operator's stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.replay import open_journal
from clearing_sim.stories.story import build_story
from tests.http.conftest import TOKEN, Client, Party, add, issuer_body, member_body, redeem_body
from tests.service.test_hostile_input import state_digest

_READS = ("/sim/v1/transactions", "/sim/v1/transactions?parked=true&limit=1",
          "/sim/v1/transactions?lifecycleStatus=settled&useCase=redeem",
          "/sim/v1/transactions?terminal=false&cursor=1",
          "/sim/v1/overview", "/sim/v1/tail", "/sim/v1/tail?kind=webhook.&limit=3",
          "/sim/v1/transactions/nope/story", "/sim/v1/transactions?parked=maybe")


def _world(journal: Path | None = None) -> tuple[Client, dict[str, str], Party]:
    """Ether Pound and, silent, Quiet Pound; Northbank subscribed to every event; one redeem
    settled and one parked on the issuer's silence."""
    app = create_app(ServeOptions(operator_token=TOKEN, seed=5))
    if journal is not None:
        open_journal(app, journal, None, None)
    client = Client(app)
    ether = add(client, issuer_body())
    quiet = add(client, issuer_body("Quiet Pound", "GBPQ", "evm",
                                    behaviour={"outcomes": {"silence": 1.0}}))
    member = add(client, member_body(GBPE="1000.00", GBPQ="1000.00"))
    hook = client.post("/api/v1/webhooks", headers=member.auth, json={
        "url": "https://hooks.northbank.example/w",
        "events": ["transaction.settled", "transaction.parked", "transaction.received"]})
    assert hook.status_code == 201, hook.text
    ids = {}
    for name, issuer in (("settled", ether), ("parked", quiet)):
        assert issuer.asset is not None
        made = client.post("/api/v1/transactions", headers=member.auth,
                           json=redeem_body(issuer.asset, reference=f"INV-{name}"))
        assert made.status_code == 201, made.text
        ids[name] = made.json()["data"]["id"]
    client.advance(3600)
    return client, ids, member


@pytest.fixture(scope="module")
def world() -> Any:
    client, ids, member = _world()
    yield client, ids, member
    client.close()


def _data(client: Client, path: str) -> Any:
    response = client.op("GET", path)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_reads_change_no_digest_no_log_no_journal(tmp_path: Path) -> None:
    """Issue 28 §2: the console's reads write no log record and no journal entry. Every read
    (answered or refused) twenty times over: the world's state digest, the log's length and
    the journal's bytes are what they were."""
    path = tmp_path / "session.jsonl"
    client, ids, _ = _world(path)
    sim = client.sim
    sim.journal.writer.flush()
    before = state_digest(sim.world), len(sim.world.log), path.read_bytes()
    reads = (*_READS, *(f"/sim/v1/transactions/{i}/story" for i in ids.values()),
             f"/sim/v1/tail?transactionId={ids['parked']}")
    for _ in range(20):
        for read in reads:
            assert client.op("GET", read).status_code in (200, 400, 404)
    sim.journal.writer.flush()
    assert (state_digest(sim.world), len(sim.world.log), path.read_bytes()) == before
    client.close()


def test_the_same_check_catches_a_read_through_the_api(tmp_path: Path) -> None:
    """Issue 28 §2's reason: a read through ``/api/v1`` draws a command id and logs
    ``api.request``, so the check above fails for it (the log grows, the journal too)."""
    path = tmp_path / "session.jsonl"
    client, ids, member = _world(path)
    sim = client.sim
    sim.journal.writer.flush()
    before = len(sim.world.log), path.read_bytes()
    assert client.get(f"/api/v1/transactions/{ids['settled']}",
                      headers=member.auth).status_code == 200
    sim.journal.writer.flush()
    assert len(sim.world.log) == before[0] + 1 and path.read_bytes() != before[1]
    client.close()


@pytest.mark.parametrize(("read", "quiet"), [("/sim/v1/overview", True),
                                             ("/sim/v1/transactions", True),
                                             ("/sim/v1/tail?limit=2", True),
                                             ("/sim/v1/clock", False)])
def test_reads_draw_no_operator_command_id(read: str, quiet: bool) -> None:
    """Issue 28 §2, "no id drawn": after console reads a shim's next operator commandId is
    its twin's (same seed, same calls, no read). ``GET /sim/v1/clock`` draws one: the same
    check fails for it, which shows the check can fail."""
    twins = [Client(create_app(ServeOptions(operator_token=TOKEN, seed=9))) for _ in range(2)]
    for _ in range(3):
        assert twins[0].op("GET", read).status_code == 200
    ids = [c.op("POST", "/sim/v1/clock/advance", {"seconds": 1}).json()["meta"]["commandId"]
           for c in twins]
    assert (ids[0] == ids[1]) is quiet
    for c in twins:
        c.close()


def test_transactions_are_listed_filtered_and_paged(world: Any) -> None:
    client, ids, member = world
    rows = _data(client, "/sim/v1/transactions")
    assert [r["id"] for r in rows] == [ids["settled"], ids["parked"]]
    settled, parked = rows
    assert (settled["lifecycleStatus"], settled["terminal"], settled["parked"]) == (
        "settled", True, False)
    assert (parked["parked"], parked["reasonCode"]) == (True, "approval_sla_exceeded")
    assert settled["legs"][0]["leg"] == "burn" and settled["legs"][0]["settlementMode"]
    assert [r["id"] for r in _data(client, "/sim/v1/transactions?parked=true")] == [
        ids["parked"]]
    assert [r["id"] for r in _data(client, "/sim/v1/transactions?parked=false&terminal=true"
                                           "&useCase=redeem")] == [ids["settled"]]
    assert _data(client, "/sim/v1/transactions?useCase=swap") == []
    assert len(_data(client, f"/sim/v1/transactions?participantId={member.id}")) == 2
    page = client.op("GET", "/sim/v1/transactions?limit=1").json()
    assert page["meta"]["nextCursor"] == "1" and len(page["data"]) == 1
    assert [r["id"] for r in _data(client, "/sim/v1/transactions?cursor=1")] == [ids["parked"]]
    for bad, status in (("parked=yes", 400), ("lifecycleStatus=done", 400), ("limit=0", 400),
                        ("participantId=nobody", 404), ("colour=red", 400)):
        assert client.op("GET", f"/sim/v1/transactions?{bad}").status_code == status, bad


def test_the_story_shows_the_settled_event_and_its_signed_delivery(world: Any) -> None:
    """Issue 28 §1: saga steps, the issuer's instruction statuses, ledger and RTGS moves,
    each delivery attempt with its time, status, signature header and body, as ISO instants
    and offsets from initiation."""
    client, ids, _ = world
    story = _data(client, f"/sim/v1/transactions/{ids['settled']}/story")
    assert story["start"]["offset"] == "+0:00:00.000"
    lanes = {e["lane"] for e in story["entries"]}
    assert {"state", "saga", "issuer", "ledger", "rtgs", "webhook"} <= lanes
    settled = [e for e in story["entries"] if e["kind"] == "transaction.state"
               and e["fields"]["lifecycleStatus"] == "settled"]
    assert len(settled) == 1 and settled[0]["offsetMs"] > 0
    assert story["instructions"][0]["statuses"][-1]["status"] == "COMPLETED"
    [delivery] = [d for d in story["deliveries"] if d["eventType"] == "transaction.settled"]
    assert delivery["outcome"] == "delivered" and delivery["retriesToCome"] == []
    [attempt] = delivery["attempts"]
    assert attempt["response"] == {"status": 200}
    assert attempt["request"]["headers"]["Service-Signature"].startswith("t=")
    assert json.loads(attempt["request"]["body"])["type"] == "transaction.settled"
    assert attempt["at"] == settled[0]["at"] and attempt["offsetMs"] == settled[0]["offsetMs"]
    [health] = story["subscriptions"]
    assert health["status"] == "active" and health["lastSuccess"] is not None
    assert story == build_story(client.sim.world, ids["settled"])  # one builder, two doors


def test_a_parked_story_says_why(world: Any) -> None:
    client, ids, _ = world
    story = _data(client, f"/sim/v1/transactions/{ids['parked']}/story")
    because = story["transaction"]["parkedBecause"]
    assert because["reasonCode"] == "approval_sla_exceeded"
    assert "parked" in because["text"] and because["at"].startswith("2026-01-01T00:")
    assert client.op("GET", "/sim/v1/transactions/nope/story").status_code == 404


def test_overview_and_tail(world: Any) -> None:
    client, ids, member = world
    overview = _data(client, "/sim/v1/overview")
    assert overview["digest"] == client.sim.world.log.digest()
    assert overview["journal"] is False and overview["checkpoints"] == []
    [northbank] = [p for p in overview["participants"] if p["participantId"] == member.id]
    assert northbank["wallets"]["GBPE"] == "900.00" and northbank["rtgsBalanceGbp"]
    tail = _data(client, "/sim/v1/tail?limit=5")
    assert [r["seq"] for r in tail] == [len(client.sim.world.log) - 5 + i for i in range(5)]
    kinds = {r["kind"] for r in _data(client, "/sim/v1/tail?kind=webhook.&limit=1000")}
    assert kinds and all(k.startswith("webhook.") for k in kinds)
    mine = _data(client, f"/sim/v1/tail?transactionId={ids['parked']}&kind=transaction.state")
    assert mine[-1]["fields"]["parked"] is True
