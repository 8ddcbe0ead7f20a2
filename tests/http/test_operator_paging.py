"""The operator's paged lists read only their page (issue 30, section 2) and answer as the
whole-history reading did: ``GET /sim/v1/deliveries`` from an index kept in send order,
``GET /sim/v1/transactions`` in initiation order, stopping at the page's end.

docs/semantics.md: "``GET /sim/v1/deliveries`` is paged like the log: ``limit`` 1–1000,
``cursor`` the position ``meta.nextCursor`` gave in the (filtered) list. Attempts are ordered
by send time, so one whose outcome becomes known later can sort before a cursor." Each test
compares the routes, page by page, with the old whole-history reading written out here (the
reference), on a world whose attempts are learned out of send order, and is shown failing
on an index that breaks that order or leaves out archived transactions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from clearing_sim.http import history as history_module
from clearing_sim.sim import eventlog
from clearing_sim.sim.book import TransactionBook
from clearing_sim.sim.world import World
from clearing_sim.stories import delivery_index as delivery_index_module
from clearing_sim.stories.delivery_log import _attempt_wire
from clearing_sim.stories.story import transaction_row
from tests.http.conftest import OP, Client, add, issuer_body, make_client, member_body, redeem_body

EVENTS = ["transaction.received", "transaction.in_flight", "transaction.settled",
          "transaction.cancelled", "transaction.parked", "transaction.failed"]
LOSSY, SLOW = "https://lossy.example.com/in", "https://slow.example.com/in"


def reference_deliveries(world: World, transaction_id: str | None,
                         subscription_id: str | None) -> list[dict[str, Any]]:
    """The old reading: every attempt, filtered, sorted by (send time, seq)."""
    events = {r["eventId"]: r for r in world.log.select("webhook.event")}
    found = [(r["sentAtMs"], r.seq, _attempt_wire(world, r, events[r["eventId"]]))
             for r in world.log.select("webhook.attempt")
             if (transaction_id is None or events[r["eventId"]]["transactionId"]
                 == transaction_id)
             and (subscription_id is None or r["subscriptionId"] == subscription_id)]
    return [item for _, _, item in sorted(found, key=lambda a: (a[0], a[1]))]


def reference_transactions(world: World, query: dict[str, str]) -> list[dict[str, Any]]:
    """The old reading: every transaction, filtered, in initiation order."""
    return [transaction_row(world, tx) for tx in world.transactions
            if ("lifecycleStatus" not in query
                or tx.lifecycle_status.value == query["lifecycleStatus"])
            and ("useCase" not in query or tx.use_case.value == query["useCase"])
            and ("parked" not in query or str(tx.parked).lower() == query["parked"])
            and ("terminal" not in query or str(tx.terminal).lower() == query["terminal"])
            and ("participantId" not in query or query["participantId"] in tx.audience)]


def pages(client: Client, path: str, query: dict[str, str], limit: int,
          start: int = 0) -> tuple[list[Any], list[str | None]]:
    """Every page from ``start`` on; the items and the cursors given."""
    items: list[Any] = []
    cursors: list[str | None] = []
    cursor: str | None = str(start)
    while cursor is not None:
        params = "&".join(f"{k}={v}" for k, v in {**query, "limit": str(limit),
                                                     "cursor": cursor}.items())
        answer = client.request("GET", f"{path}?{params}", headers=OP)
        assert answer.status_code == 200, answer.text
        items.extend(answer.json()["data"])
        cursor = answer.json()["meta"]["nextCursor"]
        cursors.append(cursor)
    return items, cursors


@pytest.fixture
def world_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    """A world on disk (small batches) with attempts learned out of send order: a lossy
    receiver's lost requests are learned 10 s after sending, a slow one's answers sooner;
    transactions settled and archived, failed and parked, and still open."""
    monkeypatch.setattr(eventlog, "FLUSH_RECORDS", 7)
    monkeypatch.setattr(history_module, "ARCHIVE_BATCH", 3)
    client = make_client(seed=5, history_on_disk=True)
    issuer = add(client, issuer_body())
    assert issuer.asset is not None
    member = add(client, member_body(GBPE="100000.00"))
    for url in (LOSSY, SLOW):
        assert client.post("/api/v1/webhooks", headers=member.auth,
                           json={"url": url, "events": EVENTS}).status_code == 201
    client.op("PUT", "/sim/v1/receivers", {"url": LOSSY, "status": 200, "lossRate": 0.5})
    client.op("PUT", "/sim/v1/receivers", {"url": SLOW, "status": 503, "latencyMs": 3000,
                                           "until": "2030-01-01T00:00:00Z"})
    ids = [client.post("/api/v1/transactions", headers=member.auth,
                       json=redeem_body(issuer.asset, f"{n + 1}.00", f"INV-{n}")
                       ).json()["data"]["id"] for n in range(6)]
    client.post("/api/v1/conformance/run", headers=issuer.admin_auth,
                json={"scenario": "failed", "transactionId": ids[5]})
    client.advance(3 * 3600)
    for n in range(2):
        client.post("/api/v1/transactions", headers=member.auth,
                    json=redeem_body(issuer.asset, "2.50", f"LATE-{n}"))
    client.advance(1)
    yield client
    client.close()


def _delivery_queries(world: World) -> list[dict[str, str]]:
    subscriptions = [s.id for s in world.subscriptions]
    transactions = [tx.id for tx in world.transactions]
    queries: list[dict[str, str]] = [{}, {"subscriptionId": "wh_none"},
                                     {"transactionId": "tx_none"}]
    queries += [{"subscriptionId": s} for s in subscriptions]
    queries += [{"transactionId": t} for t in transactions[:3]]
    queries += [{"transactionId": t, "subscriptionId": s}
                for t in transactions[:2] for s in subscriptions]
    return queries


def test_deliveries_pages_are_the_send_ordered_list_as_sorting_it_gave(
        world_client: Client) -> None:
    """docs/semantics.md: deliveries are paged by position in the filtered list, ordered by
    send time, an attempt learned later sorting before a cursor; the index's pages are the
    sorted whole list's, cursor for cursor."""
    world = world_client.sim.world
    attempts = world.log.select("webhook.attempt")
    sent = [r["sentAtMs"] for r in attempts]
    assert sent != sorted(sent)  # the subject: attempts learned out of send order
    for query in _delivery_queries(world):
        expected = reference_deliveries(world, query.get("transactionId"),
                                        query.get("subscriptionId"))
        for limit in (1, 3, 1000):
            items, cursors = pages(world_client, "/sim/v1/deliveries", query, limit)
            assert items == expected, (query, limit)
            assert cursors == [*(str(n) for n in range(limit, len(expected), limit)),
                               None] or (not expected and cursors == [None])
        for start in (len(expected) - 1, len(expected), len(expected) + 5):
            tail, _ = pages(world_client, "/sim/v1/deliveries", query, 2, max(start, 0))
            assert tail == expected[max(start, 0):]


