"""The history on disk answers as memory does (issue 30): the same world built twice, its
history once in memory and once in SQLite, gives every history route the same bytes.

Spec: ``GET /api/v1/transactions`` and ``/{id}`` read what the service holds; docs/http.md:
``/sim/v1/log`` and ``/sim/v1/deliveries`` page by cursor. The store must change none of it,
nor the digest. Small batches (``FLUSH_RECORDS``, ``ARCHIVE_BATCH``) make pages and reads
cross batch boundaries and find transactions both waiting for their batch and on disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from clearing_sim.http import history as history_module
from clearing_sim.http.history import History, SqliteLog
from clearing_sim.sim import eventlog
from clearing_sim.sim.eventlog import Record
from tests.http.conftest import (
    OP,
    Client,
    Party,
    add,
    issuer_body,
    make_client,
    member_body,
    redeem_body,
)

HOOK = {"url": "https://hooks.example.com/in", "events": [
    "transaction.received", "transaction.in_flight", "transaction.settled",
    "transaction.cancelled", "transaction.parked", "transaction.failed"]}
LOG_KINDS = (None, "webhook.", "transaction.state", "api.request", "saga.", "no.such")


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eventlog, "FLUSH_RECORDS", 7)
    monkeypatch.setattr(history_module, "ARCHIVE_BATCH", 3)


@pytest.fixture
def pair(small_batches: None) -> Iterator[tuple[Client, Client]]:
    memory, disk = make_client(seed=11), make_client(seed=11, history_on_disk=True)
    yield memory, disk
    memory.close()
    disk.close()


class Twins:
    """Every request sent to both clients; each answer's status and bytes compared."""

    def __init__(self, memory: Client, disk: Client) -> None:
        self.clients = (memory, disk)
        self.differences: list[str] = []
        self.statuses: list[int] = []

    def send(self, method: str, target: str, headers: dict[str, str] | None = None,
             json: Any = None) -> dict[str, Any]:
        if headers is None and target.startswith("/sim/v1/"):
            headers = OP
        answers = [c.request(method, target, headers=headers, json=json) for c in self.clients]
        self.statuses.append(answers[0].status_code)
        first, second = answers
        if (first.status_code, first.content) != (second.status_code, second.content):
            self.differences.append(f"{method} {target}: {first.text[:200]} | "
                                    f"{second.text[:200]}")
        return dict(first.json()) if first.content else {}

    def quiet(self, target: str) -> None:
        """A console read (``quiet``: its ``commandId`` is random): the same ``data``."""
        answers = [c.request("GET", target, headers=OP) for c in self.clients]
        first, second = (a.json()["data"] for a in answers)
        if first != second or answers[0].status_code != 200:
            self.differences.append(f"GET {target}: {str(first)[:200]} | {str(second)[:200]}")

    def quiet_pages(self, target: str) -> None:
        """Every page of a console list (``quiet``), following ``meta.nextCursor``: the same
        ``data`` and cursors."""
        cursor: str | None = "0"
        while cursor is not None:
            answers = [c.request("GET", f"{target}&cursor={cursor}", headers=OP).json()
                       for c in self.clients]
            first, second = ((a["data"], a["meta"]["nextCursor"]) for a in answers)
            if first != second:
                self.differences.append(f"GET {target}&cursor={cursor}: {str(first)[:200]} | "
                                        f"{str(second)[:200]}")
            cursor = first[1]

    def op(self, method: str, target: str, json: Any = None) -> dict[str, Any]:
        return self.send(method, target, OP, json)

    def pages(self, target: str, headers: dict[str, str] | None = None) -> list[Any]:
        """Every page of a paged route, following ``meta.nextCursor``; the items."""
        items: list[Any] = []
        joiner = "&" if "?" in target else "?"
        answer = self.send("GET", target, headers)
        while True:
            items.extend(answer.get("data") or [])
            cursor = (answer.get("meta") or {}).get("nextCursor")
            if cursor is None:
                return items
            answer = self.send("GET", f"{target}{joiner}cursor={cursor}", headers)


def _cast(twins: Twins) -> tuple[Party, Party]:
    memory, disk = twins.clients
    issuer, member = add(memory, issuer_body()), add(memory, member_body(GBPE="100000.00"))
    assert (add(disk, issuer_body()), add(disk, member_body(GBPE="100000.00"))) == \
        (issuer, member)
    return issuer, member


