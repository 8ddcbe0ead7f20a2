"""The request journal's file: a header, then one checked JSON line per entry, made durable.

Public names: ``FORMAT``, ``Header``, ``JournalError``, ``JournalFile``, ``JournalWriter``,
``decode_line``, ``encode_line``, ``read_journal``.

A journal is JSON lines, like a database's write-ahead log. Line 1 is the ``Header`` (what
world the entries apply to: the format, the package version, the seed, the environment, the
world file's sha256, the clock and delivery settings, and what its key material needs: the
operator token, held only as a salted check value). Every further line is one entry (see
``clearing_sim.http.recorder`` for the kinds). Each line ends with ``"crc"``, the CRC-32 of
the line's JSON before it, so a line cut short by a crash, or one that was damaged, is told
from a good one.

Reading (``read_journal``): a last line that is cut short or fails its check is *torn* (a
crash mid-write: its request was never answered) and is reported and dropped; a bad line
before the last is damage, and the journal is refused (``JournalError``). Writing
(``JournalWriter``): appends go to the file in order, on the event loop; ``durable()``
returns once everything appended so far is flushed and fsynced. Concurrent waiters share one
fsync (group commit): the fsync runs in a thread while more entries are appended, and the
next one covers them all.
"""

from __future__ import annotations

import asyncio
import json
import os
import zlib
from pathlib import Path
from typing import Any

from attrs import field, frozen

__all__ = ["FORMAT", "Header", "JournalError", "JournalFile", "JournalWriter", "decode_line",
           "encode_line", "read_journal"]

FORMAT = 2  # 2: the token check and sealing key derived from scrypt (sealing.token_key)
MAGIC = "clearing-sim journal"
_CRC_TAIL = len(',"crc":"00000000"}')


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
        if obj.get("journal") != MAGIC:
            raise JournalError("this is not a clearing-sim journal (its first line is not a "
                               "journal header)")
        if obj.get("format") != FORMAT:
            raise JournalError(f"journal format {obj.get('format')!r}; this version reads "
                               f"format {FORMAT}")
        try:
            world = obj["world"]
            keys = obj["keyMaterial"]
            return cls(str(obj["version"]), int(obj["seed"]), str(obj["environment"]),
                       None if world is None else str(world["sha256"]),
                       None if world is None else str(world["file"]), str(obj["clock"]),
                       float(obj["speed"]), bool(obj["deliverWebhooks"]),
                       bool(obj["allowPrivateWebhookUrls"]), str(keys["salt"]),
                       str(keys["tokenCheck"]))
        except (KeyError, TypeError, ValueError) as error:
            raise JournalError(f"the journal header is missing or has a bad field: {error}") \
                from None


@frozen
class JournalFile:
    """A journal as read: its header, its entries with their byte offsets, and a torn tail."""

    path: Path
    header: Header
    entries: tuple[tuple[int, dict[str, Any]], ...]
    end_offset: int  # where the good lines end (where appending resumes)
    torn_bytes: int = field(default=0)  # the length of a dropped torn last line, or 0


def read_journal(path: Path) -> JournalFile:
    """Read and check a journal; ``JournalError`` when it is damaged before its last line."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise JournalError(f"{path}: cannot be read: {error.strerror or error}") from None
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: b"" unless the last write was cut short
    offset, entries = 0, []
    header: Header | None = None
    for number, line in enumerate(lines, start=1):
        entry = decode_line(line)
        if entry is None:
            if number == len(lines) and not tail:
                tail = line + b"\n"  # the last line, complete but failing its check
                break
            raise JournalError(f"{path}:{number}: a damaged line before the journal's end "
                               "(not a crash mid-write); the journal cannot be trusted past "
                               f"line {number - 1}")
        if header is None:
            header = Header.from_wire(entry)
        else:
            entries.append((offset, entry))
        offset += len(line) + 1
    if header is None:
        raise JournalError(f"{path}: empty or torn before its header was written; remove it "
                           "to start a new journal")
    return JournalFile(path, header, tuple(entries), offset, len(tail))


class JournalWriter:
    """Appends checked lines to a journal file; ``durable()`` is the group commit."""

    def __init__(self, path: Path, *, truncate_at: int | None = None) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
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
