"""What the shim journals, as it happens: the hook the door and the clock call.

Public names: ``Checkpoint``, ``Recorder``, ``journaled_operator``, ``request_of``.

One ``Recorder`` per served simulation started with ``--journal``. The door and the clock
call it at the instant a change is applied, under the world lock, so the journal's order is
the order the world saw; answers wait for ``durable()`` before they are sent.

Entry kinds (every entry has ``n``, its sequence number, and ``k``, its kind):

- ``api``: an ``/api/v1`` request (every one: even a read draws a command id and logs
  ``api.request``), at virtual ``at``: method, path, query, headers (``Authorization``
  sealed), body (``body`` as text, ``body64`` when not UTF-8), the answer's ``status`` and
  the sha256 of its body (``sha``, 16 hex digits) — replay checks both;
- ``refused``: an ``/api/v1`` request refused (4xx) that changed nothing but its own
  ``api.request`` record and drew nothing but its command id, and whose ``api`` entry
  would be over ``REFUSAL_ENTRY_MAX`` bytes: that record's fields (method, path, status,
  participantId, codes), not the request (its body, its headers), so a refused request
  costs the journal a bounded entry; replay writes the record again
  (``ServiceAPI.replay_refusal``);
- ``dropped``: an issuer webhook refused (401): the issuer and instruction ids its
  ``issuer.webhook`` record holds;
- ``issuer``: a status webhook that arrived at ``/issuer-webhooks/{issuerId}`` (it may
  change the world); replay checks its status;
- ``op``: an ``/sim/v1`` request that changes something (not a read, not the clock, whose
  moves are ``clock`` entries), its ``Authorization`` dropped; replay checks its status;
- ``clock``: what one hold of the world lock by the clock did: ``steps`` engine events run,
  then the clock set to ``to`` (or ``null`` when it stopped to wait for real receivers);
- ``learned``: the outcomes (``[seq, status, error]``) of real webhook POSTs the world read
  in the hold of the world lock whose ``clock`` entry follows, each named by its order of
  sending in the world (``seq``) — replay feeds them in instead of calling receivers again.
  (``deliveries``, the outcomes of a batch fed in at its arrival instant, was written before
  issue 31 §2: still read, refused by replay by name;)
- ``checkpoint``: a name for the current point (with its digest); ``rewind``: back to one.

``read_journal`` refuses an entry with any other field, or a field of another shape
(``journal._KINDS``): what follows reads these fields without checking them again.

The *lineage* is the chain of world-changing entries that built the current world: a
checkpoint remembers where the chain was, a rewind makes that the chain again. Nodes hold
byte offsets into the journal, not entries, so a long session keeps little in memory.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from attrs import frozen

from clearing_sim.http.journal import (
    Header,
    JournalError,
    JournalWriter,
    decode_line,
    encode_line,
)
from clearing_sim.http.sealing import Sealer
from clearing_sim.service.api import RefusalRecord
from clearing_sim.service.messages import Request, Response

__all__ = ["Checkpoint", "Recorder", "journaled_operator", "request_of", "unjournaled"]

WORLD_KINDS = frozenset({"api", "refused", "op", "issuer", "dropped", "clock", "deliveries",
                         "learned"})
#: the clock and time travel journal themselves; nothing on the health path can change
#: anything (another method there is a 405, or a 400 for a malformed header: no entry)
_NOT_JOURNALED_PATHS = frozenset({"/sim/v1/clock/advance", "/sim/v1/checkpoints",
                                  "/sim/v1/rewind", "/sim/v1/health"})
_REFUSED_AT_THE_DOOR = frozenset({401, 404, 405})
#: the most one refused ``/api/v1`` request adds to the journal, in bytes (one line)
REFUSAL_ENTRY_MAX = 1024
_BATTERY = "/sim/v1/conformance/receivers"
_GATEWAY = ("/sim/v1/operator/issuers/", "/gateway")


def unjournaled(request: Request) -> bool:
    """Operator requests refused (409 ``not_journaled``) while journaling: the receiver
    battery (it calls a real receiver and stages through the engine directly) and putting an
    issuer on a real gateway (the saga would call the real issuer, which replay cannot redo
    without calling it again)."""
    path = request.path
    return path == _BATTERY or (request.method == "PUT" and path.startswith(_GATEWAY[0])
                                and path.endswith(_GATEWAY[1]))


def journaled_operator(request: Request, response: Response) -> bool:
    """Whether an answered ``/sim/v1`` request goes in the journal as an ``op`` entry:
    it may have changed something (not a read; the clock and time travel journal
    themselves) and it got past the route and the token."""
    return (request.method not in ("GET", "HEAD") and request.path not in _NOT_JOURNALED_PATHS
            and response.status not in _REFUSED_AT_THE_DOOR)


@frozen
class _Node:
    parent: _Node | None
    offset: int


@frozen
class Checkpoint:
    name: str
    at_ms: int
    digest: str
    n: int  # the checkpoint entry's sequence number
    node: _Node | None  # the lineage there

    def wire(self, iso: str) -> dict[str, Any]:
        return {"name": self.name, "at": iso, "atMs": self.at_ms, "digest": self.digest,
                "entry": self.n}


def _body_fields(body: bytes) -> dict[str, str]:
    try:
        return {"body": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body64": base64.b64encode(body).decode()}


def request_of(entry: dict[str, Any], sealer: Sealer, operator_token: str) -> Request:
    """The request an ``api`` or ``op`` entry holds, credentials opened (an operator
    request authenticated with the token the server runs with)."""
    headers: list[tuple[str, str]] = []
    for name, value in entry["headers"]:
        if isinstance(value, dict):
            try:
                value = sealer.open(value["sealed"])
            except ValueError as error:  # well formed (read_journal checked), not ours
                raise JournalError(f"entry {entry['n']}: {error} (a credential sealed "
                                   "under another journal's key, or forged)") from None
        headers.append((name, value))
    if entry["k"] == "op":
        headers.append(("Authorization", f"Bearer {operator_token}"))
    body = (base64.b64decode(entry["body64"]) if "body64" in entry
            else str(entry.get("body", "")).encode())
    return Request(str(entry["method"]), str(entry["path"]),
                   tuple((str(k), str(v)) for k, v in entry["query"]), tuple(headers), body)


class Recorder:
    """Appends the served world's changes to its journal and tracks the lineage."""

    def __init__(self, writer: JournalWriter, header: Header, sealer: Sealer) -> None:
        self.writer = writer
        self.header = header
        self.sealer = sealer
        self.n = 0
        self.head: _Node | None = None
        self.checkpoints: dict[str, Checkpoint] = {}

    # the lineage ------------------------------------------------------------------------------
    def adopt(self, offset: int, entry: dict[str, Any]) -> None:
        """Follow an entry read back from the journal (start-up), as if it were appended."""
        self.n = max(self.n, int(entry.get("n", 0)))
        kind = entry.get("k")
        if kind in WORLD_KINDS:
            self.head = _Node(self.head, offset)
        elif kind == "checkpoint":
            name = str(entry["name"])
            self.checkpoints[name] = Checkpoint(name, int(entry["at"]), str(entry["digest"]),
                                                int(entry["n"]), self.head)
        elif kind == "rewind":
            target = self.checkpoints.get(str(entry["to"]))
            if target is None:
                raise JournalError(f"entry {entry.get('n')}: rewind to an unknown checkpoint "
                                   f"{entry['to']!r}")
            self.head = target.node
        else:
            raise JournalError(f"entry {entry.get('n')}: unknown kind {kind!r}")

    def follow(self, other: Recorder) -> None:
        """Carry on from where ``other`` followed a journal to (start-up: the lineage is
        adopted and replayed before the journal is opened for appending)."""
        self.n, self.head, self.checkpoints = other.n, other.head, dict(other.checkpoints)

    def lineage(self, node: _Node | None) -> Iterator[dict[str, Any]]:
        """The entries that built the world at ``node`` (``self.head``: the current one),
        oldest first, read back from the journal file."""
        offsets: list[int] = []
        cursor = node
        while cursor is not None:
            offsets.append(cursor.offset)
            cursor = cursor.parent
        self.writer.flush()
        with Path(self.writer.path).open("rb") as file:
            for offset in reversed(offsets):
                file.seek(offset)
                entry = decode_line(file.readline())
                assert entry is not None, f"a journal line at byte {offset} no longer reads"
                yield entry

    # appending --------------------------------------------------------------------------------
    def _append(self, entry: dict[str, Any]) -> int:
        self.n += 1
        offset = self.writer.append({"n": self.n, **entry})
        if entry["k"] in WORLD_KINDS:
            self.head = _Node(self.head, offset)
        return self.n

    def api(self, request: Request, response: Response, at_ms: int) -> None:
        self._append(self._api_entry(request, response, at_ms))

    def _api_entry(self, request: Request, response: Response, at_ms: int) -> dict[str, Any]:
        headers = [[name, {"sealed": self.sealer.seal(value)}
                    if name.lower() == "authorization" else value]
                   for name, value in request.headers]
        return {"k": "api", "at": at_ms, "method": request.method, "path": request.path,
                "query": [list(pair) for pair in request.query], "headers": headers,
                **_body_fields(request.body), "status": response.status,
                "sha": hashlib.sha256(response.body).hexdigest()[:16]}

    def refusal(self, request: Request, response: Response, at_ms: int,
                refusal: RefusalRecord) -> None:
        """An ``/api/v1`` request refused having changed nothing but its own record: as an
        ``api`` entry when that is at most ``REFUSAL_ENTRY_MAX`` bytes (``journal export``
        can then make it a step), else as the record replay writes again (``refused``): so
        a refusal costs at most about 1 KiB, whatever was sent (issue 31 §5)."""
        if len(request.body) < REFUSAL_ENTRY_MAX and len(request.path) < REFUSAL_ENTRY_MAX:
            entry = self._api_entry(request, response, at_ms)
            if len(encode_line({"n": self.n + 1, **entry})) <= REFUSAL_ENTRY_MAX:
                self._append(entry)
                return
        self.refused(refusal, at_ms)

    def refused(self, refusal: RefusalRecord, at_ms: int) -> None:
        """A refusal as the record replay writes again (``ServiceAPI.replay_refusal``)."""
        self._append({"k": "refused", "at": at_ms, "method": refusal.method,
                      "path": refusal.path, "status": refusal.status,
                      "participantId": refusal.participant_id,
                      "codes": None if refusal.codes is None else list(refusal.codes)})

    def dropped(self, issuer_id: str, instruction_id: str | None, at_ms: int) -> None:
        """An issuer webhook refused (401): the two ids its ``issuer.webhook`` record holds."""
        self._append({"k": "dropped", "at": at_ms, "issuerId": issuer_id,
                      "instructionId": instruction_id})

    def operator(self, request: Request, response: Response, at_ms: int) -> None:
        headers = [[name, value] for name, value in request.headers
                   if name.lower() != "authorization"]
        self._append({"k": "op", "at": at_ms, "method": request.method, "path": request.path,
                      "query": [list(pair) for pair in request.query], "headers": headers,
                      **_body_fields(request.body), "status": response.status})

    def issuer(self, request: Request, response: Response, at_ms: int) -> None:
        """A status webhook of a (simulated) issuer, as it arrived."""
        self._append({"k": "issuer", "at": at_ms, "method": request.method,
                      "path": request.path, "query": [list(pair) for pair in request.query],
                      "headers": [[name, value] for name, value in request.headers],
                      **_body_fields(request.body), "status": response.status})

    def clock(self, at_ms: int, steps: int, to_ms: int | None) -> None:
        if steps or (to_ms is not None and to_ms != at_ms):
            self._append({"k": "clock", "at": at_ms, "steps": steps, "to": to_ms})

    def learned(self, at_ms: int, outcomes: list[tuple[int, int, str | None]]) -> None:
        self._append({"k": "learned", "at": at_ms,
                      "outcomes": [[seq, status, error] for seq, status, error in outcomes]})

    def checkpoint(self, name: str, at_ms: int, digest: str) -> Checkpoint:
        n = self._append({"k": "checkpoint", "name": name, "at": at_ms, "digest": digest})
        checkpoint = Checkpoint(name, at_ms, digest, n, self.head)
        self.checkpoints[name] = checkpoint
        return checkpoint

    def rewind(self, checkpoint: Checkpoint) -> None:
        self._append({"k": "rewind", "to": checkpoint.name, "at": checkpoint.at_ms})
        self.head = checkpoint.node

    async def durable(self) -> None:
        await self.writer.durable()

