"""The index ``GET /sim/v1/deliveries`` pages from, so a page costs what it holds.

Public names: ``DeliveryIndex``, ``delivery_index``.

The route lists ``webhook.attempt`` records oldest send first (``sentAtMs``, then ``seq``),
filtered by subscription or transaction, and pages by position in that list (docs/semantics.md:
an attempt whose outcome becomes known later may sort before a cursor). Reading every attempt
to sort them cost the world's whole history per request (issue 30, section 2: with the
history in SQLite, every attempt ever made decoded). The index keeps, as the log appends
them, each attempt's send time and ``seq`` side by side in that order (``array``: 16 bytes an
attempt), once for the whole list and once per subscription and per transaction; a page is
a slice of positions, and only its records (and their events) are read, by ``seq``
(``EventLog.at``). An attempt learned late is inserted at its send time (``bisect``), so the
positions are the list's positions exactly as sorting gave them: a new record's ``seq`` is
the largest, so it goes after every attempt sent at the same instant.

The index also keeps each ``webhook.event``'s ``seq`` and transaction by event id, to find
the event an attempt carried. It is made for a world when the route is first asked (from the
log, once) and kept by listening to the log from then on (``delivery_index``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from weakref import WeakKeyDictionary

from clearing_sim.sim.eventlog import EventLog, Record
from clearing_sim.sim.world import World

__all__ = ["DeliveryIndex", "delivery_index"]


class _Sorted:
    """Attempts in send order: send times and ``seq``s, side by side."""

    __slots__ = ("sent", "seqs")

    def __init__(self) -> None:
        self.sent = array("q")
        self.seqs = array("q")

    def add(self, sent_ms: int, seq: int) -> None:
        at = bisect_right(self.sent, sent_ms)  # after every attempt sent at the same instant
        self.sent.insert(at, sent_ms)
        self.seqs.insert(at, seq)


_NONE = _Sorted()  # the empty list: a filter nothing matches


class DeliveryIndex:
    """One log's ``webhook.attempt`` records in send order: all, by subscription and by
    transaction; and each ``webhook.event``'s ``seq`` and transaction by event id."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._events: dict[str, tuple[int, str]] = {}
        self._all = _Sorted()
        self._by_subscription: dict[str, _Sorted] = {}
        self._by_transaction: dict[str, _Sorted] = {}
        for record in log.select("webhook."):
            self._add(record)
        log.listen(self._add, "webhook.")

    def _add(self, record: Record) -> None:
        fields = record.fields
        if record.kind == "webhook.event":
            event_id, transaction_id = fields["eventId"], fields["transactionId"]
            assert isinstance(event_id, str) and isinstance(transaction_id, str)
            self._events[event_id] = (record.seq, transaction_id)
        elif record.kind == "webhook.attempt":
            sent_ms, event_id, subscription_id = (fields["sentAtMs"], fields["eventId"],
                                                  fields["subscriptionId"])
            assert isinstance(sent_ms, int) and isinstance(event_id, str)
            assert isinstance(subscription_id, str)
            self._all.add(sent_ms, record.seq)
            for key, lists in ((subscription_id, self._by_subscription),
                               (self._events[event_id][1], self._by_transaction)):
                found = lists.get(key)
                if found is None:
                    found = lists[key] = _Sorted()
                found.add(sent_ms, record.seq)

    def page(self, transaction_id: str | None, subscription_id: str | None, start: int,
             limit: int) -> tuple[list[tuple[Record, Record]], bool]:
        """The (attempt, event) pairs at positions ``start`` to ``start + limit`` of the
        filtered list, and whether more follow."""
        found = self._all
        if transaction_id is not None:
            found = self._by_transaction.get(transaction_id, _NONE)
        if subscription_id is not None:
            by_subscription = self._by_subscription.get(subscription_id, _NONE)
            if transaction_id is None:
                found = by_subscription
            else:  # both: the transaction's attempts (few) of that subscription
                found = self._both(found, subscription_id)
        seqs = found.seqs[start:start + limit]
        attempts = self._log.at(seqs)
        events = self._log.at([self._events[str(a.fields["eventId"])][0] for a in attempts])
        return list(zip(attempts, events, strict=True)), len(found.seqs) > start + limit

    def _both(self, found: _Sorted, subscription_id: str) -> _Sorted:
        kept = _Sorted()
        for attempt in self._log.at(found.seqs):
            if attempt.fields["subscriptionId"] == subscription_id:
                kept.sent.append(attempt.fields["sentAtMs"])  # type: ignore[arg-type]
                kept.seqs.append(attempt.seq)
        return kept


_INDEXES: WeakKeyDictionary[World, DeliveryIndex] = WeakKeyDictionary()


def delivery_index(world: World) -> DeliveryIndex:
    """``world``'s index, made at the first call (one read of the log) and kept since."""
    index = _INDEXES.get(world)
    if index is None:
        index = _INDEXES[world] = DeliveryIndex(world.log)
    return index
