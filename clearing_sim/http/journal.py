"""The request journal's file: a header, then one checked JSON line per entry, made durable.

Public names: ``CHECKPOINT_NAME``, ``FORMAT``, ``Header``, ``JournalError``, ``JournalFile``,
``JournalWriter``, ``decode_line``, ``encode_line``, ``read_journal``.

A journal is JSON lines, like a database's write-ahead log. Line 1 is the ``Header`` (what
world the entries apply to: the format, the package version, the seed, the environment, the
world file's sha256, the clock and delivery settings, and what its key material needs: the
operator token, held only as a salted check value). Every further line is one entry (see
``clearing_sim.http.recorder`` for the kinds). Each line ends with ``"crc"``, the CRC-32 of
the line's JSON before it, so a line cut short by a crash, or one that was damaged, is told
from a good one.

A CRC is no seal: anyone can write a line whose check holds. So the header's fields and each
entry's shape are checked as they are read, the entry against ``_KINDS``, the table of the
fields each kind has: a field missing, of another type or out of its range, or one no entry
of its kind has, refuses the journal (``JournalError`` naming the line and the field), as do
sequence numbers that do not increase. Replay, ``journal show``, ``verify`` and ``export``
only ever see entries of the shapes the shim writes. A journal is a regular file: a FIFO, a
device or a directory is refused before it is read (reading ``/dev/zero`` never ends, and a
FIFO without a writer never answers).

Reading (``read_journal``): a last line cut short (no newline after it) is *torn* (a crash
mid-write: its answer waited for the fsync, so its request was never answered) and is
reported and dropped; any line that has its newline but fails its check, the last one
included, is damage (the line was written whole, and may have been answered) and the journal
is refused (``JournalError``). Writing
(``JournalWriter``): appends go to the file in order, on the event loop; ``durable()``
returns once everything appended so far is flushed and fsynced. Concurrent waiters share one
fsync (group commit): the fsync runs in a thread while more entries are appended, and the
next one covers them all.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import math
import os
import re
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attrs import field, frozen

from clearing_sim.http.options import ClockMode
from clearing_sim.sim.world import Environment

__all__ = ["CHECKPOINT_NAME", "FORMAT", "Header", "JournalError", "JournalFile",
           "JournalWriter", "decode_line", "encode_line", "read_journal"]

FORMAT = 2  # 2: the token check and sealing key derived from scrypt (sealing.token_key)
MAGIC = "clearing-sim journal"
_CRC_TAIL = len(',"crc":"00000000"}')
#: what ``POST /sim/v1/checkpoints`` takes as a name (and so what a journal holds)
CHECKPOINT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: a virtual instant (ms) or a sequence number: int64, which no run reaches (292 million
#: years of virtual time; advances are at most 366 days each)
_WHOLE_MAX = (1 << 63) - 1
#: the engine events one ``clock`` entry may count. A slice runs at most 2,000 events
#: (``clock._STEPS_PER_SLICE``) and then the rest of the instant it reached (or 256 of its
#: events when it is long: ``clock._INSTANT_STEPS``); no served world
#: has a hundred million events at one instant. Replay also stops, refusing the journal,
#: when the engine runs out of events or the next one is past the entry's instant.
STEPS_MAX = 100_000_000
SPEED_MAX = 1_000_000  # what ``serve --speed`` takes at most


class JournalError(Exception):
    """A journal that cannot be used: damaged, or written for another world (exit 2)."""


def encode_line(entry: dict[str, Any]) -> bytes:
    """One entry (not empty, no ``crc`` key) as a checked line: its compact JSON with
    ``crc`` added last, and a newline."""
    assert entry and "crc" not in entry, "a journal entry is a non-empty object without crc"
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode()
    crc = zlib.crc32(text)
    return text[:-1] + b',"crc":"%08x"}\n' % crc


def decode_line(line: bytes) -> dict[str, Any] | None:
    """The entry of a checked line (with or without its newline); ``None`` when torn."""
    line = line.rstrip(b"\n")
    if len(line) < _CRC_TAIL + 2 or not line.endswith(b'"}'):
        return None
    body, tail = line[:-_CRC_TAIL] + b"}", line[-_CRC_TAIL:]
    if not tail.startswith(b',"crc":"'):
        return None
    try:
        crc = int(tail[8:16], 16)
    except ValueError:
        return None
    if zlib.crc32(body) != crc:
        return None
    try:  # a CRC is no seal: a hand-made line may nest past the interpreter's limit
        entry = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None


@frozen
class Header:
    """What world a journal's entries apply to, and what its key material needs."""

    version: str
    seed: int
    environment: str
    world_sha256: str | None  # the world file's bytes; None without --world
    world_name: str | None
    clock: str
    speed: float
    deliver_webhooks: bool
    allow_private_webhook_urls: bool
    salt: str  # hex; the sealing key and the token check are derived from token + salt
    token_check: str  # hex: HKDF(token, salt, "check"), never the token itself

    def wire(self) -> dict[str, Any]:
        return {"journal": MAGIC, "format": FORMAT, "version": self.version, "seed": self.seed,
                "environment": self.environment,
                "world": None if self.world_sha256 is None else {
                    "file": self.world_name, "sha256": self.world_sha256},
                "clock": self.clock, "speed": self.speed,
                "deliverWebhooks": self.deliver_webhooks,
                "allowPrivateWebhookUrls": self.allow_private_webhook_urls,
                "keyMaterial": {
                    "needs": "the operator token the journal was started with "
                             "(clearing-sim serve --operator-token); only a salted check "
                             "value of it is held here, and request credentials are sealed "
                             "with a key derived from it",
                    "kdf": "HKDF-SHA256", "salt": self.salt, "tokenCheck": self.token_check}}

    @classmethod
    def from_wire(cls, obj: dict[str, Any]) -> Header:
        """The header of a journal's first line; ``JournalError`` naming a bad field."""
        if obj.get("journal") != MAGIC:
            raise JournalError("this is not a clearing-sim journal (its first line is not a "
                               "journal header)")
        if obj.get("format") != FORMAT:
            raise JournalError(f"journal format {_shown(obj.get('format'))}; this version "
                               f"reads format {FORMAT}")
        world, keys = obj.get("world"), obj.get("keyMaterial")
        fields: list[tuple[str, Any, Check, str]] = [
            ("version", obj.get("version"), _text, "text"),
            ("seed", obj.get("seed"), _integer, "a whole number"),
            ("environment", obj.get("environment"), _one_of(Environment), _choices(Environment)),
            ("clock", obj.get("clock"), _one_of(ClockMode), _choices(ClockMode)),
            ("speed", obj.get("speed"), _speed, f"a number above 0, at most {SPEED_MAX:,}"),
            ("deliverWebhooks", obj.get("deliverWebhooks"), _boolean, "true or false"),
            ("allowPrivateWebhookUrls", obj.get("allowPrivateWebhookUrls"), _boolean,
             "true or false"),
            ("world", world, lambda v: v is None or isinstance(v, dict),
             "null or an object"),
            ("keyMaterial", keys, lambda v: isinstance(v, dict), "an object")]
        if isinstance(world, dict):
            fields += [("world.file", world.get("file"), _text, "text"),
                       ("world.sha256", world.get("sha256"), _hex(64), "64 hex digits")]
        if isinstance(keys, dict):
            fields += [("keyMaterial.salt", keys.get("salt"), _hex(32), "32 hex digits"),
                       ("keyMaterial.tokenCheck", keys.get("tokenCheck"), _hex(64),
                        "64 hex digits")]
        for name, value, check, what in fields:
            if not check(value):
                raise JournalError(f"the journal header's {name} is {_shown(value)}, not "
                                   f"{what}")
        assert isinstance(keys, dict)  # checked above
        return cls(obj["version"], obj["seed"], obj["environment"],
                   None if world is None else world["sha256"],
                   None if world is None else world["file"], obj["clock"],
                   float(obj["speed"]), obj["deliverWebhooks"], obj["allowPrivateWebhookUrls"],
                   keys["salt"], keys["tokenCheck"])


