"""The event log: every observable fact of a run, as typed records, and the run's digest.

Public names: ``Record``, ``EventLog``, ``JsonValue``.

A record is (virtual ms, sequence number, kind, fields). Fields hold JSON values only
(str, int, bool, None, lists and dicts of them): amounts are decimal strings already. The
canonical form is one JSON object per line with sorted keys and no spaces; the digest is the
sha256 of those lines joined by ``\\n``. It is computed on demand, so logging stays cheap: a
record is a small slotted object holding the keyword arguments it was appended with, and its
canonical line is built only when the digest, a sink or a reader asks for it.
Listeners (the webhook channel, timelines, tests) see each record as it is appended; a
listener for one kind (``listen(f, kind)``) is called for records of that kind only, and one
for a family (``listen(f, "ledger.")``, a prefix ending in ``.`` as ``select`` takes) for
records of the family's kinds.

A log made with a ``sink`` writes each record's canonical line to it as it is appended and
keeps the digest incrementally (the same digest). The sink is a text stream, or a binary one
(a file opened ``"wb"``: the UTF-8 line as hashed goes to it unchanged, not decoded for a
text layer to encode again: the cheaper choice for a long run). With ``retain=False`` the
log keeps no record in memory, so a run of any length logs in constant memory. Such a log
cannot be read back (``__iter__``, ``select``, ``lines`` raise ``LogNotRetained``): read
the sink instead.

A log made with a ``store`` (a ``LogStore``: the served world's SQLite history,
``clearing_sim.http.history``) keeps only the records not yet handed to it: it hands them
over in batches (``flush``: one call per ``FLUSH_RECORDS`` records, and before every read),
keeps the digest incrementally, and answers ``__iter__``, ``select`` and ``page`` from the
store, in ``seq`` order, with records equal to the ones appended (same kind, fields and
field order). ``page`` is the seam the log route reads (``GET /sim/v1/log``): a kind or
family from a ``seq`` on, at most ``limit`` records, from memory or from the store; ``at``
the records of given ``seq``s (the deliveries route's index reads them).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import islice
from typing import IO, Any, Protocol, TextIO, cast

from clearing_sim.domain.jsontext import canonical_encoder

__all__ = ["FLUSH_RECORDS", "EventLog", "JsonValue", "LogNotRetained", "LogStore", "Record",
           "kind_matches"]

JsonValue = str | int | bool | None | list[Any] | dict[str, Any]


#: The canonical form's encoder, made once: UTF-8 bytes, as hashed and written.
_encode = canonical_encoder()


class Record:
    """One fact of the run. Immutable by convention: nothing changes a record once appended
    (a plain slotted class: an attrs frozen value costs a checked ``setattr`` per field, and
    the log makes ~31 records per transaction). The log fills a record's slots itself,
    without the ``__init__`` frame; slots are read in a few instructions where a tuple's
    named fields (``NamedTuple``) cost a descriptor call per read on Python 3.11."""

    __slots__ = ("at_ms", "fields", "kind", "seq")

    def __init__(self, at_ms: int, seq: int, kind: str,
                 fields: Mapping[str, JsonValue]) -> None:
        self.at_ms = at_ms
        self.seq = seq
        self.kind = kind
        self.fields = fields

    def __repr__(self) -> str:
        return (f"Record(at_ms={self.at_ms!r}, seq={self.seq!r}, kind={self.kind!r}, "
                f"fields={self.fields!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (self.at_ms, self.seq, self.kind, self.fields) == \
            (other.at_ms, other.seq, other.kind, other.fields)

    __hash__ = None  # type: ignore[assignment]  # fields are a dict: not hashable

    def __getitem__(self, name: str) -> JsonValue:
        return self.fields[name]

    def get(self, name: str, default: JsonValue = None) -> JsonValue:
        return self.fields.get(name, default)

    def canonical(self) -> str:
        return self.canonical_bytes().decode()

    def canonical_bytes(self) -> bytes:
        """The canonical line, UTF-8 encoded (what the digest hashes)."""
        return _encode({"at": self.at_ms, "seq": self.seq, "kind": self.kind, **self.fields})


#: makes a record with its slots empty, for the log to fill
_new_record = object.__new__


Listener = Callable[[Record], None]


class _Calls(dict[str, tuple[Listener, ...]]):
    """kind → the listeners a record of that kind calls, in the order they were added: made
    at the first record of the kind after the listeners last changed (``clear`` then)."""

    def __init__(self, listeners: list[tuple[str | None, Listener]]) -> None:
        super().__init__()
        self._listeners = listeners

    def __missing__(self, kind: str) -> tuple[Listener, ...]:
        calls = self[kind] = tuple(listener for wanted, listener in self._listeners
                                   if wanted is None or wanted == kind
                                   or (wanted.endswith(".") and kind.startswith(wanted)))
        return calls


def kind_matches(kind: str | None, record_kind: str) -> bool:
    """Whether a record of ``record_kind`` is of ``kind`` (``None``: every kind; a prefix
    ending in ``.`` names a family)."""
    return kind is None or record_kind == kind or (kind.endswith(".")
                                                   and record_kind.startswith(kind))


#: how many records a log with a store keeps before it hands them over in one batch: a
#: batch is written inside the advance's slice that appends its last record, so it is kept
#: small (4,096 made one write of ~40-70 ms, the tail of reads during an advance, issue 31 §3)
FLUSH_RECORDS = 512


class LogStore(Protocol):
    """Where a log's history lives when not in memory: records in, the same records out."""

    def add(self, records: Sequence[Record]) -> None:
        """Keep ``records`` (consecutive ``seq``, after every record kept so far)."""

    def records(self, start: int = 0) -> Iterator[Record]:
        """Every kept record from ``seq`` ``start`` on, in order."""

    def select(self, kind: str | None, match: Mapping[str, JsonValue]) -> list[Record]:
        """``EventLog.select`` over the kept records."""

    def page(self, kind: str | None, start: int, limit: int) -> list[Record]:
        """``EventLog.page`` over the kept records."""

    def last(self, kind: str | None, limit: int) -> list[Record]:
        """``EventLog.last`` over the kept records."""

    def at(self, seqs: Sequence[int]) -> list[Record]:
        """``EventLog.at`` over the kept records."""


