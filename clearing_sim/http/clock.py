"""The served world's clock: manual (moved by the operator) or following the wall clock.

Public names: ``Clock``, ``Stop``, ``TICK_S``, ``ADVANCE_MS_MAX``.

``advance`` runs every event due up to and including its target (webhook deliveries
included) and leaves the clock there; ``POST /sim/v1/clock/advance`` answers only when it is
done. Its target is an instant, or the first instant a transaction is terminal or the world
is idle, at most ``maxSeconds`` ahead: the same ``sim.waiting.Wait`` as the scenario files'
``wait_until``, asked at each whole instant, so it stops where an advance to that instant
would and the journal records it as one (no condition to judge again on replay).
It holds ``clock_lock`` throughout (one advance at a time) and
runs events in slices of at most ``_STEPS_PER_SLICE`` events or ``_SLICE_S`` of wall time,
each under ``world_lock``, releasing it between slices: a read (and the operator's clock)
waits at most one slice and sees the world between two events, with ``advancingTo`` set.
In ``clearing-sim serve`` an operator's advance settles the heap (``http/heap.py``) before
it starts and between its slices when it needs more than one (at most every
``_SETTLE_S``), so no full garbage
collection of a grown world stalls a read for seconds; a realtime tick leaves the collector
alone.
A write must not land at a virtual instant that depends on wall-clock timing, so while
``running_events`` is true it waits (``Clock.write``) until the advance ends, then applies at
the time the advance reached (docs/semantics.md). Real webhook deliveries do not hold an
advance up (issue 31 §2): after each hold it sends the requests that reached real receivers
in it (``RealDeliveries.launch``, concurrently) and runs on; the world reads each outcome at
the request's learn instant (the instant its retry would go out), fixed when it arrived.
Only before running an instant that learns an outcome not in yet does the advance pause:
it clears ``running_events``, frees the world lock and waits for those answers (a receiver
that calls back is served meanwhile), then carries on. An advance that ends first returns,
and the requests still on the wire are carried into the next one.
Calls to real issuer gateways (``World.external``) pause it at the call's own instant: they
are made in a worker thread, one after another in the engine's order, and their
answers are fed in under the next hold, so a slow gateway never blocks the event loop.
A slice ends between two instants (it runs the rest of the instant it reached), so the
world between two slices is the world an advance to that instant would leave, unless that
instant is long: a slice past its wall time ends inside it after ``_INSTANT_STEPS`` of its
events (thousands of transactions made at one instant make instants of ~180,000 events,
issue 31 §3); replay runs the entry's exact count all the same, and an export says it
cannot claim the digest. Between two slices the clock yields ``_TURNS`` turns of the
event loop (a read that came during a slice is answered after it) and settles the heap
at most every ``_SETTLE_S``. With a
journal, each slice (each hold of the world lock) is one ``clock`` entry (events run, the
instant it reached), so a read logged between two slices is replayed between them; the
real outcomes a hold's events read are one ``learned`` entry, written just before its
``clock`` entry (replay feeds them in, then runs the events).

In ``realtime`` mode a background task (``run_realtime``) catches the world up with
``epoch of the run + (wall elapsed × speed)`` every ``TICK_S`` seconds, and each request
catches it up first when no advance is running. An advance in realtime mode jumps ahead
and the clock follows the wall clock from there. While a real receiver's answer is waited
for, virtual time stands still, then catches up.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, NamedTuple, TypeVar

from clearing_sim.domain.errors import InvalidRequest, NotAllowed, NotFound
from clearing_sim.http import heap
from clearing_sim.http.inflight import Outgoing
from clearing_sim.http.options import ClockMode
from clearing_sim.http.simulation import Simulation
from clearing_sim.sim import waiting
from clearing_sim.sim.gateway import ExternalCalls, Work
from clearing_sim.sim.waiting import Wait

__all__ = ["ADVANCE_MS_MAX", "TICK_S", "Clock", "Stop"]

T = TypeVar("T")

TICK_S = 0.02
#: One advance moves the clock at most this far (366 days): a typo must not hang the shim.
ADVANCE_MS_MAX = 366 * 86_400_000
_STEPS_PER_SLICE = 2_000
_SLICE_S = 0.02  # wall time of one slice at most, checked every _CHECK_EVERY events
_CHECK_EVERY = 16
#: a slice past its wall time ends inside the instant it reached once it has run this many
#: of that instant's events (a world of thousands of transactions made at one instant has
#: instants of 100,000 events: tens of seconds, issue 31 §3)
_INSTANT_STEPS = 256
#: turns of the event loop between two slices: the sockets read, each request's task run up
#: to the world lock and through it, so a read that came during a slice is answered after
#: it, not after three (a read's task needs two turns to reach the lock)
_TURNS = 4
#: the heap is settled at most this often between slices (each settle costs about a
#: millisecond, a slice 20 ms; what survives between two settles is small for a full
#: collection to walk)
_SETTLE_S = 0.25
_WRITE_POLL_S = 0.005
#: how long a write waits for a running advance before it is refused (409 clock_advancing)
WRITE_WAIT_S = 2.0
#: the ``Retry-After`` of that refusal, in whole seconds
RETRY_AFTER_S = 1


class ClockAdvancing(NotAllowed):
    """409 ``clock_advancing``: a write that waited ``WRITE_WAIT_S`` behind a running
    advance and was not applied. Its answer carries ``Retry-After``, and nothing of it is
    journaled: it changed nothing, so replay must not see it."""

    def headers(self) -> tuple[tuple[str, str], ...]:
        return (("Retry-After", str(RETRY_AFTER_S)),)
_log = logging.getLogger("clearing_sim.http")


class Pause(NamedTuple):
    """Where an advance stops for the real world: real deliveries whose outcome the next
    instant must learn and that are not answered yet, and calls for real gateways made at
    this virtual instant; both empty: a slice's end."""

    due: list[Outgoing]
    calls: list[tuple[Work, Any]]

    def __bool__(self) -> bool:
        return bool(self.due or self.calls)