# The shape of an entry -------------------------------------------------------------------
#: a check of one field's value: whether it has the shape the shim writes
Check = Callable[[Any], bool]


def _text(value: Any) -> bool:
    """A string the shim could have written: no lone surrogate (it came from UTF-8)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _integer(value: Any) -> bool:
    return type(value) is int  # not a bool, not a float that happens to be whole


def _boolean(value: Any) -> bool:
    return type(value) is bool


def _speed(value: Any) -> bool:
    """What ``serve --speed`` takes: above 0, at most a million."""
    return type(value) in (int, float) and math.isfinite(value) and 0 < value <= SPEED_MAX


def _whole(low: int, high: int = _WHOLE_MAX) -> Check:
    return lambda value: type(value) is int and low <= value <= high


def _hex(digits: int) -> Check:
    pattern = re.compile(f"[0-9a-f]{{{digits}}}")
    return lambda value: isinstance(value, str) and pattern.fullmatch(value) is not None


def _one_of(choices: Any) -> Check:
    allowed = frozenset(choice.value for choice in choices)
    return lambda value: isinstance(value, str) and value in allowed


def _choices(choices: Any) -> str:
    return "one of " + ", ".join(choice.value for choice in choices)


def _matching(pattern: re.Pattern[str]) -> Check:
    return lambda value: isinstance(value, str) and pattern.fullmatch(value) is not None


def _under(prefix: str) -> Check:
    """A path at ``prefix`` or below it (the door that journals it routed it so)."""
    return lambda value: _text(value) and (value == prefix or value.startswith(prefix + "/"))


def _pairs(second: Check) -> Check:
    """A list of ``[name, value]`` pairs, each name text, each value passing ``second``."""
    return lambda value: isinstance(value, list) and all(
        isinstance(pair, list) and len(pair) == 2 and _text(pair[0]) and second(pair[1])
        for pair in value)


def _sealed(value: Any) -> bool:
    """``{"sealed": base64}``: a nonce, a ciphertext and its tag (``sealing.Sealer``)."""
    if not (isinstance(value, dict) and list(value) == ["sealed"]):
        return False
    raw = _base64(value["sealed"])
    return raw is not None and len(raw) >= 12 + 16


def _base64(value: Any) -> bytes | None:
    if not isinstance(value, str) or not value.isascii():
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _outcome(value: Any) -> bool:
    """``[status, error]`` of one real webhook POST (``delivery.RealOutcome``)."""
    return (isinstance(value, list) and len(value) == 2 and _REPLY_STATUS(value[0])
            and (value[1] is None or _text(value[1])))


def _learned(value: Any) -> bool:
    """``[seq, status, error]``: a real webhook POST's outcome, the POST named by its order
    of sending (``inflight.Outgoing.seq``)."""
    return isinstance(value, list) and len(value) == 3 and _MS(value[0]) \
        and _outcome(value[1:])


_MS = _whole(0)
_STATUS = _whole(100, 599)  # the shim's own answers
#: what a real receiver may answer: any three digits from 100 (h11 takes up to 999)
_REPLY_STATUS = _whole(100, 999)


def _method(value: Any) -> bool:
    """A method as the door received it: any text (a server passes on any token, of any
    length, and the shim journals a 405 too)."""
    return _text(value) and bool(value)


@frozen
class _Field:
    check: Check
    what: str  # what the value must be, for the refusal


def _request(prefix: str, credentials: Check, **more: _Field) -> dict[str, _Field]:
    """The fields of an entry that holds a request (``recorder.request_of`` reads them);
    ``body`` or ``body64``, exactly one, is checked apart."""
    return {"at": _Field(_MS, "an instant in ms"),
            "method": _Field(_method, "an HTTP method"),
            "path": _Field(_under(prefix), f"a path under {prefix}"),
            "query": _Field(_pairs(_text), "a list of [name, value] text pairs"),
            "headers": _Field(_pairs(credentials), "a list of [name, value] pairs"),
            "body": _Field(_text, "text"),
            "body64": _Field(lambda v: _base64(v) is not None, "base64"),
            "status": _Field(_STATUS, "an HTTP status"), **more}


_CHECKPOINT = _Field(_matching(CHECKPOINT_NAME), "a checkpoint name")
#: every kind's fields besides ``n`` and ``k`` (``clearing_sim.http.recorder`` writes them)
_KINDS: dict[str, dict[str, _Field]] = {
    "api": _request("/api/v1", lambda v: _text(v) or _sealed(v),
                    sha=_Field(_hex(16), "16 hex digits")),
    "refused": {"at": _Field(_MS, "an instant in ms"),
                "method": _Field(_method, "an HTTP method"),
                "path": _Field(_text, "text"),
                "status": _Field(_whole(400, 499), "a 4xx status"),
                "participantId": _Field(lambda v: v is None or _text(v), "text or null"),
                "codes": _Field(lambda v: v is None or (isinstance(v, list) and all(
                    _text(c) for c in v)), "a list of codes or null")},
    "dropped": {"at": _Field(_MS, "an instant in ms"),
                "issuerId": _Field(_text, "text"),
                "instructionId": _Field(lambda v: v is None or _text(v), "text or null")},
    "op": _request("/sim/v1", _text),
    "issuer": _request("/issuer-webhooks", _text),
    "clock": {"at": _Field(_MS, "an instant in ms"),
              "steps": _Field(_whole(0, STEPS_MAX),
                              f"a count of engine events from 0 to {STEPS_MAX:,}"),
              "to": _Field(lambda v: v is None or _MS(v), "an instant in ms or null")},
    "deliveries": {"at": _Field(_MS, "an instant in ms"),
                   "outcomes": _Field(lambda v: isinstance(v, list) and bool(v)
                                      and all(_outcome(o) for o in v),
                                      "a list of [status, error or null]")},
    "learned": {"at": _Field(_MS, "an instant in ms"),
                "outcomes": _Field(lambda v: isinstance(v, list) and bool(v)
                                   and all(_learned(o) for o in v),
                                   "a list of [seq, status, error or null]")},
    "checkpoint": {"name": _CHECKPOINT, "at": _Field(_MS, "an instant in ms"),
                   "digest": _Field(_hex(64), "64 hex digits")},
    "rewind": {"to": _CHECKPOINT, "at": _Field(_MS, "an instant in ms")},
}
_BODIES = frozenset({"body", "body64"})


def _entry_problem(entry: dict[str, Any], previous_n: int) -> str | None:
    """What is wrong with an entry's shape, naming the field (``None``: nothing);
    ``previous_n``: the sequence number of the entry before it (0 for the first)."""
    n, kind = entry.get("n"), entry.get("k")
    if not _whole(previous_n + 1)(n):
        return (f"the entry's n is {_shown(n)}, not a whole number above {previous_n} "
                "(sequence numbers increase)")
    fields = _KINDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        return f"the entry's kind k is {_shown(kind)}, not one of {', '.join(_KINDS)}"
    for name, spec in fields.items():
        if name in entry:
            if not spec.check(entry[name]):
                return f"the {kind} entry's {name} is {_shown(entry[name])}, not {spec.what}"
        elif name not in _BODIES:
            return f"the {kind} entry has no {name}"
    extra = sorted(set(entry) - set(fields) - {"n", "k"})
    if extra:
        return f"the {kind} entry has a field {_shown(extra[0])}, which the shim never writes"
    if "body" in fields and len(_BODIES & set(entry)) != 1:
        return f"the {kind} entry has {'both' if set(entry) >= _BODIES else 'neither'} " \
               "body and body64"
    if kind == "clock" and entry["to"] is not None and entry["to"] < entry["at"]:
        return f"the clock entry's to ({entry['to']}) is before its at ({entry['at']})"
    return None


def _shown(value: Any) -> str:
    """A value in a message: its JSON, at most 60 characters of it."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (ValueError, RecursionError):  # nested as deep as a reader allows: say what it is
        return f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


