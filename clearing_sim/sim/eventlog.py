"""The event log: every observable fact of a run, as typed records, and the run's digest.

Public names: ``Record``, ``EventLog``, ``JsonValue``.

A record is (virtual ms, sequence number, kind, fields). Fields hold JSON values only
(str, int, bool, None, lists and dicts of them): amounts are decimal strings already. The
canonical form is one JSON object per line with sorted keys and no spaces; the digest is the
sha256 of those lines joined by ``\\n``. It is computed on demand, so logging stays cheap.
Listeners (the webhook channel, timelines, tests) see each record as it is appended.

A log made with a ``sink`` writes each record's canonical line to it as it is appended and
keeps the digest incrementally (the same digest); with ``retain=False`` it keeps no record in
memory, so a run of any length logs in constant memory. Such a log cannot be read back
(``__iter__``, ``select``, ``lines`` raise ``LogNotRetained``): read the sink instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TextIO

from attrs import frozen

__all__ = ["EventLog", "JsonValue", "LogNotRetained", "Record"]

JsonValue = str | int | bool | None | list[Any] | dict[str, Any]


@frozen
class Record:
    at_ms: int
    seq: int
    kind: str
    fields: Mapping[str, JsonValue]

    def __getitem__(self, name: str) -> JsonValue:
        return self.fields[name]

    def get(self, name: str, default: JsonValue = None) -> JsonValue:
        return self.fields.get(name, default)

    def canonical(self) -> str:
        body = {"at": self.at_ms, "seq": self.seq, "kind": self.kind, **self.fields}
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class LogNotRetained(RuntimeError):
    """The log streams its records to a sink and keeps none in memory."""


class EventLog:
    """Append-only; owned by one world."""

    def __init__(self, clock: Callable[[], int], sink: TextIO | None = None,
                 retain: bool = True) -> None:
        assert retain or sink is not None, "a log that keeps no record needs a sink"
        self._clock = clock
        self._records: list[Record] = []
        self._listeners: list[Callable[[Record], None]] = []
        self._count = 0
        self._sink = sink
        self._retain = retain
        self._hash = hashlib.sha256() if sink is not None else None

    def append(self, kind: str, /, **fields: JsonValue) -> Record:
        assert "kind" not in fields and "at" not in fields and "seq" not in fields, fields
        record = Record(self._clock(), self._count, kind, fields)
        self._count += 1
        if self._retain:
            self._records.append(record)
        if self._sink is not None:
            assert self._hash is not None
            line = record.canonical()
            if record.seq:
                self._hash.update(b"\n")
            self._hash.update(line.encode())
            self._sink.write(line + "\n")
        if self._listeners:
            for listener in self._listeners:
                listener(record)
        return record

    def listen(self, listener: Callable[[Record], None]) -> None:
        self._listeners.append(listener)

    def unlisten(self, listener: Callable[[Record], None]) -> None:
        """Stop telling ``listener`` (a kit that watched one run of a long-lived world)."""
        self._listeners.remove(listener)

    def __len__(self) -> int:
        return self._count

    def _kept(self) -> list[Record]:
        if not self._retain:
            raise LogNotRetained("this log keeps no records; they are in its sink")
        return self._records

    def __iter__(self) -> Iterator[Record]:
        return iter(self._kept())

    def select(self, kind: str | None = None, /, **match: JsonValue) -> list[Record]:
        """Records of ``kind`` (a prefix ending in ``.`` selects a family) whose fields match."""
        def wanted(r: Record) -> bool:
            if kind is not None and not (r.kind == kind
                                         or (kind.endswith(".") and r.kind.startswith(kind))):
                return False
            return all(r.fields.get(k) == v for k, v in match.items())
        return [r for r in self._kept() if wanted(r)]

    def lines(self) -> Iterator[str]:
        return (r.canonical() for r in self._kept())

    def digest(self) -> str:
        if self._hash is not None:
            return self._hash.copy().hexdigest()
        h = hashlib.sha256()
        for i, line in enumerate(self.lines()):
            if i:
                h.update(b"\n")
            h.update(line.encode())
        return h.hexdigest()

    def write_jsonl(self, out: TextIO) -> None:
        """Write the canonical lines to an open text stream, one record per line."""
        for line in self.lines():
            out.write(line + "\n")