def test_an_index_kept_in_log_order_is_caught(world_client: Client,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above fails on an index that keeps attempts in the order their
    outcomes were learned (appended, not inserted at their send time)."""
    def appended(self: Any, sent_ms: int, seq: int, event_seq: int) -> None:
        self.sent.append(sent_ms)
        self.seqs.append(seq)
        self.events.append(event_seq)

    monkeypatch.setattr(delivery_index_module._Sorted, "add", appended)
    world = world_client.sim.world
    delivery_index_module._INDEXES.pop(world, None)
    items, _ = pages(world_client, "/sim/v1/deliveries", {}, 1000)
    assert items != reference_deliveries(world, None, None)


def _transaction_queries(world: World) -> list[dict[str, str]]:
    member = next(iter(world.transactions)).initiator_id
    return [{}, {"terminal": "true"}, {"terminal": "false"}, {"parked": "true"},
            {"parked": "false"}, {"lifecycleStatus": "settled"},
            {"lifecycleStatus": "failed"}, {"lifecycleStatus": "received"},
            {"lifecycleStatus": "in-flight"}, {"useCase": "redeem"}, {"useCase": "swap"},
            {"participantId": member}, {"participantId": member, "terminal": "false"},
            {"participantId": member, "lifecycleStatus": "settled", "parked": "false"}]


def test_the_console_list_pages_are_the_filtered_list_in_initiation_order(
        world_client: Client) -> None:
    """``GET /sim/v1/transactions``: every transaction in initiation order, filtered, a page
    at a time; read up to the page's end, archived transactions (on disk) included."""
    world = world_client.sim.world
    assert 0 < len(world.transactions.by_id) < len(world.transactions)  # archived and live
    for query in _transaction_queries(world):
        expected = reference_transactions(world, query)
        for limit in (2, 1000):
            items, cursors = pages(world_client, "/sim/v1/transactions", query, limit)
            assert items == expected, (query, limit)
            assert len(cursors) == max(1, -(-len(expected) // limit)), (query, limit)
    assert reference_transactions(world, {"terminal": "false"})  # live ones listed
    assert reference_transactions(world, {"terminal": "true"})  # and archived ones


def test_a_list_that_leaves_out_the_archive_is_caught(world_client: Client,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above fails on a book whose in-order reading forgets the archived."""
    monkeypatch.setattr(TransactionBook, "in_order",
                        lambda self, participant_id=None, live_only=False:
                        iter(self._by_id.values()))
    world = world_client.sim.world
    items, _ = pages(world_client, "/sim/v1/transactions", {}, 1000)
    assert items != reference_transactions(world, {})


def test_the_index_forgets_finished_events_and_still_finds_one_it_lacks(
        world_client: Client) -> None:
    """The index keeps an event by id only while its deliveries can make attempts; an
    attempt whose event it no longer holds (it never should) finds the event in the log, so
    the pages stay the sorted list's."""
    world = world_client.sim.world
    index = delivery_index_module.delivery_index(world)
    assert index._open  # deliveries still retrying
    index._open.clear()
    world_client.op("PUT", "/sim/v1/receivers", {"url": SLOW, "status": 200})
    world_client.advance(40 * 3600)  # every delivery ends within 38.6 h
    items, _ = pages(world_client, "/sim/v1/deliveries", {}, 1000)
    assert items == reference_deliveries(world, None, None)
    assert len(items) == len(index._all.seqs) > 30
    assert index._open == {}  # every delivery ended: no event kept
