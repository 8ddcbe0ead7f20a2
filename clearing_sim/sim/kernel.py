"""The SimPy environment a world runs on: SimPy's own, with fewer Python calls per event.

Public names: ``Kernel``, ``Timeout``.

``Kernel`` is a ``simpy.Environment``: the same queue of (time, priority, event id, event),
the same events, processed in the same order. Only how it gets through them costs less, for
the ~31 kernel events a redeem takes:

- ``run()`` until nothing is left pops each event and calls its callbacks in one loop, where
  SimPy's ``run`` calls ``step`` once per event (``run(until=...)`` is SimPy's own);
- ``run_through(at_ms)`` (``World.run_until``) is the same loop bounded by ``at_ms``: the
  events SimPy's ``run(until=at_ms)`` followed by ``step()`` through the instant ``at_ms``
  process, without scheduling a stop event and raising ``StopSimulation`` at each call (a
  scenario's wait calls it once per instant; issue 30 §3);
- ``timeout`` makes a ``Timeout`` (a ``simpy.Timeout``) that pushes itself onto the queue
  with exactly the key ``schedule`` would give it, without that call;
- the world reads the clock as the plain attribute ``_now`` (``now`` is a property: a
  Python call per read, ~50 reads a redeem). Virtual time is whole milliseconds: every
  delay the engine schedules is an ``int``.
"""

from __future__ import annotations

from heapq import heappop, heappush
from types import MethodType
from typing import TYPE_CHECKING, Any

import simpy
from simpy.core import BoundClass, SimTime, StopSimulation
from simpy.events import NORMAL, Event, EventPriority

__all__ = ["Kernel", "Timeout"]

_FOREVER = float("inf")


class Timeout(simpy.Timeout):
    """``simpy.Timeout`` scheduling itself: ``(now + delay, NORMAL, next id, self)``."""

    def __init__(self, env: Kernel, delay: SimTime, value: Any | None = None) -> None:
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        self.env = env
        self.callbacks = []
        self._value = value
        self._delay = delay
        self._ok = True
        heappush(env._queue, (env._now + delay, NORMAL, next(env._eid), self))


class Kernel(simpy.Environment):
    """A ``simpy.Environment`` with a run loop that steps inline (see the module's text)."""

    def __init__(self, initial_time: int = 0) -> None:
        super().__init__(initial_time)
        # SimPy binds ``process``, ``event``, ``timeout``... to the instance once, but only
        # those in the instance's own class: bind the inherited ones too (else each
        # ``env.event()`` goes through ``BoundClass.__get__``, a Python call), the base's
        # first so that the kernel's own ``timeout`` wins. (Never ``vars(self)`` here: it
        # would turn the instance's attributes into a real dict, every read of them slower.)
        for klass in reversed(type(self).__mro__):
            for name, attribute in vars(klass).items():
                if type(attribute) is BoundClass:
                    setattr(self, name, MethodType(attribute.cls, self))

    if TYPE_CHECKING:  # what the bound class below is, as ``simpy.Environment`` types it
        def timeout(self, delay: SimTime = 0, value: Any | None = None) -> Timeout: ...
    else:
        timeout = BoundClass(Timeout)

    def run(self, until: float | Event | None = None) -> Any | None:
        """``Environment.run``; without ``until``, each ``step`` inlined in the loop."""
        if until is not None:
            return super().run(until)
        try:
            self._loop(_FOREVER)
        except StopSimulation as stop:  # an ``until`` left from an earlier run
            return stop.args[0]
        return None

    def run_through(self, at_ms: int) -> None:
        """Process every event due up to and including ``at_ms`` and leave the clock at
        ``at_ms``: the events ``run(until=at_ms)`` and then ``step()`` while ``peek() <=
        at_ms`` process, in the same order (the queue's), without a stop event scheduled and
        raised per call (``World.run_until``: a scenario's wait runs one per instant). An
        ``until`` left from an interrupted ``run(until=...)`` is spent on the way."""
        while True:
            try:
                self._loop(at_ms)
                break
            except StopSimulation:
                continue
        self._now = at_ms

    def _loop(self, last: float) -> None:
        """Pop and process each event due at or before ``last``, as ``step`` does."""
        queue = self._queue
        try:
            while queue and queue[0][0] <= last:
                self._now, _, _, event = heappop(queue)
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                for callback in callbacks:
                    callback(event)
                if not event._ok and not hasattr(event, "_defused"):
                    # as ``step``: a failed event nobody defused crashes the run
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
        except StopSimulation:
            # as ``step``: an ``until`` left from an earlier run; its event keeps the
            # callbacks it had not called yet
            event.callbacks = callbacks[callbacks.index(callback) + 1:]
            self.schedule(event, EventPriority(-1))
            raise