@frozen
class JournalFile:
    """A journal as read: its header, its entries with their byte offsets, and a torn tail."""

    path: Path
    header: Header
    entries: tuple[tuple[int, dict[str, Any]], ...]
    end_offset: int  # where the good lines end (where appending resumes)
    torn_bytes: int = field(default=0)  # the length of a dropped torn last line, or 0


def read_journal(path: Path) -> JournalFile:
    """Read and check a journal; ``JournalError`` when it is not a regular file, or is
    damaged before its last line, or holds a header or an entry of a shape the shim never
    writes."""
    lines = _read_regular(path).split(b"\n")
    tail = lines.pop()  # after the last newline: b"" unless the last write was cut short
    offset, entries = 0, list[tuple[int, dict[str, Any]]]()
    header: Header | None = None
    for number, line in enumerate(lines, start=1):
        entry = decode_line(line)
        if entry is None:
            if number == len(lines) and not tail:  # complete, with its newline: not a tear
                raise JournalError(
                    f"{path}:{number}: the last line is complete (its newline was written "
                    "after it) but fails its check: damage after the write, not a crash "
                    "mid-write, and its request may have been answered; the journal is not "
                    "replayed. Remove that line by hand to start from the one before it")
            raise JournalError(f"{path}:{number}: a damaged line before the journal's end "
                               "(not a crash mid-write); the journal cannot be trusted past "
                               f"line {number - 1}")
        if header is None:
            try:
                header = Header.from_wire(entry)
            except JournalError as error:
                raise JournalError(f"{path}:{number}: {error}") from None
        else:
            problem = _entry_problem(entry, entries[-1][1]["n"] if entries else 0)
            if problem is not None:
                raise JournalError(f"{path}:{number}: {problem}: a hand-made or edited "
                                   "journal (the line's CRC holds, but a CRC is no seal)")
            entries.append((offset, entry))
        offset += len(line) + 1
    if header is None:
        raise JournalError(f"{path}: empty or torn before its header was written; remove it "
                           "to start a new journal")
    return JournalFile(path, header, tuple(entries), offset, len(tail))


