"""Restart by replay: a journaled world rebuilt from its journal (in process, over ASGI)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http import clock as clock_module
from clearing_sim.http.cli import load_world
from clearing_sim.http.journal import JournalError, decode_line, encode_line, read_journal
from clearing_sim.http.options import ClockMode
from clearing_sim.http.replay import open_journal
from tests.http.conftest import (
    ETHER_POUND_YAML,
    OP,
    TOKEN,
    Client,
    Party,
    Receiver,
    add,
    held_receiver,
    issuer_body,
    make_client,
    member_body,
    real_answers,
    redeem_body,
    resend,
)


def journaled(path: Path, *, token: str = TOKEN, **options: Any) -> tuple[Client, list[str]]:
    """A shim journaling to ``path`` (replaying it first when it exists)."""
    options.setdefault("seed", 3)
    app = create_app(ServeOptions(operator_token=token, **options))
    existing = read_journal(path) if path.exists() else None
    lines = open_journal(app, path, None, existing)
    return Client(app), lines


def session(client: Client) -> list[str]:
    """A short session: a cast, two redemptions, a subscription, advances, a fix."""
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    client.post("/api/v1/webhooks", headers=member.auth,
                json={"url": "https://hooks.northbank.example/h",
                      "events": ["transaction.received", "transaction.settled"]})
    ids = []
    for n in range(2):
        answer = client.post("/api/v1/transactions", headers={**member.auth,
                                                              "Idempotency-Key": f"k-{n}"},
                             json=redeem_body(issuer.asset, reference=f"INV-{n}"))
        assert answer.status_code == 201, answer.text
        ids.append(answer.json()["data"]["id"])
        client.advance(30)
    client.get(f"/api/v1/transactions/{ids[0]}", headers=member.auth)
    client.advance(3600)
    return ids


def digest(client: Client) -> str:
    return str(client.sim.world.log.digest())


def test_a_restart_replays_the_journal_to_the_same_digest(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    first, lines = journaled(path)
    assert "new" in lines[0]
    session(first)
    before, now_ms = digest(first), first.sim.world.now_ms
    first.close()
    second, lines = journaled(path)
    assert "replayed" in lines[-1] and before in lines[-1]
    assert digest(second) == before and second.sim.world.now_ms == now_ms
    # ... and carries on appending: a third start sees the second's requests too.
    second.advance(60)
    after = digest(second)
    second.close()
    third, _ = journaled(path)
    assert digest(third) == after
    third.close()


def test_the_journal_never_holds_a_secret_in_clear(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    add(client, issuer_body())
    member = add(client, member_body())
    client.get("/api/v1/transactions", headers=member.auth)
    client.close()
    text = path.read_text()
    assert TOKEN not in text and member.key not in text
    header = json.loads(text.splitlines()[0])
    assert header["seed"] == 3 and header["keyMaterial"]["tokenCheck"]


def test_a_wrong_token_another_seed_or_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    client.advance(1)
    client.close()
    with pytest.raises(JournalError, match="another operator token"):
        journaled(path, token="another-token-1")
    with pytest.raises(JournalError, match="seed 3 in the journal, 4 here"):
        journaled(path, seed=4)
    with pytest.raises(JournalError, match="clock manual in the journal"):
        journaled(path, clock=ClockMode.REALTIME)
    lines = path.read_bytes().splitlines(keepends=True)
    header = decode_line(lines[0])
    assert header is not None
    path.write_bytes(encode_line({**header, "version": "0.0.1"}) + b"".join(lines[1:]))
    with pytest.raises(JournalError, match=r"written by clearing-sim 0\.0\.1; this is"):
        journaled(path)


def test_a_torn_last_line_is_dropped_and_said(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    add(client, issuer_body())
    member = add(client, member_body())
    client.advance(5)
    before = digest(client)
    client.close()
    with path.open("ab") as file:  # a crash mid-write: half a request line, no newline
        file.write(b'{"n":99,"k":"api","at":5000,"method":"POST","path":"/api/v1/tr')
    second, lines = journaled(path)
    assert any("torn last line" in line for line in lines)
    assert digest(second) == before
    second.get("/api/v1/transactions", headers=member.auth)
    second.close()
    assert read_journal(path).torn_bytes == 0  # the torn tail was cut before appending


def test_a_damaged_line_before_the_end_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    client.advance(5)
    client.advance(5)
    client.close()
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"steps"', b'"stePs"')
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalError, match=":2: a damaged line"):
        read_journal(path)


def test_reads_of_the_operator_and_refusals_at_the_door_are_not_journaled(
        tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    client.get("/sim/v1/clock", headers=OP)
    client.post("/sim/v1/participants", json=member_body())  # no token: 401
    client.get("/nowhere")
    client.close()
    assert read_journal(path).entries == ()


def test_checkpoint_then_rewind_rebuilds_the_world_and_the_same_requests_give_the_same_digest(
        tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    marked = client.op("POST", "/sim/v1/checkpoints", {"name": "start"})
    assert marked.status_code == 201, marked.text
    at_checkpoint = digest(client)
    assert marked.json()["data"]["digest"] == at_checkpoint

    def more() -> str:
        answer = client.post("/api/v1/transactions", headers=member.auth,
                             json=redeem_body(issuer.asset or {}, reference="INV-R"))
        client.advance(600)
        return str(answer.json()["data"]["id"])

    first_id, first_digest = more(), digest(client)
    back = client.op("POST", "/sim/v1/rewind", {"checkpoint": "start"})
    assert back.status_code == 200, back.text
    assert digest(client) == at_checkpoint and client.sim.world.now_ms == 0
    assert client.sim.world.transactions.get(first_id) is None  # (a GET would be a request)
    second_id = more()
    assert (second_id, digest(client)) == (first_id, first_digest)
    client.close()
    restarted, _ = journaled(path)  # the rewind is journaled: a restart rebuilds this world
    assert digest(restarted) == first_digest
    restarted.close()


def test_checkpoint_errors(tmp_path: Path) -> None:
    bare = Client(create_app(ServeOptions(operator_token=TOKEN, seed=3)))
    answer = bare.op("POST", "/sim/v1/checkpoints", {})
    assert (answer.status_code, answer.json()["errors"][0]["code"]) == (409, "journal_required")
    bare.close()
    client, _ = journaled(tmp_path / "j.jsonl")
    assert client.op("POST", "/sim/v1/checkpoints", {}).json()["data"]["name"] == "cp-1"
    again = client.op("POST", "/sim/v1/checkpoints", {"name": "cp-1"})
    assert (again.status_code, again.json()["errors"][0]["code"]) == (409, "checkpoint_exists")
    missing = client.op("POST", "/sim/v1/rewind", {"checkpoint": "nope"})
    assert (missing.status_code, missing.json()["errors"][0]["code"]) == \
        (404, "checkpoint_not_found")
    listed = client.op("GET", "/sim/v1/checkpoints")
    assert [c["name"] for c in listed.json()["data"]] == ["cp-1"]
    client.close()


REAL = {"deliver_webhooks": True, "allow_private_webhook_urls": True}


def delivering(path: Path, receiver: Receiver, events: list[str]
               ) -> tuple[Client, Party, dict[str, str]]:
    """A journaled shim delivering webhooks for real: an issuer, a member subscribed to
    ``events`` at ``receiver``; the client, the member and the issuer's asset."""
    client, _ = journaled(path, **REAL)
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    hooked = client.post("/api/v1/webhooks", headers=member.auth,
                         json={"url": receiver.url, "events": events})
    assert hooked.status_code == 201, hooked.text
    return client, member, issuer.asset


