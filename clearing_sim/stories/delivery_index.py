"""The index ``GET /sim/v1/deliveries`` pages from, so a page costs what it holds.

Public names: ``DeliveryIndex``, ``delivery_index``.

The route lists ``webhook.attempt`` records oldest send first (``sentAtMs``, then ``seq``),
filtered by subscription or transaction, and pages by position in that list (docs/semantics.md:
an attempt whose outcome becomes known later may sort before a cursor). Reading every attempt
to sort them cost the world's whole history per request (issue 30, section 2: with the
history in SQLite, every attempt ever made decoded). The index keeps, as the log appends
them, each attempt's send time, ``seq`` and its event's ``seq`` side by side in that order
(``array``: 24 bytes an attempt), once for the whole list and once per subscription; a page
is a slice of positions, and only its records and their events are read, by ``seq``
(``EventLog.at``). An attempt learned late is inserted at its send time (``bisect``), so the
positions are the list's positions exactly as sorting gave them: a new record's ``seq`` is
the largest, so it goes after every attempt sent at the same instant. A transaction's
attempts (a handful) are kept as ``seq`` pairs and sorted the same way when asked.

To know an attempt's event, the index keeps each ``webhook.event`` by id only while its
deliveries can still make attempts. It is made for a world when the route is first asked
(from the log, once) and kept by listening to the log from then on (``delivery_index``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Any
from weakref import WeakKeyDictionary

from clearing_sim.sim.eventlog import EventLog, Record
from clearing_sim.sim.world import World

__all__ = ["DeliveryIndex", "delivery_index"]


class _Sorted:
    """Attempts in send order: send times, ``seq``s and their events' ``seq``s, side by
    side (8 bytes each)."""

    __slots__ = ("events", "sent", "seqs")

    def __init__(self) -> None:
        self.sent = array("q")
        self.seqs = array("q")
        self.events = array("q")

    def add(self, sent_ms: int, seq: int, event_seq: int) -> None:
        at = bisect_right(self.sent, sent_ms)  # after every attempt sent at the same instant
        self.sent.insert(at, sent_ms)
        self.seqs.insert(at, seq)
        self.events.insert(at, event_seq)


_NONE = _Sorted()  # the empty list: a filter nothing matches
_ENDINGS = ("webhook.delivery_failed", "webhook.delivery_dropped")


class DeliveryIndex:
    """One log's ``webhook.attempt`` records in send order: all and by subscription; by
    transaction, each attempt's and its event's ``seq`` (a transaction's few attempts are
    sorted when asked). Events whose deliveries may still make attempts are kept by id
    (their ``seq``, transaction and deliveries not yet ended: an attempt that succeeds, a
    ``webhook.delivery_failed`` or ``webhook.delivery_dropped`` ends one), so the index
    holds per attempt a few machine words, per transaction one entry, and nothing per
    finished event."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._open: dict[str, list[Any]] = {}  # event id → [seq, transaction id, open]
        self._all = _Sorted()
        self._by_subscription: dict[str, _Sorted] = {}
        self._by_transaction: dict[str, array[int]] = {}  # attempt, event, attempt, ...
        for record in log.select("webhook."):
            self._add(record)
        log.listen(self._add, "webhook.")

    def _add(self, record: Record) -> None:
        kind, fields = record.kind, record.fields
        if kind == "webhook.event":
            wanted = fields["subscriptionIds"]
            assert isinstance(wanted, list)
            self._open[str(fields["eventId"])] = [record.seq, fields["transactionId"],
                                                  len(wanted)]
        elif kind == "webhook.attempt":
            sent_ms, event_id, subscription_id = (fields["sentAtMs"], str(fields["eventId"]),
                                                  str(fields["subscriptionId"]))
            assert isinstance(sent_ms, int)
            event_seq, transaction_id, _ = self._event(event_id)
            self._all.add(sent_ms, record.seq, event_seq)
            found = self._by_subscription.get(subscription_id)
            if found is None:
                found = self._by_subscription[subscription_id] = _Sorted()
            found.add(sent_ms, record.seq, event_seq)
            pairs = self._by_transaction.get(transaction_id)
            if pairs is None:
                pairs = self._by_transaction[transaction_id] = array("q")
            pairs.extend((record.seq, event_seq))
            if fields["outcome"] == "success":
                self._ended(event_id)
        elif kind in _ENDINGS:
            self._ended(str(fields["eventId"]))

    def _event(self, event_id: str) -> list[Any]:
        event = self._open.get(event_id)
        if event is None:  # not expected: every delivery's attempts come before its end
            found = self._log.select("webhook.event", eventId=event_id)[0]
            event = self._open[event_id] = [found.seq, found["transactionId"], 1]
        return event

    def _ended(self, event_id: str) -> None:
        event = self._open.get(event_id)
        if event is not None:
            event[2] -= 1
            if event[2] <= 0:
                del self._open[event_id]

    def page(self, transaction_id: str | None, subscription_id: str | None, start: int,
             limit: int) -> tuple[list[tuple[Record, Record]], bool]:
        """The (attempt, event) pairs at positions ``start`` to ``start + limit`` of the
        filtered list, and whether more follow."""
        if transaction_id is not None:
            return self._of_transaction(transaction_id, subscription_id, start, limit)
        found = self._all if subscription_id is None else \
            self._by_subscription.get(subscription_id, _NONE)
        end = start + limit
        pairs = zip(self._log.at(found.seqs[start:end]), self._log.at(found.events[start:end]),
                    strict=True)
        return list(pairs), len(found.seqs) > end

    def _of_transaction(self, transaction_id: str, subscription_id: str | None, start: int,
                        limit: int) -> tuple[list[tuple[Record, Record]], bool]:
        """A transaction's attempts (few), sorted by send time as the whole list is."""
        flat = self._by_transaction.get(transaction_id, _NONE.seqs)
        pairs = [pair for pair in zip(self._log.at(flat[0::2]), self._log.at(flat[1::2]),
                                      strict=True)
                 if subscription_id is None or pair[0]["subscriptionId"] == subscription_id]
        pairs.sort(key=lambda pair: (pair[0]["sentAtMs"], pair[0].seq))
        return pairs[start:start + limit], len(pairs) > start + limit


_INDEXES: WeakKeyDictionary[World, DeliveryIndex] = WeakKeyDictionary()


def delivery_index(world: World) -> DeliveryIndex:
    """``world``'s index, made at the first call (one read of the log) and kept since."""
    index = _INDEXES.get(world)
    if index is None:
        index = _INDEXES[world] = DeliveryIndex(world.log)
    return index