_NOT_REGULAR = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"))


def _not_regular(path: Path, mode: int) -> JournalError:
    what = next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")
    return JournalError(f"{path}: is {what}; a journal is a regular file (a device may never "
                        "end, a FIFO never answer)")


def _read_regular(path: Path) -> bytes:
    """The bytes of the regular file at ``path`` (a link to one is followed): checked before
    it is opened, and again once open (it may have been swapped meanwhile), without
    blocking on a FIFO."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as file:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise _not_regular(path, mode)
            return file.read()
    except OSError as error:
        raise JournalError(f"{path}: cannot be read: {error.strerror or error}") from None


class JournalWriter:
    """Appends checked lines to a journal file; ``durable()`` is the group commit."""

    def __init__(self, path: Path, *, truncate_at: int | None = None) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, 0o600)
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # a FIFO or a device put there since it was read
            os.close(fd)
            raise _not_regular(path, mode)
        if truncate_at is not None:
            os.ftruncate(fd, truncate_at)  # drop a torn tail before appending after it
        os.lseek(fd, 0, os.SEEK_END)
        self.path = path
        self._file = os.fdopen(fd, "ab", buffering=1 << 16)
        self.offset = self._file.tell()
        self._appended = 0
        self._synced = 0
        self._syncing: asyncio.Future[None] | None = None
        self.fsyncs = 0

    def append(self, entry: dict[str, Any]) -> int:
        """Write one entry (buffered); its byte offset in the file."""
        line = encode_line(entry)
        at = self.offset
        self._file.write(line)
        self.offset += len(line)
        self._appended += 1
        return at

    def flush(self) -> None:
        """Hand buffered lines to the OS (a reader of the file then sees them)."""
        self._file.flush()

    def sync(self) -> None:
        """Flush and fsync now, on this thread (start-up, rewind, shutdown)."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self.fsyncs += 1
        self._synced = self._appended

    async def durable(self) -> None:
        """Return once every entry appended before this call is on disk (group commit)."""
        wanted = self._appended
        while self._synced < wanted:
            if self._syncing is None:
                self._syncing = asyncio.ensure_future(self._sync_once())
            await asyncio.shield(self._syncing)

    async def _sync_once(self) -> None:
        try:
            covered = self._appended
            self._file.flush()  # on the loop's thread: appends never race the buffer
            await asyncio.to_thread(os.fsync, self._file.fileno())
            self.fsyncs += 1
            self._synced = max(self._synced, covered)
        finally:
            self._syncing = None

    def close(self) -> None:
        if not self._file.closed:
            self.sync()
            self._file.close()