def test_real_webhook_outcomes_are_replayed_as_data_without_calling_receivers(
        tmp_path: Path, receiver: Receiver) -> None:
    """--deliver-webhooks: each real attempt's outcome is journaled; replay feeds it in."""
    path = tmp_path / "j.jsonl"
    client, member, asset = delivering(path, receiver,
                                       ["transaction.received", "transaction.settled"])
    receiver.status = 503  # the first attempts fail, the retries (after 60 s) succeed
    client.post("/api/v1/transactions", headers=member.auth, json=redeem_body(asset))
    client.advance(30)
    real_answers(client)  # the first attempt's POST is answered 503 (learned at +60 s)
    receiver.status = 200
    client.advance(3600)
    sent, before = len(receiver.received), digest(client)
    client.close()
    outcomes = [o for _, e in read_journal(path).entries if e["k"] == "learned"
                for o in e["outcomes"]]
    assert [0, 503, None] in outcomes and [2, 200, None] in outcomes  # by order of sending
    again, _ = journaled(path, **REAL)
    assert digest(again) == before
    assert len(receiver.received) == sent  # nobody was called again
    again.close()


def test_a_delivery_without_a_journaled_outcome_is_sent_again_at_restart(
        tmp_path: Path, receiver: Receiver) -> None:
    """The server died with a real POST on the wire (its outcome is journaled only when the
    world learns it, 60 s later): the restarted server sends it again with its next advance,
    journals that outcome, and ends where a server that never died does."""
    path, whole = tmp_path / "j.jsonl", tmp_path / "whole.jsonl"
    for journal in (path, whole):
        client, member, asset = delivering(journal, receiver, ["transaction.received"])
        client.post("/api/v1/transactions", headers=member.auth, json=redeem_body(asset))
        client.advance(1)
        if journal == whole:
            client.advance(120)
            kept = digest(client)
        client.close()
    assert not [e for _, e in read_journal(path).entries if e["k"] == "learned"]
    sent = len(receiver.received)
    again, said = journaled(path, **REAL)
    assert any("1 real deliveries were on the wire" in line for line in said)
    again.advance(120)
    assert len(receiver.received) == sent + 1
    [learned] = [e for _, e in read_journal(path).entries if e["k"] == "learned"]
    assert learned["outcomes"] == [[0, 200, None]]
    assert digest(again) == kept
    again.close()


