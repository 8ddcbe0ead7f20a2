"""A run's event log → tidy pandas frames, one row per observed thing, documented dtypes.

Public names: ``FRAME_NAMES``, ``Frames``, ``frames_from_jsonl``, ``frames_from_log``,
``frames_from_records``, ``read_jsonl``.

Frames (columns and dtypes in ``docs/analysis.md``; ``SCHEMAS`` below is the single truth):

- ``transactions``: one row per transaction — ids, use case, mode, issuers, amounts,
  initiated / in-flight / terminal times, settlement latency in seconds, lifecycle status,
  parked (now and ever, with its cause, leg and issuer), cancelled.
- ``saga_steps``: one row per saga step change (``saga.step``).
- ``instructions``: one row per issuer instruction, with the time of each status it reached.
- ``deliveries``: one row per (event, subscription): attempts, outcome, arrivals.
- ``attempts``: one row per webhook delivery attempt.
- ``subscriptions``: one row per subscription, with its disable time.

The builder reads the log once, in order, and keeps only what the requested frames need, as
columns, so a long log streamed from a JSON-lines file (``frames_from_jsonl``) never sits in
memory whole. It reads only records: what the workload driver knew (use case, assets,
issuers, subscription names) comes from its ``workload.*`` records; for runs without them
(a scenario, the demo) those columns are missing values. Times are virtual: ``*_ms`` columns
are milliseconds since the run started, ``*_at`` columns UTC timestamps from its epoch.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pandas as pd  # type: ignore[import-untyped]
from msgspec.structs import asdict

from clearing_sim.analysis.columns import Table, strings, timestamps
from clearing_sim.domain.timefmt import parse_iso

if TYPE_CHECKING:  # (not imported: reading a file needs none of the engine)
    from clearing_sim.sim.eventlog import EventLog, Record

__all__ = ["FRAME_NAMES", "SCHEMAS", "Frames", "frames_from_jsonl", "frames_from_log",
           "frames_from_records", "read_jsonl"]

#: frame → (column, dtype) in order. ``str`` columns hold NaN where a value is missing.
SCHEMAS: dict[str, tuple[tuple[str, str], ...]] = {
    "transactions": (
        ("transaction_id", "str"), ("payment_reference", "str"), ("member", "category"),
        ("use_case", "category"), ("mode", "Int8"), ("mint_mode", "Int8"),
        ("source_issuer", "category"), ("target_issuer", "category"),
        ("source_asset", "category"), ("target_asset", "category"), ("amount", "str"),
        ("amount_gbp", "float64"), ("fee_gbp", "float64"), ("initiated_ms", "int64"),
        ("initiated_at", "datetime64[ms, UTC]"), ("in_flight_ms", "Int64"),
        ("terminal_ms", "Int64"), ("terminal_at", "datetime64[ms, UTC]"),
        ("settlement_latency_s", "float64"), ("lifecycle_status", "category"),
        ("terminal", "bool"), ("parked", "bool"), ("cancelled", "bool"),
        ("reason", "category"), ("ever_parked", "bool"), ("parked_ms", "Int64"),
        ("park_cause", "category"), ("park_leg", "category"),
        ("park_issuer", "category"), ("park_mode", "Int8")),
    "saga_steps": (
        ("transaction_id", "str"), ("index", "int8"), ("name", "str"), ("status", "str"),
        ("at_ms", "int64")),
    "instructions": (
        ("instruction_id", "str"), ("transaction_id", "str"), ("issuer", "str"),
        ("leg", "str"), ("received_ms", "int64"), ("pending_approval_ms", "Int64"),
        ("approved_ms", "Int64"), ("executing_ms", "Int64"), ("final_status", "str"),
        ("final_ms", "Int64"), ("silent", "bool"), ("expired", "bool")),
    "deliveries": (
        ("event_id", "str"), ("subscription_id", "str"), ("subscription", "str"),
        ("transaction_id", "str"), ("event_type", "str"), ("created_ms", "int64"),
        ("attempts", "int8"), ("outcome", "str"), ("finished_ms", "Int64"),
        ("delivered_ms", "Int64"), ("arrivals", "int16"), ("duplicates", "int16")),
    "attempts": (
        ("event_id", "str"), ("subscription_id", "str"), ("subscription", "str"),
        ("attempt", "int8"), ("sent_ms", "int64"), ("learned_ms", "int64"),
        ("status", "Int16"), ("fault", "str"), ("latency_ms", "Int64"), ("jitter_ms", "int64"),
        ("duplicated", "bool"), ("outcome", "str")),
    "subscriptions": (
        ("subscription_id", "str"), ("subscription", "str"), ("participant", "str"),
        ("url", "str"), ("created_ms", "int64"), ("deleted_ms", "Int64"),
        ("failing_since_ms", "Int64"), ("disabled_ms", "Int64"),
        ("time_to_disable_h", "float64")),
}
FRAME_NAMES: tuple[str, ...] = tuple(SCHEMAS)
_MODE_NUMBER = {"MODE_1_DELEGATED_SIGNING": 1, "MODE_2_TWO_PHASE": 2,
                "MODE_3_PRE_BURN_TRANSFER": 3}
_FINAL_INSTRUCTION = ("COMPLETED", "REJECTED", "FAILED")
_STATUS_COLUMN = {"PENDING_APPROVAL": "pending_approval_ms", "APPROVED": "approved_ms",
                  "EXECUTING": "executing_ms"}
_PARK_NOTES = ("ParkedOnSilence", "InstructionFailed", "InstructionRejected")


#: Timestamp columns, computed from the ``*_ms`` column they render (epoch + ms).
_RENDERED = {"initiated_at": "initiated_ms", "terminal_at": "terminal_ms"}


def _table(name: str, defaults: dict[str, Any] | None = None) -> Table:
    return Table([(c, t) for c, t in SCHEMAS[name] if c not in _RENDERED], defaults)


def _frame(name: str, table: Table, epoch_ms: int) -> pd.DataFrame:
    """The frame of a table's rows, its columns in ``SCHEMAS`` order."""
    data = table.columns()
    for column, source in _RENDERED.items():
        if column in data or column not in dict(SCHEMAS[name]):
            continue
        data[column] = timestamps(data[source], epoch_ms)
    names = [column for column, _ in SCHEMAS[name]]
    frame = pd.DataFrame(dict(enumerate(data.pop(column) for column in names)), copy=False)
    frame.columns = pd.Index(strings(names))  # (labelled so: no Arrow default pool used)
    return frame