class Stop(NamedTuple):
    """Where an advance stopped (virtual ms since the epoch), whether its condition held
    (a plain advance: it reached its instant) and why it stopped: ``reached``,
    ``terminal``, ``idle`` or ``max_seconds``."""

    at_ms: int
    met: bool
    reason: str


class Clock:
    def __init__(self, sim: Simulation, mode: ClockMode, speed: float = 1.0,
                 wall_s: Callable[[], float] = time.monotonic) -> None:
        self.sim = sim
        self.mode = mode
        self.speed = speed
        self._wall_s = wall_s
        self.advancing_to_ms: int | None = None
        self.running_events = False  # an advance is between its slices (writes wait)
        #: an advance is paused for real receivers' answers: its journal entry (``to``
        #: null) waits for theirs, so the journal's lineage is not a world to go back to
        self.awaiting_peers = False
        self.steps = 0  # engine events run in the current hold of the world lock
        self._base_virtual_ms = 0
        self._base_wall_s = 0.0
        self.rebase()

    def rebase(self) -> None:
        """Realtime: follow the wall clock from the world's current virtual time."""
        self._base_virtual_ms = self.sim.world.now_ms
        self._base_wall_s = self._wall_s()

    def wire(self) -> dict[str, Any]:
        """``GET /sim/v1/clock``: ``now`` (ISO 8601 UTC, ms), ``nowMs`` (virtual ms since the
        epoch), ``mode``; of ours: ``epoch``, ``unixSeconds`` (what a signature's ``t`` is
        compared with), ``speed`` (realtime) and ``advancingTo`` (while an advance runs)."""
        world = self.sim.world
        return {"now": world.iso(), "nowMs": world.now_ms, "mode": self.mode.value,
                "epoch": world.iso(0), "unixSeconds": self.sim.unix_s,
                "speed": self.speed if self.mode is ClockMode.REALTIME else None,
                "advancingTo": None if self.advancing_to_ms is None
                else world.iso(self.advancing_to_ms)}

    # moving the clock -------------------------------------------------------------------
    async def advance(self, by_ms: int | None = None, until_ms: int | None = None, *,
                      terminal_id: str | None = None, idle: bool = False,
                      max_ms: int = ADVANCE_MS_MAX) -> Stop:
        """Advance by ``by_ms``, to ``until_ms`` (virtual ms since the epoch), or until the
        transaction ``terminal_id`` is terminal or the world is ``idle`` (``sim/waiting.py``),
        at most ``max_ms`` ahead; where it stopped and why. 400 when the target is before now
        or more than ``ADVANCE_MS_MAX`` ahead, 404 for an unknown transaction (judged once
        this advance has the clock, after any advance before it)."""
        async with self.sim.clock_lock:
            wait, reason = self._wait_for(by_ms, until_ms, terminal_id, idle, max_ms)
            if self.sim.owns_heap:  # it may run long: not even its first slice may walk
                heap.settle()  # the world it starts from (http/heap.py)
            await self._run(wait)
            if self.mode is ClockMode.REALTIME:
                self.rebase()
            return Stop(self.sim.world.now_ms, bool(wait.met),
                        reason if wait.met else "max_seconds")

    def _wait_for(self, by_ms: int | None, until_ms: int | None, terminal_id: str | None,
                  idle: bool, max_ms: int) -> tuple[Wait, str]:
        """The wait one advance runs, and the reason it gives when its condition holds."""
        world = self.sim.world
        now = world.now_ms
        if terminal_id is not None:
            if world.transactions.get(terminal_id) is None:
                raise NotFound.one("untilTerminal", "transaction_not_found",
                                   f"no transaction {terminal_id[:64]}")
            return Wait(world, now + max_ms, waiting.terminal(world, terminal_id)), "terminal"
        if idle:
            return Wait(world, now + max_ms, partial(waiting.idle, world)), "idle"
        target = now + by_ms if by_ms is not None else until_ms
        assert target is not None
        param = "seconds" if by_ms is not None else "until"
        if target < now:
            raise InvalidRequest.one(param, "invalid_value",
                                     f"{param} would move the clock backwards, to "
                                     f"{world.iso(target)}; it is {world.iso()} now")
        if target - now > ADVANCE_MS_MAX:
            raise InvalidRequest.one(param, "invalid_value",
                                     f"{param} moves the clock more than 366 days at once")
        return Wait(world, target), "reached"

    async def catch_up(self) -> None:
        """Realtime: run the world up to the wall clock's virtual time, unless an advance is
        already running (its own requests, from receivers it waits on, must not wait)."""
        if self.mode is not ClockMode.REALTIME or self.sim.clock_lock.locked():
            return
        async with self.sim.clock_lock:
            target = self._base_virtual_ms + int((self._wall_s() - self._base_wall_s)
                                                 * self.speed * 1000)
            if target > self.sim.world.now_ms:
                await self._run(Wait(self.sim.world, target))

    async def run_realtime(self) -> None:
        """The realtime ticker: catch up every ``TICK_S`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(TICK_S)
            try:
                await self.catch_up()
            except Exception:
                _log.exception("the realtime clock stopped: the world failed while running")
                raise

    async def write(self, apply: Callable[[], Awaitable[T]],
                    patience_s: float | None = None) -> T:
        """``apply()`` under the world lock once no advance is running events (one that is
        paused for real receivers lets writes in: that instant does not depend on timing).

        A write waits at most ``patience_s`` of wall time; if an advance is still running
        events then, ``ClockAdvancing`` (409 ``clock_advancing``): nothing was applied, so
        the world, its log and its journal are as if the request never came, and replay
        never sees it (issue 31 §3: a write waited 262 s behind a long advance)."""
        patience_s = WRITE_WAIT_S if patience_s is None else patience_s
        give_up = time.monotonic() + patience_s
        while True:
            async with self.sim.world_lock:
                if not self.running_events:
                    return await apply()
            if time.monotonic() >= give_up:
                raise ClockAdvancing.one(None, "clock_advancing", (
                    f"the clock is advancing to {self.sim.world.iso(self.advancing_to_ms)}"
                    if self.advancing_to_ms is not None else "the clock is advancing") +
                    f"; the write waited {patience_s:g} s and was not applied: retry")
            await asyncio.sleep(_WRITE_POLL_S)

    async def _run(self, wait: Wait) -> None:
        sim = self.sim
        self.advancing_to_ms = wait.deadline_ms
        answered: tuple[Pause, list[Any]] | None = None
        sliced = False  # the advance needed more than one slice
        settle_s = 0.0  # when the heap is settled next (monotonic)
        try:
            while True:
                async with sim.world_lock:
                    self.running_events = True
                    if answered is not None:  # in the same hold as the steps after it
                        self._answer(*answered)
                        answered = None
                        self.awaiting_peers = False
                    at_ms, self.steps = sim.world.now_ms, 0
                    pause = self._step(wait)
                    self._sent_and_learned(at_ms)
                    if sim.journal is not None:  # one entry per hold: requests between
                        sim.journal.clock(at_ms, self.steps,  # two slices come after it
                                          sim.world.now_ms if not pause else None)
                    if pause:  # paused at the real parties' instant: writes may come in
                        self.running_events = False
                        self.awaiting_peers = True
                if pause is None:
                    return
                sliced = sliced or not pause
                if sim.owns_heap and sliced and time.monotonic() >= settle_s:
                    heap.settle()  # a long advance: no full collection walks the world
                    settle_s = time.monotonic() + _SETTLE_S  # between its slices (heap.py)
                if not pause:  # a slice done: reads get the world between two events
                    for _ in range(_TURNS):
                        await asyncio.sleep(0)
                    continue
                answered = await self._wait(pause)
        finally:
            self.running_events = False
            self.awaiting_peers = False
            self.advancing_to_ms = None

    async def _wait(self, pause: Pause) -> tuple[Pause, list[Any]]:
        """The real receivers' answers the next instant needs and the real gateways'
        calls, made concurrently off the event loop (the gateway calls one after another in
        a worker thread, in the order the engine made them) while the world lock is free."""
        due, calls = pause
        sim = self.sim

        async def deliveries() -> None:
            if due:
                assert sim.deliveries is not None
                await sim.deliveries.answers(due)

        def gateway_calls() -> list[Any]:
            return [work() for work, _ in calls]

        if not calls:
            await deliveries()
            return pause, []
        _, results = await asyncio.gather(deliveries(), asyncio.to_thread(gateway_calls))
        return pause, results

    def _answer(self, pause: Pause, results: list[Any]) -> None:
        if pause.calls:
            ExternalCalls.answer(pause.calls, results)

    def _sent_and_learned(self, at_ms: int) -> None:
        """After a hold's events (issue 31 §2): send the real deliveries that arrived in it,
        and journal the outcomes it learned (before its ``clock`` entry: replay feeds them
        in, then runs the hold's events)."""
        sim = self.sim
        if sim.deliveries is None:
            return
        sim.deliveries.launch()
        learned = sim.deliveries.take_learned()
        if learned and sim.journal is not None:
            sim.journal.learned(at_ms, [(item.seq, item.outcome.status, item.outcome.error)
                                        for item in learned if item.outcome is not None])

    def _unanswered(self, at_ms: float) -> list[Outgoing]:
        """The real deliveries to learn by ``at_ms`` whose answer is not in yet."""
        deliveries = self.sim.deliveries
        return [] if deliveries is None else deliveries.missing_by(at_ms)

    def _calling(self) -> bool:
        """Whether calls wait for real gateways."""
        external = self.sim.world.external
        return external is not None and bool(external.pending)

    def _step(self, wait: Wait) -> Pause | None:
        """Run events until ``wait`` is over (``Wait.next_ms``, asked at each whole instant):
        ``None`` when it is; the calls waiting for real gateways (the rest of their instant
        run first); before an instant at which real deliveries' outcomes are learned and not
        all answered yet, those deliveries; an empty pause after a slice of
        ``_STEPS_PER_SLICE`` events or ``_SLICE_S`` of wall time, and then the rest of the
        instant it reached, so a slice ends where an advance to that instant would (the
        journal records it as one). ``steps`` counts the events run (the journal holds the
        count: replay runs exactly as many)."""
        world, external = self.sim.world, self.sim.world.external
        env = world.env
        started_s = time.monotonic()
        run, instant_run, sliced = 0, 0, False
        while True:
            if self._calling():
                assert external is not None
                while env.peek() == world.now_ms:
                    env.step()
                    self.steps += 1
                return Pause([], external.take())
            whole = env.peek() > world.now_ms  # every event of this instant has run
            if whole:
                next_ms = wait.next_ms()
                if next_ms is None:
                    return None
                if env.peek() > next_ms:  # nothing due before it: the clock jumps there
                    world.run_until(next_ms)
                    continue
                due = self._unanswered(env.peek())
                if due:  # that instant learns outcomes not in yet: wait for them first
                    return Pause(due, [])
            if whole:
                instant_run = 0
            timed = (run % _CHECK_EVERY == _CHECK_EVERY - 1
                     and time.monotonic() - started_s > _SLICE_S)
            sliced = sliced or timed or run >= _STEPS_PER_SLICE
            if sliced and run and (whole or (timed and instant_run >= _INSTANT_STEPS)):
                return Pause([], [])  # between two instants, or inside a long one
            env.step()
            self.steps += 1
            run += 1
            instant_run += 1