def test_a_real_outcome_missing_from_the_journal_stops_the_replay(
        tmp_path: Path, receiver: Receiver) -> None:
    """The world must read each real outcome at its learn instant: a journal whose
    ``learned`` entry is gone (its ``clock`` entries kept) cannot replay, and says which
    delivery; the file is left as it was."""
    path = tmp_path / "j.jsonl"
    client, member, asset = delivering(path, receiver, ["transaction.received"])
    client.post("/api/v1/transactions", headers=member.auth, json=redeem_body(asset))
    client.advance(120)
    client.close()
    lines = path.read_bytes().splitlines(keepends=True)
    kept = [line for line in lines if b'"k":"learned"' not in line]
    assert len(kept) == len(lines) - 1
    renumbered = [kept[0]] + [encode_line({**{k: v for k, v in decode_line(line).items()
                                              if k != "crc"}, "n": n})
                              for n, line in enumerate(kept[1:], start=1)]
    path.write_bytes(b"".join(renumbered))
    before = path.read_bytes()
    with pytest.raises(JournalError, match="real delivery 0 is learned at 60"):
        journaled(path, **REAL)
    assert path.read_bytes() == before


def test_a_journal_of_the_older_deliveries_entries_is_refused_by_name(tmp_path: Path) -> None:
    """Before issue 31 §2 a real outcome was read at its arrival's instant (``deliveries``
    entries); replaying those now would build another world, so the journal is refused,
    naming the entry, and the file is left as it was."""
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path, **REAL)
    client.advance(1)
    client.close()
    lines = path.read_bytes().splitlines(keepends=True)
    entry = {"n": len(lines), "k": "deliveries", "at": 1000, "outcomes": [[200, None]]}
    path.write_bytes(b"".join(lines) + encode_line(entry))
    before = path.read_bytes()
    with pytest.raises(JournalError, match=r"deliveries.*issue 31"):
        journaled(path, **REAL)
    assert path.read_bytes() == before


