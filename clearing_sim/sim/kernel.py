"""The SimPy environment a world runs on: SimPy's own, with a cheaper queue and loop.

Public names: ``Kernel``, ``Timeout``.

``Kernel`` is a ``simpy.Environment``: the same events, processed in the same order, the
order SimPy's queue keys (time, priority, event id) give them. Only how it gets through
them costs less, for the ~31 kernel events a redeem takes:

- each key is one int, the three parts packed in the same order (time in whole ms above
  the priority above the event id), so the heap compares two ints where SimPy compares two
  tuples item by item (a third of a redeem's kernel cost was those comparisons); the heap
  holds the keys and a dict the event each key stands for;
- ``run`` pops each event and calls its callbacks in one loop, where SimPy's ``run`` calls
  ``step`` once per event;
- ``timeout`` makes a ``Timeout`` (a ``simpy.Timeout``) that queues itself, without the
  ``schedule`` call;
- the world reads the clock as the plain attribute ``_now`` (``now`` is a property: a
  Python call per read, ~50 reads a redeem).

Virtual time is whole milliseconds: every delay the engine schedules is an ``int`` (a
fractional time cannot be packed and raises ``TypeError`` where it is scheduled).
"""

from __future__ import annotations

from heapq import heappop, heappush
from types import MethodType
from typing import TYPE_CHECKING, Any

import simpy
from simpy.core import BoundClass, EmptySchedule, Infinity, SimTime, StopSimulation
from simpy.events import NORMAL, Event, EventPriority

__all__ = ["Kernel", "Timeout"]

#: A key is ``time << _TIME_SHIFT | (priority + 1) << _ID_BITS | event id``: the priority is
#: URGENT (0), NORMAL (1) or -1 (what SimPy gives an ``until`` it puts back), two bits; an
#: id below 2**40 (about a trillion events).
_ID_BITS = 40
_TIME_SHIFT = _ID_BITS + 2
_NORMAL_BITS = (NORMAL + 1) << _ID_BITS


class Timeout(simpy.Timeout):
    """``simpy.Timeout`` queuing itself, with the key ``schedule`` would give it."""

    def __init__(self, env: Kernel, delay: SimTime, value: Any | None = None) -> None:
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        self.env = env
        self.callbacks = []
        self._value = value
        self._delay = delay
        self._ok = True
        key = (env._now + delay) << _TIME_SHIFT | _NORMAL_BITS | next(env._eid)  # type: ignore[operator]
        heappush(env._keys, key)
        env._due[key] = self


class Kernel(simpy.Environment):
    """A ``simpy.Environment`` with packed int keys and an inline loop (see the module)."""

    def __init__(self, initial_time: int = 0) -> None:
        super().__init__(initial_time)
        self._keys: list[int] = []  # a heap; SimPy's own ``_queue`` stays empty
        self._due: dict[int, Event] = {}
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

    def schedule(self, event: Event, priority: EventPriority = NORMAL,
                 delay: SimTime = 0) -> None:
        key = ((self._now + delay) << _TIME_SHIFT  # type: ignore[operator]
               | (priority + 1) << _ID_BITS | next(self._eid))
        heappush(self._keys, key)
        self._due[key] = event

    def peek(self) -> SimTime:
        return self._keys[0] >> _TIME_SHIFT if self._keys else Infinity

    def step(self) -> None:
        """``Environment.step``: process the next event."""
        if not self._keys:
            raise EmptySchedule
        self._process_below(None, once=True)

    def run(self, until: SimTime | Event | None = None) -> Any | None:
        """``Environment.run``. Until a time: every event due before it, then the clock
        moves to it (what SimPy's urgent stop event at that time does)."""
        if isinstance(until, Event):
            return super().run(until)  # SimPy's own, stepping through ``step``
        if until is None:
            return self._process_below(None)
        at = until if isinstance(until, int) else float(until)
        if at <= self._now:
            raise ValueError(f"until ({at}) must be greater than the current simulation time")
        if isinstance(at, float):
            if not at.is_integer():
                raise TypeError(f"virtual time is whole milliseconds, not {at}")
            at = int(at)
        stopped = self._process_below(at << _TIME_SHIFT)
        if stopped is _NOT_STOPPED:
            self._now = at
            return None
        return stopped

    def _process_below(self, limit: int | None, once: bool = False) -> Any | None:
        """Process events in key order while their key is below ``limit`` (all, if None;
        one, if ``once``). An ``until`` event left from an interrupted earlier run stops the
        loop, as it stops SimPy's; its value is returned then."""
        keys, due = self._keys, self._due
        try:
            while keys and (limit is None or keys[0] < limit):
                key = heappop(keys)
                event = due.pop(key)
                self._now = key >> _TIME_SHIFT
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                for callback in callbacks:
                    callback(event)
                if not event._ok and not hasattr(event, "_defused"):
                    # a failed event nobody defused crashes the run (as SimPy's ``step``)
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
                if once:
                    break
        except StopSimulation as stop:
            # the event keeps the callbacks it had not called yet (as SimPy's ``step``)
            event.callbacks = callbacks[callbacks.index(callback) + 1:]
            self.schedule(event, EventPriority(-1))
            if once:
                raise
            return stop.args[0]
        return _NOT_STOPPED if limit is not None else None


#: what ``_process_below`` returns when it ran out of events below its limit
_NOT_STOPPED = object()
