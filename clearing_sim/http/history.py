"""The served world's history on disk: an embedded SQLite database the log and book keep.

Public names: ``History``, ``SqliteLog``, ``SqliteArchive``.

A served world (``clearing-sim serve``) keeps in memory what its running sagas and current
state need; its history lives here (issue 30): every log record past the last batch
(``SqliteLog``, the log's ``LogStore``) and every finished transaction (``SqliteArchive``,
the book's ``TransactionArchive``). Routes read through the log and the book as before
(``select``, ``page``, ``get``, iteration), so they answer the same bytes and pages.

A record is kept as its kind, time, ``transactionId`` (indexed, for the filters the routes
use) and its fields as ordered JSON (the members in the order they were appended: the log
route shows them so); ``seq`` is the row id, and every read is ``ORDER BY seq``. A finished
transaction is kept as its value in MessagePack (msgspec, typed: it decodes to a
``Transaction`` equal to the one kept, enums, decimals and all, so every route that reads
it, from the full form to recovery status, gives the same answer), with its place in
initiation order. The file is made afresh for each world (docs/semantics.md: the history is
derived from the journal, rebuilt by replay, never reused) and unlinked as soon as it is
open: no other process can open it, and nothing is left behind, even by a SIGKILL.

The database is derived, so it is written without a rollback journal or syncs: a crash loses
it, and the journal (``--journal``) rebuilds it. Writes are batched: the log hands over
``FLUSH_RECORDS`` records at a time, the archive ``ARCHIVE_BATCH`` transactions, each batch
one SQLite transaction.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import msgspec

from clearing_sim.domain.jsontext import ordered_encoder
from clearing_sim.domain.transaction import Transaction
from clearing_sim.sim.eventlog import JsonValue, Record

__all__ = ["ARCHIVE_BATCH", "History", "SqliteArchive", "SqliteLog"]

ARCHIVE_BATCH = 128  # small for the same reason as FLUSH_RECORDS: written inside a slice
_READ_BATCH = 1000  # rows fetched at a time by an iteration (no cursor held across writes)
_encode = ordered_encoder()
_decode = msgspec.json.Decoder()
_encode_tx = msgspec.msgpack.Encoder(decimal_format="string")
_decode_tx = msgspec.msgpack.Decoder(Transaction)

_SCHEMA = """
CREATE TABLE log (seq INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, kind TEXT NOT NULL,
                  tx TEXT, fields BLOB NOT NULL);
CREATE INDEX log_kind ON log (kind, seq);
CREATE INDEX log_tx ON log (tx, seq);
CREATE TABLE tx (ordinal INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, form BLOB NOT NULL);
"""


def _kind_sql(kind: str | None) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause for ``kind`` (a family ``x.``: every kind from ``x.`` to ``x/``,
    the character after ``.``), and its parameters."""
    if kind is None:
        return "1", ()
    if kind.endswith("."):
        return "kind >= ? AND kind < ?", (kind, kind[:-1] + "/")
    return "kind = ?", (kind,)


@contextmanager
def _written(db: sqlite3.Connection) -> Iterator[None]:
    """One SQLite transaction around a batch's writes. The connection is in autocommit
    (``isolation_level=None``), where ``with db:`` begins nothing: without the ``BEGIN``,
    ``executemany`` made each row its own transaction, a write of its pages to the file
    per row (about 100 µs a row: it held ``POST /transactions`` to ~60 a second)."""
    db.execute("BEGIN")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _record(row: tuple[int, int, str, bytes]) -> Record:
    return Record(row[1], row[0], row[2], _decode.decode(row[3]))


