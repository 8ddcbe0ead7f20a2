"""Running figures of the world that the status check reports, kept as records are appended.

Public names: ``LATENCY_WINDOW``, ``RECENT_OPERATIONS``, ``OperationTimes``,
``RunningProcesses``, ``recent_latency_ms``.

``recent_latency_ms`` is the definition of the status check's latency figures: a walk
backwards over the log. ``OperationTimes`` keeps the same answer as the log grows, so the
status route costs what its answer holds, not the world's history (issue 30, section 2): it
listens to the records the walk reads and keeps, per ledger (``ledger.``) and RTGS
(``rtgs.``) family, the last ``RECENT_OPERATIONS`` operations with what the walk would learn
of each: how long it took (from the closest earlier start record of its transaction), or
that its start is hidden (an issuer refund), or that it has none. Reading the figure walks
those operations only. A world where the walk must reach further back than they go (more
than ``LATENCY_WINDOW`` refunds in flight over ``RECENT_OPERATIONS`` operations: no known
world) is answered by the walk over the log itself, so the answer is the definition's on
every world; ``tests/sim/test_gauges.py`` compares the two over random worlds.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import simpy

    from clearing_sim.sim.eventlog import EventLog, Record

__all__ = ["LATENCY_WINDOW", "RECENT_OPERATIONS", "OperationTimes", "RunningProcesses",
           "recent_latency_ms"]

LATENCY_WINDOW = 20
#: operations of each family kept for the figure (the walk reads ``LATENCY_WINDOW`` of them
#: unless refunds in flight hide the start of some)
RECENT_OPERATIONS = 256

# Records after which the saga or the issuer starts its next ledger or RTGS operation at once.
START_KINDS = ("transaction.state", "saga.step", "saga.event", "saga.instruction_sent",
               "issuer.instruction")
FAMILIES = ("ledger.", "rtgs.")
# A record after which the next operation starts only after hidden processing (a refund) or
# after the RTGS's closed hours (``rtgs.closed_wait``: itself the end of an RTGS operation,
# the adapter's answer that the scheme is closed): neither is the scheme's answer time.
UNTIMED_KINDS = ("issuer.request", "rtgs.closed_wait")


def recent_latency_ms(records: Sequence[Record], family: str,
                      window: int = LATENCY_WINDOW) -> int | None:
    """Mean duration of the last ``window`` operations of ``family`` (``ledger.``, ``rtgs.``).

    Walks the log backwards. An operation's record (carrying its ``transactionId``) ends it;
    the closest earlier start record of the same transaction began it."""
    samples: list[int] = []
    open_ends: dict[str, list[int]] = {}  # transaction → end times awaiting their start
    cancelled_at: dict[str, int] = {}
    for record in reversed(records):
        tx = record.get("transactionId")
        if not isinstance(tx, str):
            continue
        kind = record.kind
        if kind == "transaction.state" and record.get("trigger") == "cancel":
            cancelled_at[tx] = record.at_ms
        starts = (kind in START_KINDS or kind.startswith(FAMILIES)) \
            and kind not in UNTIMED_KINDS
        if tx in open_ends and (starts or kind in UNTIMED_KINDS):
            ends = open_ends.pop(tx)
            if starts:
                samples.extend(end - record.at_ms for end in ends)
        collecting = len(samples) + sum(len(e) for e in open_ends.values()) < window
        instant = kind == "ledger.return" and cancelled_at.get(tx) == record.at_ms
        if kind.startswith(family) and collecting and not instant:
            open_ends.setdefault(tx, []).append(record.at_ms)
        if not collecting and not open_ends:
            break
    if not samples:
        return None
    samples = samples[:window]
    return _mean(samples)


def _mean(samples: Sequence[int]) -> int:
    return (2 * sum(samples) + len(samples)) // (2 * len(samples))  # rounded half up


class _Operation:
    """One operation as the walk sees it: ``seq`` its record's; ``took_ms`` its duration, or
    None when its start is hidden (``hidden_at`` the hiding record's seq) or absent (both
    None); ``instant`` a cancel's return at the cancel's instant (never sampled)."""

    __slots__ = ("hidden_at", "instant", "seq", "took_ms")

    def __init__(self, seq: int, took_ms: int | None, hidden_at: int | None) -> None:
        self.seq = seq
        self.took_ms = took_ms
        self.hidden_at = hidden_at
        self.instant = False


class OperationTimes:
    """The ledger and RTGS latency figures of one log, kept as it grows: made by the first
    reader (``World.operation_times``, which the API asks for when it is made, so a world
    that serves no API pays nothing per record), it reads the records logged so far once,
    then listens before every other listener.

    ``_last`` holds, per transaction, its latest start record's time (>= 0) or, when its
    latest record of either kind hides the next start, ``-1 - seq`` of that record.
    ``forget`` drops a transaction that will log nothing more (``World.forget``)."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._last: dict[str, int] = {}
        self._recent = {family: deque[_Operation](maxlen=RECENT_OPERATIONS)
                        for family in FAMILIES}
        self._seen = dict.fromkeys(FAMILIES, 0)  # operations ever kept, per family
        self._instant_ms = -1
        self._returns_now: dict[str, list[_Operation]] = {}  # ledger.return at _instant_ms
        for record in log:  # what was logged before (a world made before its API)
            handle = self._handler(record.kind)
            if handle is not None:
                handle(record)
        for kind in (*START_KINDS, *UNTIMED_KINDS, *FAMILIES):
            handle = self._handler(kind)
            assert handle is not None
            log.listen(handle, kind, first=True)

    def _handler(self, kind: str) -> Callable[[Record], None] | None:
        """The listener for records of ``kind`` (or family), None for a kind the walk skips."""
        if kind == "transaction.state":
            return self._state
        if kind in START_KINDS:
            return self._start
        if kind == "rtgs.closed_wait":
            return self._closed_wait
        if kind in UNTIMED_KINDS:
            return self._untimed
        if kind.startswith("ledger."):
            return self._ledger
        if kind.startswith("rtgs."):
            return self._rtgs
        return None

    def forget(self, transaction_id: str) -> None:
        self._last.pop(transaction_id, None)

    # listeners ------------------------------------------------------------------------------
    def _start(self, record: Record) -> None:
        tx = record.fields.get("transactionId")
        if type(tx) is str:
            self._last[tx] = record.at_ms

    def _state(self, record: Record) -> None:
        tx = record.fields.get("transactionId")
        if type(tx) is str:
            self._last[tx] = record.at_ms
            if record.fields.get("trigger") == "cancel" and record.at_ms == self._instant_ms:
                for operation in self._returns_now.pop(tx, ()):
                    operation.instant = True

    def _untimed(self, record: Record) -> None:
        tx = record.fields.get("transactionId")
        if type(tx) is str:
            self._last[tx] = -1 - record.seq

    def _operation(self, record: Record, family: str) -> _Operation | None:
        tx = record.fields.get("transactionId")
        if type(tx) is not str:
            return None
        last = self._last.get(tx)
        if last is None:
            operation = _Operation(record.seq, None, None)
        elif last >= 0:
            operation = _Operation(record.seq, record.at_ms - last, None)
        else:
            operation = _Operation(record.seq, None, -1 - last)
        self._last[tx] = record.at_ms  # an operation starts the next one
        self._recent[family].append(operation)
        self._seen[family] += 1
        return operation

    def _ledger(self, record: Record) -> None:
        operation = self._operation(record, "ledger.")
        if operation is not None and record.kind == "ledger.return":
            tx = record.fields["transactionId"]
            assert isinstance(tx, str)
            if record.at_ms != self._instant_ms:
                self._instant_ms = record.at_ms
                self._returns_now.clear()
            self._returns_now.setdefault(tx, []).append(operation)

    def _rtgs(self, record: Record) -> None:
        if record.kind != "rtgs.closed_wait":  # its own listener's (the family's sees it too)
            self._operation(record, "rtgs.")

    def _closed_wait(self, record: Record) -> None:
        """An RTGS operation's end (the adapter said the scheme is closed) that hides the
        start of the next one (it comes at the opening, not at the scheme's answer time)."""
        self._operation(record, "rtgs.")
        self._untimed(record)

    # the figure -----------------------------------------------------------------------------
    def mean_ms(self, family: str, window: int = LATENCY_WINDOW) -> int | None:
        """``recent_latency_ms(log, family, window)``, from the kept operations."""
        recent = self._recent[family]
        held = 0  # operations sampled or never started: they hold their slot for good
        hiding: list[int] = []  # max-heap (negated) of the hiding records' seqs
        samples: list[int] = []
        for operation in reversed(recent):
            if operation.instant:
                continue
            while hiding and -hiding[0] >= operation.seq:
                heapq.heappop(hiding)  # the walk has passed the record that hid it
            if held + len(hiding) >= window:
                continue
            if operation.hidden_at is not None:
                heapq.heappush(hiding, -operation.hidden_at)
                continue
            held += 1
            if operation.took_ms is not None:
                samples.append(operation.took_ms)
            if held >= window:
                break
        else:
            if self._seen[family] > len(recent):  # the walk goes past what is kept
                return recent_latency_ms(self._log.select(), family, window)
        return _mean(samples) if samples else None


class RunningProcesses:
    """How many of the processes handed to ``started`` have not ended: the world's sagas,
    so ``sim.waiting.idle`` asks a count instead of every saga. A process counts until
    SimPy has processed its end (within the instant it ends), so between instants, where
    waits judge, the count is that of the processes alive."""

    def __init__(self) -> None:
        self.count = 0

    def started(self, process: simpy.Process) -> None:
        self.count += 1
        process.callbacks.append(self._ended)

    def _ended(self, _process: simpy.Event) -> None:
        self.count -= 1