def test_issuer_webhooks_are_journaled_and_a_real_gateway_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    issuer = add(client, issuer_body())
    refused = client.request("PUT", f"/sim/v1/operator/issuers/{issuer.id}/gateway",
                             headers=OP, json={"apiBaseUrl": "https://issuer.example/api"})
    assert (refused.status_code, refused.json()["errors"][0]["code"]) == (409, "not_journaled")
    arrived = client.post(f"/issuer-webhooks/{issuer.id}", content=b'{"forged": true}',
                          headers={"Service-Signature": "t=1,v1=00"})
    assert arrived.status_code == 401
    before = digest(client)
    client.close()
    kinds = [e["k"] for _, e in read_journal(path).entries]
    assert kinds == ["op", "dropped"]  # refused: its record's two ids, not its body
    again, _ = journaled(path)
    assert digest(again) == before
    again.close()


@pytest.mark.parametrize("fsync_s", [0.0, 0.05], ids=["disk", "slow-disk"])
def test_an_advance_in_slices_with_reads_between_them_replays_to_the_same_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fsync_s: float) -> None:
    """Issues 14 and 16 together: a long advance runs in slices and reads are answered (and
    logged) between two of them; each slice is its own journal entry, so the restart replays
    every read where it was served, and a write that waited for the advance's end after it.

    Where a read was served is read from the journal, not from the clock when its answer
    came back: the answer waits for its entry's fsync, in a thread, while the advance goes
    on (on a slow disk, or a loaded CI machine, the whole advance ends first)."""
    # one event per slice: a read needs a few turns of the event loop to reach the world's
    # lock, and each slice yields one
    monkeypatch.setattr(clock_module, "_STEPS_PER_SLICE", 1)
    if fsync_s:
        fsync = os.fsync

        def slow_fsync(fd: int) -> None:
            time.sleep(fsync_s)
            fsync(fd)

        monkeypatch.setattr(os, "fsync", slow_fsync)
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    for n in range(12):  # 50 ms apart: their events fall at many instants, so many slices
        answer = client.post("/api/v1/transactions", headers=member.auth,
                             json=redeem_body(issuer.asset, amount="10.00", reference=f"S-{n}"))
        assert answer.status_code == 201, answer.text
        client.advance(0.05)
    http = client.http
    seen: list[int] = []

    async def during() -> None:
        advance = asyncio.ensure_future(http.post("/sim/v1/clock/advance", headers=OP,
                                                  json={"seconds": 7200}))
        write = None
        while not advance.done():
            listed = await http.get("/api/v1/transactions?limit=3", headers=member.auth)
            assert listed.status_code == 200, listed.text
            seen.append(client.sim.world.now_ms)
            if write is None:
                write = asyncio.ensure_future(http.post(
                    "/api/v1/transactions", headers=member.auth,
                    json=redeem_body(issuer.asset or {}, amount="1.00", reference="LATE")))
            await asyncio.sleep(0)
        assert (await advance).status_code == 200
        assert write is not None
        assert (await write).json()["data"]["initiatedAt"] == "2026-01-01T02:00:00.600Z"

    client.run(during())
    entries = [e for _, e in read_journal(path).entries]
    between = [e["at"] for before, e, after
               in zip(entries, entries[1:], entries[2:], strict=False)
               if e["k"] == "api" and e["method"] == "GET"
               and before["k"] == after["k"] == "clock" and after["at"] < 7_200_600]
    assert between and all(0 < at < 7_200_000 for at in between), (between, seen)
    slices = [e for e in entries if e["k"] == "clock"]
    reached = [e["to"] for e in slices]
    assert len(slices) > 20 and reached == sorted(reached) and reached[-1] == 7_200_600
    before = digest(client)
    client.close()
    restarted, _ = journaled(path)
    assert digest(restarted) == before
    restarted.close()
    # Each slice ends between two instants: the same requests, with each slice made an
    # advance of its own, give the same digest (what an export and the crash test rely on).
    assert by_advances(path) == before