@dataclass(frozen=True, slots=True)
class Frames:
    """The tidy frames of one run (only those that were asked for are present). (A frozen
    dataclass, not attrs: reading a log needs nothing else of attrs, whose import is about
    1 MiB of the process.)"""

    tables: Mapping[str, pd.DataFrame]

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name in SCHEMAS:
            try:
                return self.tables[name]
            except KeyError:
                raise AttributeError(f"frame {name!r} was not built for this run") from None
        raise AttributeError(name)

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]

    def __contains__(self, name: object) -> bool:
        return name in self.tables

    def names(self) -> tuple[str, ...]:
        return tuple(self.tables)

    def to_parquet(self, folder: str | Path, manifest: dict[str, Any] | None = None) -> None:
        """One ``<frame>.parquet`` per frame in ``folder`` (created if needed), with
        ``manifest`` in each file's metadata when given (``manifest.write_parquet``)."""
        # here, not at the top: reading a log into frames imports no Parquet writer
        from clearing_sim.analysis.manifest import write_parquet

        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        for name, frame in self.tables.items():
            if manifest is None:
                frame.to_parquet(target / f"{name}.parquet", index=False)
            else:
                write_parquet(frame, target / f"{name}.parquet", manifest)

    @classmethod
    def read_parquet(cls, folder: str | Path) -> Frames:
        source = Path(folder)
        return cls({name: _str_categories(pd.read_parquet(source / f"{name}.parquet"), name)
                    for name in SCHEMAS if (source / f"{name}.parquet").exists()})