class LogNotRetained(RuntimeError):
    """The log streams its records to a sink and keeps none in memory."""


class EventLog:
    """Append-only; owned by one world."""

    def __init__(self, clock: Callable[[], int], sink: IO[str] | IO[bytes] | None = None,
                 retain: bool = True, store: LogStore | None = None) -> None:
        assert retain or sink is not None, "a log that keeps no record needs a sink"
        assert store is None or (retain and sink is None), "a store is the log's one keeper"
        self._clock = clock
        self._records: list[Record] = []
        #: (kind or None for every kind, listener), in the order they were added
        self._listeners: list[tuple[str | None, Callable[[Record], None]]] = []
        #: kind → the listeners a record of that kind calls, in order (made on first use)
        self._calls = _Calls(self._listeners)
        self._count = 0
        self._sink = sink
        binary = isinstance(sink, io.RawIOBase | io.BufferedIOBase)  # a file opened "wb"
        self._bytes = cast("IO[bytes]", sink) if binary else None
        self._text = cast("IO[str]", sink) if sink is not None and not binary else None
        self._retain = retain
        self._store = store
        self._hash = hashlib.sha256() if sink is not None or store is not None else None

    def append(self, kind: str, /, **fields: JsonValue) -> Record:
        """Append a record of ``kind`` now. No field may be named ``at``, ``seq`` or
        ``kind`` (the canonical line's own members): the kinds are the engine's own, and
        the tests of every saga path check each record they write (``tests/sim/simkit``)."""
        record = _new_record(Record)  # what Record(...) does, without its frame
        record.at_ms = self._clock()
        record.seq = self._count
        record.kind = kind
        record.fields = fields
        self._count += 1
        if self._retain:
            self._records.append(record)
            if self._store is not None:
                assert self._hash is not None
                if record.seq:
                    self._hash.update(b"\n")
                self._hash.update(record.canonical_bytes())
                if len(self._records) >= FLUSH_RECORDS:
                    self.flush()
        if self._sink is not None:
            assert self._hash is not None
            line = record.canonical_bytes()
            if record.seq:
                self._hash.update(b"\n")
            self._hash.update(line)
            if self._bytes is not None:
                self._bytes.write(line + b"\n")
            elif self._text is not None:
                self._text.write(line.decode() + "\n")
        for listener in self._calls[kind]:
            listener(record)
        return record

    def listen(self, listener: Callable[[Record], None], kind: str | None = None, *,
               first: bool = False) -> None:
        """Call ``listener`` with each record appended from now on (of ``kind`` only, if
        given; of its family if ``kind`` ends in ``.``), in the order the listeners were
        added; ``first``: before every listener added so far, so it sees each record before
        any record another listener appends in answer to it (records in log order)."""
        if first:
            self._listeners.insert(0, (kind, listener))
        else:
            self._listeners.append((kind, listener))
        self._calls.clear()

    def unlisten(self, listener: Callable[[Record], None]) -> None:
        """Stop telling ``listener`` (a kit that watched one run of a long-lived world); its
        first registration goes, whatever kind it listened to (ValueError if none)."""
        for i, (_, known) in enumerate(self._listeners):
            if known == listener:
                del self._listeners[i]
                self._calls.clear()
                return
        raise ValueError(f"{listener!r} does not listen to this log")

    def __len__(self) -> int:
        return self._count

    @property
    def retained(self) -> bool:
        """Whether the log's records can be read back (``retain``: in memory, or in its
        store)."""
        return self._retain

    def flush(self) -> None:
        """Hand the records appended since the last flush to the store (nothing without one)."""
        if self._store is not None and self._records:
            self._store.add(self._records)
            self._records = []

    def _stored(self) -> LogStore | None:
        """The store, every record handed to it (``None``: the records are in memory)."""
        if not self._retain:
            raise LogNotRetained("this log keeps no records; they are in its sink")
        self.flush()
        return self._store

    def __iter__(self) -> Iterator[Record]:
        store = self._stored()
        return iter(self._records) if store is None else store.records()

    def select(self, kind: str | None = None, /, **match: JsonValue) -> list[Record]:
        """Records of ``kind`` (a prefix ending in ``.`` selects a family) whose fields match."""
        store = self._stored()
        if store is not None:
            return store.select(kind, match)
        return [r for r in self._records if kind_matches(kind, r.kind)
                and all(r.fields.get(k) == v for k, v in match.items())]

    def page(self, kind: str | None, start: int, limit: int) -> list[Record]:
        """At most ``limit`` records of ``kind`` (``select``'s kinds), from ``seq`` ``start``
        on, in order: what ``GET /sim/v1/log`` reads."""
        store = self._stored()
        if store is not None:
            return store.page(kind, start, limit)
        found = (r for r in islice(self._records, start, None) if kind_matches(kind, r.kind))
        return list(islice(found, limit))

    def last(self, kind: str | None, limit: int) -> list[Record]:
        """The last ``limit`` records of ``kind`` (``select``'s kinds), in order: what the
        console's tail reads, at the cost of its answer."""
        store = self._stored()
        if store is not None:
            return store.last(kind, limit)
        found: list[Record] = []
        for record in reversed(self._records):
            if kind_matches(kind, record.kind):
                found.append(record)
                if len(found) == limit:
                    break
        return found[::-1]

    def at(self, seqs: Sequence[int]) -> list[Record]:
        """The records numbered ``seqs`` (each one appended), in the order given: what an
        index of the log (``GET /sim/v1/deliveries``'s) reads, at the cost of its page."""
        store = self._stored()
        if store is not None:
            return store.at(seqs)
        records = self._records
        return [records[seq] for seq in seqs]

    def lines(self) -> Iterator[str]:
        return (r.canonical() for r in self)

    def digest(self) -> str:
        if self._hash is not None:
            return self._hash.copy().hexdigest()
        h = hashlib.sha256()
        for i, record in enumerate(self):
            if i:
                h.update(b"\n")
            h.update(record.canonical_bytes())
        return h.hexdigest()

    def write_jsonl(self, out: TextIO) -> None:
        """Write the canonical lines to an open text stream, one record per line."""
        for line in self.lines():
            out.write(line + "\n")