def test_a_journal_cut_in_the_middle_of_an_advance_restarts_where_an_advance_would_stop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash mid-advance (the answer never sent) leaves the slices already journaled:
    the restart stops at the instant the last one reached, the world an advance to that
    instant leaves, and carries on from there."""
    monkeypatch.setattr(clock_module, "_STEPS_PER_SLICE", 3)
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    for n in range(6):
        client.post("/api/v1/transactions", headers=member.auth,
                    json=redeem_body(issuer.asset, amount="5.00", reference=f"C-{n}"))
    client.advance(3600)
    client.close()
    journal = read_journal(path)
    cuts = [entry for _, entry in journal.entries if entry["k"] == "clock"]
    assert len(cuts) > 3
    entry = cuts[len(cuts) // 2]  # cut the file where the next entry's line starts
    following = next(o for o, e in journal.entries if e["n"] == entry["n"] + 1)
    with path.open("r+b") as file:
        file.truncate(following)
    restarted, _ = journaled(path)
    assert restarted.sim.world.now_ms == entry["to"] < 3_600_000
    cut = digest(restarted)
    restarted.close()
    assert by_advances(path) == cut


def by_advances(path: Path) -> str:
    """The digest of a fresh shim sent the journal's requests, each clock entry an advance to
    the instant it reached."""
    client = resend(read_journal(path), TOKEN)
    result = digest(client)
    client.close()
    return result


def test_a_world_past_the_year_9999_answers_and_replays(tmp_path: Path) -> None:
    """A world file's epoch of 9999-12-01 and an advance of 3,000,000 s (under the
    366-day bound): the advance answered 500 (``datetime`` holds no year 10000), every
    later request 500 too, and the journal, which held the advance, could not replay
    (exit 1). The clock renders in ISO 8601's expanded form and the restart replays."""
    world = tmp_path / "w.yaml"
    world.write_text('world: {seed: 7, epoch: "9999-12-01T00:00:00.000Z"}\nmembers:\n'
                     '  northbank: {name: Northbank, wallets: {GBPE: "1000.00"}}\n'
                     + ETHER_POUND_YAML)
    path = tmp_path / "j.jsonl"

    def start() -> Client:
        app = create_app(ServeOptions(operator_token=TOKEN), scenario=load_world(str(world)))
        open_journal(app, path, (world.name, hashlib.sha256(world.read_bytes()).hexdigest()),
                     read_journal(path) if path.exists() else None)
        return Client(app)

    client = start()
    staged = {s.key: s for s in client.sim.staged}
    member = {"Authorization": f"Bearer {staged['northbank'].api_key}"}
    asset = next(p["assets"][0] for p in client.op("GET", "/sim/v1/participants").json()["data"]
                 if p["participantName"] == "Ether Pound")
    made = client.post("/api/v1/transactions", headers=member, json=redeem_body(asset))
    assert made.status_code == 201, made.text
    advanced = client.post("/sim/v1/clock/advance", headers=OP, json={"seconds": 3_000_000})
    assert advanced.status_code == 200, advanced.text
    assert advanced.json()["data"]["now"] == "+10000-01-04T17:20:00.000Z"
    tx = client.get(f"/api/v1/transactions/{made.json()['data']['id']}", headers=member)
    assert tx.status_code == 200 and tx.json()["data"]["lifecycleStatus"] == "settled"
    before = digest(client)
    client.close()
    again = start()
    assert digest(again) == before
    assert again.op("GET", "/sim/v1/clock").json()["data"]["now"] == \
        "+10000-01-04T17:20:00.000Z"
    again.close()