def _history(twins: Twins) -> tuple[Party, Party, list[str]]:
    """A history with every kind of transaction end, webhooks retried, and some still open."""
    issuer, member = _cast(twins)
    assert issuer.asset is not None
    hook = twins.send("POST", "/api/v1/webhooks", member.auth, HOOK)["data"]["id"]
    twins.op("PUT", "/sim/v1/receivers", {"url": HOOK["url"], "status": 500})
    ids = []
    for n in range(9):
        key = {"Idempotency-Key": f"k{n // 2}"}  # each body twice: the second a replay
        body = redeem_body(issuer.asset, f"{n // 2 + 1}.00", f"INV-{n // 2}")
        ids.append(twins.send("POST", "/api/v1/transactions", {**member.auth, **key},
                              body)["data"]["id"])
    twins.send("POST", f"/api/v1/transactions/{ids[4]}/cancel", member.auth)
    for parks in ids[6], ids[8]:  # failed and parked (terminal): one fixed, one left parked
        twins.send("POST", "/api/v1/conformance/run", issuer.admin_auth,
                   {"scenario": "failed", "transactionId": parks})
    twins.op("POST", "/sim/v1/clock/advance", {"seconds": 45})
    twins.op("PUT", "/sim/v1/receivers", {"url": HOOK["url"], "status": 200})
    twins.op("POST", "/sim/v1/clock/advance", {"seconds": 120})
    twins.op("POST", f"/sim/v1/operator/transactions/{ids[6]}/resolve")
    twins.op("POST", "/sim/v1/clock/advance", {"seconds": 3 * 3600})
    for n in range(3):  # still open at the end: live, beside the archived
        ids.append(twins.send("POST", "/api/v1/transactions", member.auth,
                              redeem_body(issuer.asset, "2.50", f"LATE-{n}"))["data"]["id"])
    twins.op("POST", "/sim/v1/clock/advance", {"seconds": 1})
    twins.send("GET", f"/api/v1/webhooks/{hook}", member.auth)
    return issuer, member, [*dict.fromkeys(ids)]


def _read_everything(twins: Twins, issuer: Party, member: Party, ids: list[str]) -> None:
    for kind in LOG_KINDS:
        query = "" if kind is None else f"kind={kind}&"
        twins.pages(f"/sim/v1/log?{query}limit=7")
        twins.send("GET", f"/sim/v1/log?{query}cursor=13")
    twins.send("GET", "/sim/v1/log?limit=1000")
    for kind in LOG_KINDS:  # the console's tail: the last records, from memory or the store
        for limit in (1, 7, 500):
            query = "" if kind is None else f"kind={kind}&"
            twins.quiet(f"/sim/v1/tail?{query}limit={limit}")
    twins.quiet("/sim/v1/transactions?limit=1000")
    for tx in ids[:3]:
        twins.quiet(f"/sim/v1/transactions/{tx}/story")
    twins.pages("/sim/v1/deliveries?limit=5")
    hooks = twins.op("GET", "/sim/v1/webhooks")["data"]
    twins.pages(f"/sim/v1/deliveries?subscriptionId={hooks[0]['id']}&limit=4")
    twins.pages(f"/sim/v1/deliveries?subscriptionId={hooks[0]['id']}&transactionId={ids[0]}"
                "&limit=2")
    for query in ("", "terminal=false&", "terminal=true&", "parked=true&", "parked=false&",
                  "lifecycleStatus=settled&", "lifecycleStatus=received&", "useCase=redeem&",
                  f"participantId={member.id}&", f"participantId={issuer.id}&terminal=true&"):
        twins.quiet_pages(f"/sim/v1/transactions?{query}limit=2")
    for party in (member, issuer):
        twins.pages("/api/v1/transactions?limit=3", party.auth)
        twins.send("GET", "/api/v1/transactions", party.auth)
    for tx in ids:
        twins.pages(f"/sim/v1/deliveries?transactionId={tx}&limit=2")
        for party in (member, issuer):
            twins.send("GET", f"/api/v1/transactions/{tx}", party.auth)
            twins.send("GET", f"/api/v1/transactions/{tx}/recovery-status", party.auth)
        twins.send("POST", f"/api/v1/transactions/{tx}/cancel", member.auth)
    twins.send("GET", "/api/v1/system/status", member.auth)
    twins.op("GET", "/sim/v1/digest")