class SqliteLog:
    """The log's ``LogStore`` in the history database."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, records: Sequence[Record]) -> None:
        rows = []
        for r in records:
            tx = r.fields.get("transactionId")
            rows.append((r.seq, r.at_ms, r.kind, tx if isinstance(tx, str) else None,
                         _encode(r.fields)))
        with _written(self._db):
            self._db.executemany("INSERT INTO log VALUES (?, ?, ?, ?, ?)", rows)
        self._count += len(rows)

    def records(self, start: int = 0) -> Iterator[Record]:
        while True:
            rows = self._db.execute("SELECT seq, at_ms, kind, fields FROM log WHERE seq >= ? "
                                    "ORDER BY seq LIMIT ?", (start, _READ_BATCH)).fetchall()
            yield from map(_record, rows)
            if len(rows) < _READ_BATCH:
                return
            start = rows[-1][0] + 1

    def select(self, kind: str | None, match: Mapping[str, JsonValue]) -> list[Record]:
        where, params = _kind_sql(kind)
        tx = match.get("transactionId")
        if isinstance(tx, str):
            where, params = f"tx = ? AND {where}", (tx, *params)
        rows = self._db.execute(f"SELECT seq, at_ms, kind, fields FROM log WHERE {where} "
                                "ORDER BY seq", params).fetchall()
        found = map(_record, rows)
        return [r for r in found if all(r.fields.get(k) == v for k, v in match.items())]

    def page(self, kind: str | None, start: int, limit: int) -> list[Record]:
        where, params = _kind_sql(kind)
        rows = self._db.execute(f"SELECT seq, at_ms, kind, fields FROM log WHERE seq >= ? AND "
                                f"{where} ORDER BY seq LIMIT ?",
                                (start, *params, limit)).fetchall()
        return [_record(row) for row in rows]

    def last(self, kind: str | None, limit: int) -> list[Record]:
        where, params = _kind_sql(kind)
        rows = self._db.execute(f"SELECT seq, at_ms, kind, fields FROM log WHERE {where} "
                                "ORDER BY seq DESC LIMIT ?", (*params, limit)).fetchall()
        return [_record(row) for row in reversed(rows)]

    def at(self, seqs: Sequence[int]) -> list[Record]:
        rows: dict[int, tuple[int, int, str, bytes]] = {}
        for i in range(0, len(seqs), _READ_BATCH):
            chunk = list(seqs[i:i + _READ_BATCH])
            marks = ",".join("?" * len(chunk))
            rows.update((row[0], row) for row in self._db.execute(
                f"SELECT seq, at_ms, kind, fields FROM log WHERE seq IN ({marks})", chunk))
        return [_record(rows[seq]) for seq in seqs]


class SqliteArchive:
    """The book's ``TransactionArchive``: finished transactions, found by id and listed in
    initiation order; the latest ``ARCHIVE_BATCH`` wait in memory for their batch."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._pending: dict[str, tuple[int, Transaction]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def put(self, ordinal: int, tx: Transaction) -> None:
        self._pending[tx.id] = (ordinal, tx)
        self._count += 1
        if len(self._pending) >= ARCHIVE_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        rows = [(ordinal, tx_id, _encode_tx.encode(tx))
                for tx_id, (ordinal, tx) in self._pending.items()]
        with _written(self._db):
            self._db.executemany("INSERT INTO tx VALUES (?, ?, ?)", rows)
        self._pending.clear()

    def get(self, transaction_id: str) -> Transaction | None:
        waiting = self._pending.get(transaction_id)
        if waiting is not None:
            return waiting[1]
        row = self._db.execute("SELECT form FROM tx WHERE id = ?", (transaction_id,)).fetchone()
        return None if row is None else _decode_tx.decode(row[0])

    def items(self) -> Iterator[tuple[int, Transaction]]:
        """(ordinal, transaction) for every finished transaction, in initiation order."""
        self.flush()
        start = -1
        while True:
            rows = self._db.execute("SELECT ordinal, form FROM tx WHERE ordinal > ? "
                                    "ORDER BY ordinal LIMIT ?", (start, _READ_BATCH)).fetchall()
            for ordinal, form in rows:
                yield ordinal, _decode_tx.decode(form)
            if len(rows) < _READ_BATCH:
                return
            start = rows[-1][0]


class History:
    """One world's history database: a new file in ``directory`` (the system's temporary
    directory when ``None``; mind that it may be memory, tmpfs), unlinked once open. Every
    world gets its own (a journal's replay or a rewind builds a second world beside the
    first); ``close`` (or the world's end: ``Simulation.build``) frees it."""

    def __init__(self, directory: Path | None = None) -> None:
        handle, name = tempfile.mkstemp(prefix="clearing-sim-history-", suffix=".sqlite",
                                        dir=directory)  # mode 0600
        os.close(handle)
        self.path = Path(name)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = OFF")  # no side file: the database is one inode
        self._db.executescript(_SCHEMA)  # the file is open now: its name can go
        self.path.unlink()
        # one connection to an unlinked file: no one else can take a lock, so the file lock
        # is taken once and kept (not taken and dropped around every read's statement)
        for pragma in ("synchronous = OFF", "cache_size = -4096", "temp_store = MEMORY",
                       "locking_mode = EXCLUSIVE"):
            self._db.execute(f"PRAGMA {pragma}")
        self.log = SqliteLog(self._db)
        self.archive = SqliteArchive(self._db)

    def close(self) -> None:
        self._db.close()