def _str_categories(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """``frame`` with its ``category`` columns' categories ``str`` (Parquet gives a column
    without a value ``object`` categories)."""
    for column in (c for c, dtype in SCHEMAS[name] if dtype == "category" and c in frame):
        categories = frame[column].cat.categories
        if categories.dtype != "str":
            frame[column] = frame[column].cat.set_categories(
                pd.Index(list(categories), dtype="str"))
    return frame


class _Builder:
    def __init__(self, wanted: Iterable[str]) -> None:
        self.wanted = tuple(wanted)
        unknown = [name for name in self.wanted if name not in SCHEMAS]
        assert not unknown, f"unknown frames {unknown}; expected some of {FRAME_NAMES}"
        defaults: dict[str, dict[str, Any]] = {
            "transactions": dict(terminal=False, parked=False, cancelled=False,
                                 ever_parked=False),
            "instructions": dict(silent=False, expired=False),
            "deliveries": dict(attempts=0, outcome="pending", arrivals=0, duplicates=0)}
        self.tables = {name: _table(name, defaults.get(name)) for name in SCHEMAS}
        tx = self.tables["transactions"]  # (setters of the commonest records' columns)
        self.set_initiated = tx.setter(
            "member", "use_case", "mode", "mint_mode", "source_issuer", "target_issuer",
            "source_asset", "target_asset", "amount", "amount_gbp", "fee_gbp")
        self.set_state = tx.setter("terminal_ms", "settlement_latency_s", "lifecycle_status",
                                   "terminal", "parked", "cancelled", "reason")
        self.epoch_ms = 0
        self.names: dict[str, str] = {}  # participant id → participantName
        self.modes: dict[str, int] = {}  # issuer id → mode of its latest profile
        self.subscription_names: dict[str, str] = {}
        self.member_names: dict[str, str] = {}  # workload key → participantName
        self.legs: dict[str, tuple[str, str | None]] = {}  # transaction → (burn, mint) issuer
        self.last_note: dict[str, str] = {}  # transaction → leg of its last stopping note
        needs = set(self.wanted)
        self.handlers = {
            "world.created": self._world, "participant.added": self._participant,
            "profile.saved": self._profile, "workload.started": self._workload,
            "workload.initiated": self._initiated, "transaction.state": self._state,
            "saga.event": self._note, "saga.step": self._step,
            "issuer.instruction": self._instruction, "issuer.silent": self._silent,
            "issuer.expired": self._expired, "webhook.subscribed": self._subscribed,
            "webhook.deleted": self._deleted, "webhook.disabled": self._disabled,
            "webhook.event": self._event, "webhook.attempt": self._attempt,
            "webhook.arrival": self._arrival, "webhook.delivery_failed": self._failed,
            "webhook.delivery_dropped": self._dropped,
        }
        #: the lines worth parsing of a kind whose handler uses only some of its records
        self.hints = {"saga.event": tuple(f'"event":"{note}"' for note in _PARK_NOTES)}
        #: the only fields read of the records of the commonest kinds (read from a file, the
        #: others are not even decoded)
        self.fields = {
            "transaction.state": ("transactionId", "lifecycleStatus", "trigger",
                                  "paymentReference", "parked", "terminal", "reason"),
            "workload.initiated": ("transactionId", "member", "useCase", "sourceIssuerId",
                                   "targetIssuerId", "sourceAsset", "targetAsset", "amount",
                                   "feeAmount"),
            "webhook.event": ("eventId", "subscriptionIds", "transactionId", "type"),
            "webhook.arrival": ("eventId", "subscriptionId", "copy")}
        if "attempts" not in needs:  # (the attempts frame reads most of an attempt's fields)
            self.fields["webhook.attempt"] = ("eventId", "subscriptionId", "attempt",
                                              "outcome")
        if "saga_steps" not in needs:
            del self.handlers["saga.step"]
        if "instructions" not in needs:
            for kind in ("issuer.instruction", "issuer.silent", "issuer.expired"):
                del self.handlers[kind]
        if not needs & {"deliveries", "attempts"}:
            for kind in ("webhook.event", "webhook.attempt", "webhook.arrival",
                         "webhook.delivery_failed", "webhook.delivery_dropped"):
                del self.handlers[kind]

    def feed(self, at_ms: int, kind: str, fields: Mapping[str, Any]) -> None:
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(at_ms, fields)

    def build(self) -> Frames:
        self.legs.clear()  # what only the reading needed, before the frames are made
        self.last_note.clear()
        frames = {name: _frame(name, self.tables[name], self.epoch_ms) for name in self.wanted}
        if "subscriptions" in frames:
            subs = frames["subscriptions"]
            subs["subscription"] = strings(
                [self.subscription_names.get(sid) for sid in subs["subscription_id"]])
            subs["time_to_disable_h"] = ((subs["disabled_ms"] - subs["failing_since_ms"])
                                         / 3_600_000).astype("float64")
        return Frames(frames)

    # who is who ---------------------------------------------------------------------------
    def _world(self, at_ms: int, f: Mapping[str, Any]) -> None:
        self.epoch_ms = parse_iso(str(f["epoch"]))

    def _participant(self, at_ms: int, f: Mapping[str, Any]) -> None:
        self.names[f["participantId"]] = f["name"]

    def _profile(self, at_ms: int, f: Mapping[str, Any]) -> None:
        self.modes[f["issuerId"]] = _MODE_NUMBER[f["mode"]]

    def _workload(self, at_ms: int, f: Mapping[str, Any]) -> None:
        self.subscription_names.update({sid: key for key, sid in f["subscriptions"].items()})
        self.member_names.update({key: self.names.get(pid, key)
                                  for key, pid in f["members"].items()})

    # transactions -------------------------------------------------------------------------
    def _initiated(self, at_ms: int, f: Mapping[str, Any]) -> None:
        tx = self.tables["transactions"]
        row = tx.index.get(f["transactionId"])
        if row is None:
            return
        source, target = sys.intern(f["sourceIssuerId"]), f.get("targetIssuerId")
        target = None if target is None else sys.intern(target)
        #: (kept while the transaction is open, parked ones to the end: keyed by the row's
        #: own id, the issuers' ids interned, not a fresh copy of each per transaction)
        self.legs[tx.get(row, "transaction_id")] = (source, target)
        amount = float(f["amount"])
        self.set_initiated(
            row, self.member_names.get(f["member"], f["member"]), f["useCase"],
            self.modes.get(source), None if target is None else self.modes.get(target),
            self.names.get(source), self.names.get(target) if target is not None else None,
            f["sourceAsset"], f["targetAsset"], f["amount"], amount, float(f["feeAmount"]))

    def _state(self, at_ms: int, f: Mapping[str, Any]) -> None:
        tx = self.tables["transactions"]
        tid = f["transactionId"]
        status = f["lifecycleStatus"]
        if f["trigger"] == "initiated":
            tx.add(tid, transaction_id=tid, payment_reference=f["paymentReference"],
                   initiated_ms=at_ms, lifecycle_status=status)
            return
        row = tx.index[tid]
        terminal, parked, reason = f["terminal"], f["parked"], f.get("reason")
        self.set_state(row, at_ms if terminal else None,
                       (at_ms - tx.get(row, "initiated_ms")) / 1000
                       if terminal and status == "settled" else None,
                       status, terminal, parked, status == "cancelled", reason)
        if status == "in-flight" and tx.get(row, "in_flight_ms") is None:
            tx.set(row, in_flight_ms=at_ms)
        if parked and not tx.get(row, "ever_parked"):
            leg = self.last_note.get(tid)
            legs = self.legs.get(tid, (None, None))
            issuer = None if leg is None else legs[0] if leg == "burn" else legs[1]
            tx.set(row, ever_parked=True, parked_ms=at_ms, park_cause=reason, park_leg=leg,
                   park_issuer=self.names.get(issuer) if issuer else None,
                   park_mode=self.modes.get(issuer) if issuer else None)
        if terminal and not parked:  # final: nothing can change it any more
            tx.close(tid)
            self.legs.pop(tid, None)
            self.last_note.pop(tid, None)

    def _note(self, at_ms: int, f: Mapping[str, Any]) -> None:
        if f["event"] in _PARK_NOTES and "leg" in f:
            self.last_note[f["transactionId"]] = sys.intern(f["leg"])

    def _step(self, at_ms: int, f: Mapping[str, Any]) -> None:
        self.tables["saga_steps"].add(transaction_id=f["transactionId"], index=f["index"],
                                      name=f["name"], status=f["status"],
                                      at_ms=at_ms)

    # instructions -------------------------------------------------------------------------
    def _instruction(self, at_ms: int, f: Mapping[str, Any]) -> None:
        table = self.tables["instructions"]
        status = f["status"]
        if status == "RECEIVED":
            table.add(f["instructionId"], instruction_id=f["instructionId"],
                      transaction_id=f["transactionId"],
                      issuer=self.names.get(f["issuerId"]), leg=f["leg"],
                      received_ms=at_ms)
            return
        row = table.index[f["instructionId"]]
        if status in _FINAL_INSTRUCTION:
            table.set(row, final_status=status, final_ms=at_ms)
        else:
            table.set(row, **{_STATUS_COLUMN[status]: at_ms})

    def _silent(self, at_ms: int, f: Mapping[str, Any]) -> None:
        table = self.tables["instructions"]
        table.set(table.index[f["instructionId"]], silent=True)

    def _expired(self, at_ms: int, f: Mapping[str, Any]) -> None:
        table = self.tables["instructions"]
        table.set(table.index[f["instructionId"]], expired=True)

    # webhooks -----------------------------------------------------------------------------
    def _subscribed(self, at_ms: int, f: Mapping[str, Any]) -> None:
        self.tables["subscriptions"].add(
            f["subscriptionId"], subscription_id=f["subscriptionId"],
            participant=self.names.get(f["participantId"]), url=f["url"], created_ms=at_ms)

    def _subscription_name(self, subscription_id: str) -> str | None:
        return self.subscription_names.get(subscription_id)

    def _deleted(self, at_ms: int, f: Mapping[str, Any]) -> None:
        subs = self.tables["subscriptions"]
        subs.set(subs.index[f["subscriptionId"]], deleted_ms=at_ms)

    def _disabled(self, at_ms: int, f: Mapping[str, Any]) -> None:
        subs = self.tables["subscriptions"]
        subs.set(subs.index[f["subscriptionId"]], disabled_ms=at_ms,
                 failing_since_ms=f.get("failingSinceMs"))

    def _event(self, at_ms: int, f: Mapping[str, Any]) -> None:
        table = self.tables["deliveries"]
        for sid in f["subscriptionIds"]:
            table.add((f["eventId"], sid), event_id=f["eventId"], subscription_id=sid,
                      subscription=self._subscription_name(sid),
                      transaction_id=f["transactionId"], event_type=f["type"],
                      created_ms=at_ms)

    def _attempt(self, at_ms: int, f: Mapping[str, Any]) -> None:
        sid, success = f["subscriptionId"], f["outcome"] == "success"
        if "attempts" in self.wanted:
            self.tables["attempts"].add(
                event_id=f["eventId"], subscription_id=sid,
                subscription=self._subscription_name(sid), attempt=f["attempt"],
                sent_ms=f["sentAtMs"], learned_ms=at_ms, status=f.get("status"),
                fault=f.get("fault"), latency_ms=f.get("latencyMs"),
                jitter_ms=f.get("jitterMs", 0), duplicated=bool(f.get("duplicated")),
                outcome=f["outcome"])
        table = self.tables["deliveries"]
        row = table.index[(f["eventId"], sid)]
        table.set(row, attempts=f["attempt"])
        if success:
            table.set(row, outcome="delivered", finished_ms=at_ms, delivered_ms=at_ms)

    def _arrival(self, at_ms: int, f: Mapping[str, Any]) -> None:
        table = self.tables["deliveries"]
        row = table.index.get((f["eventId"], f["subscriptionId"]))
        if row is None:
            return
        table.set(row, arrivals=table.get(row, "arrivals") + 1)
        if f["copy"]:
            table.set(row, duplicates=table.get(row, "duplicates") + 1)

    def _failed(self, at_ms: int, f: Mapping[str, Any]) -> None:
        table = self.tables["deliveries"]
        table.set(table.index[(f["eventId"], f["subscriptionId"])], outcome="failed",
                  finished_ms=at_ms)

    def _dropped(self, at_ms: int, f: Mapping[str, Any]) -> None:
        table = self.tables["deliveries"]
        table.set(table.index[(f["eventId"], f["subscriptionId"])], outcome="dropped",
                  finished_ms=at_ms)


def frames_from_records(records: Iterable[tuple[int, str, Mapping[str, Any]]],
                        frames: Iterable[str] = FRAME_NAMES) -> Frames:
    """The frames named in ``frames`` from (virtual ms, kind, fields) triples, in log order."""
    builder = _Builder(frames)
    for at_ms, kind, fields in records:
        builder.feed(at_ms, kind, fields)
    return builder.build()


def _triples(records: Iterable[Record]) -> Iterator[tuple[int, str, Mapping[str, Any]]]:
    for record in records:
        yield record.at_ms, record.kind, record.fields


def frames_from_log(log: EventLog | Iterable[Record],
                    frames: Iterable[str] = FRAME_NAMES) -> Frames:
    """The frames of a run's event log (a ``World.log``, or any records in order)."""
    return frames_from_records(_triples(log), frames)


#: Characters read from a log file at a time: lines of unwanted kinds are skipped by one
#: regular-expression scan of the chunk, never split, decoded one by one or parsed.
_CHUNK = 1 << 20


def _chunks(path: str | Path) -> Iterator[tuple[bytes | bytearray, int, int]]:
    """(text, start, cut) per block of the file: ``text[start:cut]`` are whole lines, in
    order, valid until the next block is asked for (the blocks are read into one buffer; a
    line across two blocks comes as a text of its own)."""
    buffer = bytearray(_CHUNK)
    with Path(path).open("rb") as source:
        rest = b""
        while size := source.readinto(buffer):
            first = buffer.find(b"\n", 0, size) + 1
            if not first:
                rest += buffer[:size]
                continue
            yield rest + buffer[:first], 0, len(rest) + first
            cut = buffer.rfind(b"\n", 0, size) + 1
            yield buffer, first, cut
            rest = bytes(buffer[cut:size])
        if rest:
            yield rest + b"\n", 0, len(rest) + 1


Triple = tuple[int, str, Mapping[str, Any]]


Handler = Callable[[int, Mapping[str, Any]], object]


def _scan(path: str | Path, handlers: Mapping[str, Handler],
          hints: Mapping[str, Iterable[str]] | None = None,
          fields: Mapping[str, Iterable[str]] | None = None) -> Iterator[None]:
    """``handlers[kind](at, fields)`` per record of a wanted kind (``read_jsonl``), in
    order; one step of the iteration per block of the file read."""
    hints, fields = hints or {}, fields or {}
    plan = {kind.encode(): (  # per kind: its lines' hint pattern, its decoder, its handler
        re.compile(b"|".join(re.escape(h.encode()) for h in hints[kind]))
        if kind in hints else None, _decoder(kind, fields[kind]) if kind in fields else None,
        handler, kind) for kind, handler in handlers.items()}
    #: (without the key's opening quote, rarer in JSON than a quote, the engine's search for
    #: the pattern's first byte skips more of each line; a longer key ending so, or a nested
    #: one, is parsed, then dropped by its kind)
    marker = re.compile(b'kind":"(' + b"|".join(re.escape(k) for k in sorted(plan)) + b')"')
    for text, first, cut in _chunks(path):
        end = -1
        for match in marker.finditer(text, first, cut):
            start = match.start()
            if start < end:  # a second match on the line just read
                continue
            end = text.find(b"\n", start)
            line = text[text.rfind(b"\n", 0, start) + 1:end]
            hint, decoder, handler, kind = plan[match.group(1)]
            if hint is not None and not hint.search(line):
                continue
            body = json.loads(line) if decoder is None else asdict(decoder.decode(line))
            if body["kind"] == kind:
                handler(body["at"], body)
        yield None


def read_jsonl(path: str | Path, kinds: Iterable[str] | None = None,
               hints: Mapping[str, Iterable[str]] | None = None,
               fields: Mapping[str, Iterable[str]] | None = None,
               ) -> Iterator[Triple]:
    """(virtual ms, kind, fields) per line of a canonical JSON-lines log, streamed; with
    ``kinds``, only the records of those kinds; with ``hints`` (kind → strings), a record of
    such a kind only if its line holds one of its strings (e.g. ``'"event":"Burned"'``); with
    ``fields`` (kind → names), only those fields of a record of such a kind (a missing one is
    None), the others skipped unread.

    A line is decoded and parsed only if it holds ``"kind":"<one of kinds>"``: the canonical
    form writes a record's own kind so, and a string value cannot hold it unescaped, so no
    wanted record is skipped (a nested key that happens to match is parsed, then dropped by
    its kind)."""
    if kinds is None:
        with Path(path).open(encoding="utf-8") as lines:
            for text in lines:
                if text.strip():
                    body = json.loads(text)
                    yield body["at"], body["kind"], body
        return
    records: list[Triple] = []
    handlers = {kind: _keeper(records, kind) for kind in kinds}
    for _ in _scan(path, handlers, hints, fields):
        yield from records
        records.clear()


def _keeper(records: list[Triple], kind: str) -> Handler:
    """A handler that appends its records of ``kind`` to ``records``."""
    def keep(at_ms: int, fields: Mapping[str, Any]) -> None:
        records.append((at_ms, kind, fields))
    return keep


def _decoder(kind: str, names: Iterable[str]) -> msgspec.json.Decoder[Any]:
    """A JSON decoder of a record's ``at``, ``kind`` and the fields ``names`` (each None when
    missing), which skips every other field without building it."""
    shape = msgspec.defstruct(f"Line_{kind.replace('.', '_')}",
                              [("at", int), ("kind", str), *((n, Any, None) for n in names)],
                              gc=False)
    return msgspec.json.Decoder(shape)


def frames_from_jsonl(path: str | Path, frames: Iterable[str] = FRAME_NAMES) -> Frames:
    """The frames of a log written with ``EventLog.write_jsonl``, read line by line (only
    the lines of the records those frames are built from are parsed)."""
    builder = _Builder(frames)
    for _ in _scan(path, builder.handlers, builder.hints, builder.fields):
        pass
    return builder.build()
