"""The scenario runner's index of its world's log: ``select`` without a scan of the log.

Public names: ``LogIndex``.

A scenario's waits ask the log for a fact at every poll (``wait_until``: tens of times per
wait), and ``EventLog.select`` reads every record each time: about a fifth of a scenario run
went to those scans (issue 30, section 3). ``LogIndex`` keeps the records by kind, and by
kind and ``transactionId``, as a log listener adds them, and answers ``select`` from the
smaller list: the same records in the same (log) order as ``EventLog.select``. A family
(``"ledger."``) or every kind (``None``) is not indexed: those go to the log itself.
``counter`` tells a wait when a select's answer may have changed: the length of the list it
reads (a wait judges a fact again only then).

The index is built on first use (from the records so far, then from a listener), so a world
whose selects never come through it (a served world that keeps its history on disk) holds
no second copy of its log.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable
from operator import attrgetter

from clearing_sim.sim.eventlog import EventLog, JsonValue, Record

__all__ = ["LogIndex"]

_SEQ = attrgetter("seq")


def _put(found: list[Record], record: Record) -> None:
    """Append ``record``, or insert it in seq order when it was appended from inside another
    listener (which the index heard of first)."""
    if found[-1].seq > record.seq:
        insort(found, record, key=_SEQ)
    else:
        found.append(record)


class LogIndex:
    """``select`` over one log, from lists kept by kind (and by kind and transaction)."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._by_kind: dict[str, list[Record]] | None = None
        self._by_transaction: dict[tuple[str, JsonValue], list[Record]] = {}

    def _add(self, record: Record) -> None:
        """File ``record`` by kind, and by kind and transaction (a listener: one call per
        record of the log, so no list or call more than it needs)."""
        assert self._by_kind is not None
        kind = record.kind
        found = self._by_kind.get(kind)
        if found is None:
            self._by_kind[kind] = [record]
        else:
            _put(found, record)
        tx_id = record.fields.get("transactionId")
        if isinstance(tx_id, str):
            found = self._by_transaction.get((kind, tx_id))
            if found is None:
                self._by_transaction[kind, tx_id] = [record]
            else:
                _put(found, record)

    def _built(self) -> dict[str, list[Record]]:
        if self._by_kind is None:
            self._by_kind = {}
            for record in self._log:
                self._add(record)
            self._log.listen(self._add)
        return self._by_kind

    def counter(self, kind: str | None,
                transaction_id: JsonValue = None) -> Callable[[], int]:
        """A count that grows with each record ``select(kind, transactionId=transaction_id,
        ...)`` may pick (so its answer is the same while the count is): the records held of
        ``kind``, and of the transaction when ``transaction_id`` is a string; the log's
        length for a family or every kind, which the index does not hold."""
        if kind is None or kind.endswith("."):
            log = self._log
            return lambda: len(log)
        by_kind = self._built()
        if isinstance(transaction_id, str):
            by_transaction, key = self._by_transaction, (kind, transaction_id)
            return lambda: len(by_transaction.get(key, ()))
        return lambda: len(by_kind.get(kind, ()))

    def select(self, kind: str | None, /, **match: JsonValue) -> list[Record]:
        """What ``EventLog.select(kind, **match)`` answers, in the same order."""
        if kind is None or kind.endswith("."):
            return self._log.select(kind, **match)
        by_kind = self._built()
        tx_id = match.get("transactionId")
        wanted = list(match.items())
        if isinstance(tx_id, str):
            candidates = self._by_transaction.get((kind, tx_id), [])
            wanted.remove(("transactionId", tx_id))  # every candidate's, by construction
        else:
            candidates = by_kind.get(kind, [])
        if len(wanted) == 1:  # most selects (a fact's event, a count's one field)
            ((name, value),) = wanted
            return [r for r in candidates if r.fields.get(name) == value]
        return [r for r in candidates if all(r.fields.get(k) == v for k, v in wanted)]