def test_every_history_route_answers_the_same_bytes_from_sqlite_as_from_memory(
        pair: tuple[Client, Client]) -> None:
    twins = Twins(*pair)
    issuer, member, ids = _history(twins)
    memory, disk = pair
    archived = disk.sim.world.transactions._archive
    assert archived is not None and 0 < len(archived) < len(ids)  # both kinds are read
    assert len(disk.sim.world.transactions.by_id) < len(ids)
    twins.statuses.clear()
    _read_everything(twins, issuer, member, ids)
    assert twins.differences == []
    assert twins.statuses.count(200) > 150 and set(twins.statuses) == {200, 409}  # cancels
    states = {tx.id: (tx.lifecycle_status.value, tx.parked) for tx in disk.sim.world.transactions}
    assert states[ids[3]] == ("settled", False) and states[ids[4]] == ("failed", True)
    assert ids[4] in disk.sim.world.transactions.by_id  # parked: kept for the operator
    assert memory.sim.world.log.digest() == disk.sim.world.log.digest()
    assert len(memory.sim.world.log) == len(disk.sim.world.log)


class _SortedFields(SqliteLog):
    """A broken store: it keeps each record's fields in sorted order (the canonical form)
    instead of the order they were appended in."""

    def add(self, records: Any) -> None:
        super().add([Record(r.at_ms, r.seq, r.kind, dict(sorted(r.fields.items())))
                     for r in records])


class _SkipsOne(SqliteLog):
    """A broken store: its pages leave out the first record they should hold."""

    def page(self, kind: str | None, start: int, limit: int) -> list[Record]:
        return super().page(kind, start + 1, limit)


@pytest.mark.parametrize("broken", [_SortedFields, _SkipsOne])
def test_a_store_that_loses_field_order_or_a_record_is_caught(
        small_batches: None, monkeypatch: pytest.MonkeyPatch, broken: type[SqliteLog]) -> None:
    """The comparison above fails on a store that changes the log route's bytes."""
    original = History.__init__

    def init(self: History, directory: Any = None) -> None:
        original(self, directory)
        self.log = broken(self._db)

    monkeypatch.setattr(History, "__init__", init)
    memory, disk = make_client(seed=11), make_client(seed=11, history_on_disk=True)
    try:
        twins = Twins(memory, disk)
        issuer, member, ids = _history(twins)
        _read_everything(twins, issuer, member, ids)
        assert any(d.startswith("GET /sim/v1/log") for d in twins.differences)
        assert memory.sim.world.log.digest() == disk.sim.world.log.digest()  # hashed apart
    finally:
        memory.close()
        disk.close()


def test_the_history_file_leaves_no_name_behind(tmp_path: Any) -> None:
    """The file is unlinked once open: no other process opens it, a crash leaves nothing."""
    client = make_client(seed=2, history_on_disk=True, history_dir=tmp_path)
    try:
        assert list(tmp_path.iterdir()) == []
        client.advance(1)
        assert client.op("GET", "/sim/v1/log?kind=world.created").json()["data"][0]["seq"] == 0
    finally:
        client.close()


def test_records_read_back_equal_the_records_appended(tmp_path: Any) -> None:
    history = History(tmp_path)
    try:
        records = [Record(5, 0, "a.b", {"z": 1, "a": [1, {"y": None, "b": "é"}]}),
                   Record(6, 1, "a.c", {"transactionId": "t", "n": 2**40}),
                   Record(7, 2, "ab", {})]
        history.log.add(records)
        assert list(history.log.records()) == records
        assert [list(r.fields) for r in history.log.records()] == [["z", "a"],
                                                                   ["transactionId", "n"], []]
        assert history.log.page("a.", 0, 10) == records[:2]  # a family, not "ab"
        assert history.log.page(None, 1, 1) == records[1:2]
        assert history.log.select("a.c", {"transactionId": "t"}) == records[1:2]
        assert history.log.select(None, {"n": 2**40}) == records[1:2]
        assert msgspec.json.decode(msgspec.json.encode(records[0].fields)) == records[0].fields
    finally:
        history.close()


def test_a_batch_is_written_as_one_sqlite_transaction(tmp_path: Any) -> None:
    """Issue 30: the store is written a batch at a time, each batch one SQLite transaction.
    Its connection is in autocommit, where ``with db:`` begins nothing: each row of an
    ``executemany`` was then its own transaction (a write of its pages per row, ~100 µs a
    row, which held the soak to ~60 redeems a second and stalled reads behind a flush)."""
    history = History(tmp_path)
    outside: list[str] = []
    db = history._db
    db.set_trace_callback(lambda sql: None if db.in_transaction or not sql.startswith(
        "INSERT") else outside.append(sql))
    try:
        history.log.add([Record(i, i, "a.b", {"transactionId": "t"}) for i in range(3)])
        assert outside == []
    finally:
        history.close()