def test_a_checkpoint_is_refused_while_an_advance_waits_for_real_receivers(
        tmp_path: Path) -> None:
    """A checkpoint taken while the clock waited for a real receiver's answer named a
    lineage ending in a clock move whose outcomes were not yet journaled: the rewind to it
    rebuilt another world (500, after replacing the world) and the journal then failed its
    restart. It is 409 ``clock_awaiting_receivers``; once answered, checkpoints and rewinds
    work and the restart replays to the same digest."""
    path = tmp_path / "j.jsonl"
    with held_receiver() as receiver:
        client, _ = journaled(path, deliver_webhooks=True, allow_private_webhook_urls=True)
        try:
            issuer, member = add(client, issuer_body()), add(client, member_body())
            assert issuer.asset is not None
            hook = client.post("/api/v1/webhooks", headers=member.auth, json={
                "url": receiver.url, "events": ["transaction.received"]})
            assert hook.status_code == 201, hook.text
            made = client.post("/api/v1/transactions", headers=member.auth,
                               json=redeem_body(issuer.asset))
            assert made.status_code == 201, made.text
            http = client.http
            tried: list[Any] = []

            async def during() -> None:
                advance = asyncio.ensure_future(http.post(
                    "/sim/v1/clock/advance", headers=OP, json={"seconds": 60}))
                for _ in range(2000):  # until the advance is paused for the receiver
                    if client.app.state.clock.awaiting_peers:
                        break
                    await asyncio.sleep(0.01)
                tried.append(await http.post("/sim/v1/checkpoints", headers=OP,
                                             json={"name": "mid"}))
                receiver.release.set()
                assert (await advance).status_code == 200
            client.run(during())
            assert tried[0].status_code == 409, tried[0].text
            assert tried[0].json()["errors"][0]["code"] == "clock_awaiting_receivers"
            after = client.op("POST", "/sim/v1/checkpoints", {"name": "after"})
            assert after.status_code == 201, after.text
            client.advance(120)
            rewound = client.op("POST", "/sim/v1/rewind", {"checkpoint": "after"})
            assert rewound.status_code == 200, rewound.text
            before = digest(client)
        finally:
            client.close()
    restarted, _ = journaled(path, deliver_webhooks=True, allow_private_webhook_urls=True)
    assert digest(restarted) == before
    restarted.close()


def test_a_default_checkpoint_name_is_the_next_free_one(tmp_path: Path) -> None:
    """``cp-<n>`` counted from the checkpoints made: a client's own ``cp-2`` made every later
    unnamed checkpoint 409 ``checkpoint_exists``, for good."""
    client, _ = journaled(tmp_path / "j.jsonl")
    try:
        names = [client.op("POST", "/sim/v1/checkpoints", body).json()["data"]["name"]
                 for body in ({"name": "cp-2"}, {}, {}, {})]
    finally:
        client.close()
    assert names == ["cp-2", "cp-3", "cp-4", "cp-5"]


def test_a_rewind_to_a_checkpoint_with_a_real_delivery_on_the_wire_sends_it_again(
        tmp_path: Path, receiver: Receiver) -> None:
    """Between two advances a real POST may be on the wire (its outcome is learned 60 s
    after it was sent): a checkpoint there is a world to go back to. The rewind rebuilds it
    with the request unanswered and the next advance sends it again, to the same log."""
    path = tmp_path / "j.jsonl"
    client, member, asset = delivering(path, receiver, ["transaction.received"])
    client.post("/api/v1/transactions", headers=member.auth, json=redeem_body(asset))
    client.advance(5)
    assert client.sim.world.webhooks.busy  # on the wire
    assert client.op("POST", "/sim/v1/checkpoints", {"name": "wire"}).status_code == 201
    client.advance(120)
    first = digest(client)
    sent = len(receiver.received)
    rewound = client.op("POST", "/sim/v1/rewind", {"checkpoint": "wire"})
    assert rewound.status_code == 200, rewound.text
    client.advance(120)
    assert len(receiver.received) == sent + 1
    assert digest(client) == first
    client.close()
    restarted, _ = journaled(path, **REAL)
    assert digest(restarted) == first
    restarted.close()


def test_a_reset_leaves_the_old_worlds_deliveries_unread(receiver: Receiver) -> None:
    """A reset with a real POST on the wire: the new world never reads it, and its own
    advances do not wait for it."""
    client = make_client(seed=3, **REAL)
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    assert client.post("/api/v1/webhooks", headers=member.auth, json={
        "url": receiver.url, "events": ["transaction.received"]}).status_code == 201
    client.post("/api/v1/transactions", headers=member.auth, json=redeem_body(issuer.asset))
    client.advance(5)
    assert client.op("POST", "/sim/v1/reset", {}).status_code == 200
    client.advance(120)
    assert not [r for r in client.sim.world.log if r.kind == "http.delivery"]
    assert not client.sim.world.webhooks.busy
    client.close()
