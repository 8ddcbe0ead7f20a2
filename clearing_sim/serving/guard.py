"""Connections that do not finish their request head: a deadline, and a cap that evicts them.

Public names: ``Gate``, ``GuardedH11Protocol``, ``guarded``.

uvicorn's h11 protocol keeps a connection for as long as its peer does: a peer that sends
``GET / HTTP/1.1\\r\\nHost: x\\r\\n`` and stops holds a descriptor for ever, and a few
thousand of them take a server to its descriptor limit, where every ``accept()`` fails (and
asyncio stops accepting for a second at a time): real clients wait out their timeouts
(issue 31, finding 1). ``GuardedH11Protocol`` is that protocol with two rules, both kept by
the server's ``Gate``:

- **the header deadline**: a connection waiting for a request head (a new one, or a
  keep-alive one after its answer) that has not received the complete request line and
  headers within ``header_timeout_s`` is closed. The deadline runs from when the wait began;
  bytes that arrive do not extend it. The same deadline then runs for the body, from the
  end of the head: a body still incomplete ``header_timeout_s`` later (a slow or stalled
  upload, which the cap cannot evict: its connection is inside a request) is cut off, and
  the app reading it reads ``http.disconnect`` (no handler acts on a cut-off body).
- **the connection cap**: a connection that would make ``connections_max`` open ones evicts
  the oldest connection still waiting for its request head (the one that has waited
  longest) and is served. Peers are not counted per address: on loopback every peer has the
  same one. Only when every open connection is inside a request (its head complete) is the
  new one closed at once.

What the rules close is counted, not logged one line each: ``Gate.note`` reports the
counts in one warning line at most every ``report_every_s`` (the first at once), so a
flood of hostile connections cannot fill a disk with log lines. uvicorn's own warning for
each request it cannot parse goes to the same count.

``guarded(base, gate)`` is ``base`` (``GuardedH11Protocol`` or a subclass, such as the
shim's, which answers refusals in the API's envelope) bound to one server's gate; uvicorn
instantiates the class it is given once per connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["Gate", "GuardedH11Protocol", "guarded"]

_log = logging.getLogger("uvicorn.error")

EVICTED = "evicted at the connection cap (oldest without a complete request head)"
LATE = "closed past the header deadline"
LATE_BODY = "closed past the body deadline"
HEAD, BODY = "head", "body"
REFUSED = "refused at the connection cap (every connection inside a request)"


class Gate:
    """One server's connections: which are open, which wait for a request head (oldest
    first), and the counts of what the rules closed."""

    def __init__(self, header_timeout_s: float, connections_max: int,
                 report_every_s: float = 10.0) -> None:
        assert header_timeout_s > 0 and connections_max >= 1
        self.header_timeout_s = header_timeout_s
        self.connections_max = connections_max
        self.report_every_s = report_every_s
        self.open: set[GuardedH11Protocol] = set()
        # oldest first; an OrderedDict, whose first key is found in constant time however
        # many were removed before it (a dict's iteration steps over their holes)
        self.waiting: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        self.counts: dict[str, int] = {}
        self._reported_at: float | None = None
        self._report: asyncio.TimerHandle | None = None

    def admit(self, connection: GuardedH11Protocol) -> bool:
        """Make room for ``connection`` (evicting the oldest waiting ones); False when no
        open connection is waiting for its head, so there is no room."""
        while len(self.open) >= self.connections_max:
            if not self.waiting:
                return False
            oldest = next(iter(self.waiting))
            self.note(EVICTED)
            oldest.drop()
        self.open.add(connection)
        return True

    def forget(self, connection: GuardedH11Protocol) -> None:
        self.open.discard(connection)
        self.waiting.pop(connection, None)

    def note(self, what: str) -> None:
        """Count one connection closed (or request refused) for ``what``; reported soon."""
        self.counts[what] = self.counts.get(what, 0) + 1
        if self._report is not None:
            return
        loop = asyncio.get_running_loop()
        due = 0.0 if self._reported_at is None else \
            max(0.0, self._reported_at + self.report_every_s - loop.time())
        self._report = loop.call_later(due, self.report)

    def report(self) -> None:
        """One warning line with the counts since the last one (none when nothing happened)."""
        self._report = None
        if not self.counts:
            return
        self._reported_at = asyncio.get_running_loop().time()
        counted = "; ".join(f"{count} {what}" for what, count in self.counts.items())
        self.counts = {}
        _log.warning("%s (header deadline %g s, at most %d connections; counted, reported "
                     "at most every %g s)", counted, self.header_timeout_s,
                     self.connections_max, self.report_every_s)


class _Counted:
    """uvicorn's logger for one connection, with its per-request warnings (``Invalid HTTP
    request received.``) counted by the gate instead of written one line each."""

    def __init__(self, logger: logging.Logger, gate: Gate) -> None:
        self._logger = logger
        self._gate = gate

    @property
    def level(self) -> int:
        return self._logger.level

    def warning(self, message: str, *args: object, **kwargs: Any) -> None:
        self._gate.note("refused: " + (message % args if args else message))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under a ``Gate``'s deadline and cap (``guarded`` binds one)."""

    gate: ClassVar[Gate]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.logger = _Counted(self.logger, self.gate)  # type: ignore[assignment]
        self._deadline: asyncio.TimerHandle | None = None
        self._phase: str | None = None  # HEAD or BODY: what the deadline waits for

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self.gate.admit(self):
            self.gate.note(REFUSED)
            transport.abort()
            return
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        self.gate.forget(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def drop(self) -> None:
        """Close this connection now (evicted, or late); a request reading its body reads
        ``http.disconnect``, and its app answers nobody."""
        self._stop_clock()
        self.gate.forget(self)
        self.transport.abort()

    def _follow(self) -> None:
        """Which deadline runs now, as h11 sees the client: IDLE, waiting for a request head
        (since the connection opened or its last request ended); SEND_BODY, a head received
        and its body not complete; otherwise none (the request is the app's to answer)."""
        state = None if self.transport.is_closing() else self.conn.their_state
        phase = HEAD if state is h11.IDLE else BODY if state is h11.SEND_BODY else None
        if phase == self._phase:  # a wait already under way keeps its deadline
            return
        self._stop_clock()
        if phase is None:
            return
        self._phase = phase
        if phase == HEAD:
            self.gate.waiting[self] = None
        self._deadline = asyncio.get_running_loop().call_later(
            self.gate.header_timeout_s, self._late)

    def _stop_clock(self) -> None:
        self.gate.waiting.pop(self, None)
        self._phase = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _late(self) -> None:
        self._deadline = None
        self.gate.note(LATE if self._phase == HEAD else LATE_BODY)
        self.drop()


def guarded(base: type[GuardedH11Protocol], gate: Gate) -> type[GuardedH11Protocol]:
    """``base`` bound to ``gate``: the protocol class of one server."""
    return type(base.__name__, (base,), {"gate": gate})
