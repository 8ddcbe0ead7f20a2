"""One world's real webhook requests on the wire, from their arrival to the instant the world
learns their outcome.

Public names: ``IN_FLIGHT_MAX``, ``InFlight``, ``Outgoing``, ``RealOutcome``.

With ``--deliver-webhooks`` a request that reaches an endpoint that is up is one
``Outgoing``, numbered in the order the world sent them (``seq``: the journal's name for its
outcome). It waits in the ``outbox`` until the clock sends it (``RealDeliveries.launch``,
at most ``IN_FLIGHT_MAX`` POSTs at once), and its outcome is written into its slot when the
answer comes, at whatever wall time. The world reads the slot only at the request's
``learn_at_ms`` (``domain.delivery.real_outcome_learned_at_ms``), a virtual instant fixed
when it arrived: the clock never runs that instant before the slot is filled
(``missing_by``), so the order of events never depends on when answers came. Each outcome
the world reads is listed in ``learned`` until the clock journals it with the hold of the
world lock that used it; replay fills the slots from the journal instead (``feed``).
"""

from __future__ import annotations

import asyncio
import heapq

from attrs import define, frozen

from clearing_sim.sim.receivers import Arrival

__all__ = ["IN_FLIGHT_MAX", "InFlight", "Outgoing", "RealOutcome"]

#: real POSTs on the wire at once, per world; more wait their turn (their deadline starts
#: when they are sent)
IN_FLIGHT_MAX = 64


@frozen
class RealOutcome:
    status: int
    error: str | None = None  # why no real answer was received, or None


@define(eq=False)
class Outgoing:
    """One request that reached an endpoint that is up, for the real receiver behind it."""

    seq: int  # the order the world sent it in (0, 1, ...): its outcome's id in the journal
    arrival: Arrival
    learn_at_ms: int  # the virtual instant the world reads ``outcome``
    outcome: RealOutcome | None = None  # the slot: filled by the POST, or by replay
    task: asyncio.Task[None] | None = None  # the POST, once sent


class InFlight:
    """The requests of one world whose outcome the world has not learned yet."""

    def __init__(self) -> None:
        self.outbox: list[Outgoing] = []  # arrived, not sent yet
        self.learned: list[Outgoing] = []  # read by the world since the clock last took them
        self._unlearned: dict[int, Outgoing] = {}  # by seq
        self._missing: list[tuple[int, int]] = []  # (learn_at_ms, seq); lazily pruned
        self._arrived = 0
        self.slots: asyncio.Semaphore | None = None  # made on the loop that sends

    def add(self, arrival: Arrival, learn_at_ms: int) -> Outgoing:
        item = Outgoing(self._arrived, arrival, learn_at_ms)
        self._arrived += 1
        self._unlearned[item.seq] = item
        heapq.heappush(self._missing, (learn_at_ms, item.seq))
        self.outbox.append(item)
        return item

    def take_outbox(self) -> list[Outgoing]:
        batch, self.outbox = self.outbox, []
        return batch

    def requeue(self) -> int:
        """Put every request still without an outcome back in the outbox (a journal
        replayed: the server that sent them is gone); how many."""
        self.outbox = [item for item in self._unlearned.values() if item.outcome is None]
        return len(self.outbox)

    def missing_by(self, at_ms: float) -> list[Outgoing]:
        """The requests the world must learn by ``at_ms`` whose outcome is not in yet (asked
        at every instant an advance runs: the earliest is on top of a heap)."""
        missing, unlearned = self._missing, self._unlearned
        while missing and (missing[0][1] not in unlearned
                           or unlearned[missing[0][1]].outcome is not None):
            heapq.heappop(missing)  # learned, or its answer is in: never missing again
        if not missing or missing[0][0] > at_ms:
            return []
        return [item for item in unlearned.values()
                if item.outcome is None and item.learn_at_ms <= at_ms]

    def learn(self, item: Outgoing) -> RealOutcome:
        """The world reads the outcome (at ``learn_at_ms``): it is no longer in flight."""
        outcome = item.outcome
        assert outcome is not None, f"real delivery {item.seq} learned before its outcome"
        del self._unlearned[item.seq]
        self.learned.append(item)
        return outcome

    def take_learned(self) -> list[Outgoing]:
        batch, self.learned = self.learned, []
        return batch

    def feed(self, seq: int, outcome: RealOutcome) -> str | None:
        """Replay: the journaled outcome of request ``seq``; why it cannot be, or None."""
        item = self._unlearned.get(seq)
        if item is None:
            return (f"an outcome for real delivery {seq}, which was never sent"
                    if seq >= self._arrived else
                    f"a second outcome for real delivery {seq}, already learned")
        item.outcome = outcome
        return None
