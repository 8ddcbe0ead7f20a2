"""Callbacks and light waits on virtual time, for work that needs no SimPy process or
condition of its own.

Public names: ``first_of``, ``later``, ``soon``.

A SimPy process costs two kernel events of its own (its start, ``Initialize``, and its end)
and a generator. Work that only waits once and then acts (an issuer's status webhook, an
abandoned read that still reaches the issuer) runs as callbacks instead, at exactly the
instants and in the order a process would have run it, so the log stays byte for byte:

- ``soon(env, fn)`` calls ``fn()`` in this instant where a process started now would run its
  first step: an urgent event, as SimPy's ``Initialize``, after whatever the caller does next
  and before the ordinary events of this instant;
- ``later(env, delay, fn)`` calls ``fn()`` after ``delay`` where a process waiting on a
  timeout made now would resume.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappush
from operator import methodcaller

import simpy
from simpy.events import NORMAL, PENDING, URGENT

__all__ = ["first_of", "later", "soon"]

#: The one callback of a timer: ``timer.fn()`` (its ``fn`` is a plain function stored on it,
#: so this calls it with no argument), in C: no closure made per timer, no frame per call.
_CALL_FN = methodcaller("fn")


class _Soon(simpy.Event):
    """An event that has succeeded and is scheduled urgently now (what ``Initialize`` is):
    pushed with the key ``env.schedule(self, URGENT)`` gives it, without that call."""

    def __init__(self, env: simpy.Environment, fn: Callable[[], object]) -> None:
        self.env = env
        self.callbacks = [_CALL_FN]
        self.fn = fn
        self._value = None
        self._ok = True
        heappush(env._queue, (env._now, URGENT, next(env._eid), self))


def soon(env: simpy.Environment, fn: Callable[[], object]) -> None:
    _Soon(env, fn)


class _Later(simpy.Timeout):
    """A timeout whose one callback calls ``fn()``: the key ``env.timeout(delay)`` gives it
    (``sim/kernel.Timeout``), no lambda around ``fn``."""

    def __init__(self, env: simpy.Environment, delay: float, fn: Callable[[], object]) -> None:
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        self.env = env
        self.callbacks = [_CALL_FN]
        self.fn = fn
        self._value = None
        self._delay = delay
        self._ok = True
        heappush(env._queue,
                 (env._now + delay, NORMAL, next(env._eid), self))


def later(env: simpy.Environment, delay: float, fn: Callable[[], None]) -> simpy.Timeout:
    return _Later(env, delay, fn)


class _FirstOf(simpy.Event):
    """Succeeds with the first of ``events`` to be processed (fails if that one failed).

    Unlike a condition it does not take itself off the other events once decided: each
    still calls it once, for nothing (a waiter drops its deadline's calls when it ends).
    It reads the events' state as ``Event`` itself does (``callbacks`` None once processed,
    ``_ok``), without a property call per event, and schedules itself as ``env.schedule``
    would, without that call."""

    def __init__(self, env: simpy.Environment, events: list[simpy.Event]) -> None:
        self.env = env  # what ``Event.__init__`` sets, without its call (one per wait)
        self.callbacks = []
        self._value = PENDING
        fire = self._fire
        for event in events:
            if event.callbacks is None:  # processed: decided at once, as AnyOf is
                fire(event)  # type: ignore[unreachable]  # (typed a list; None once processed)
            else:
                event.callbacks.append(fire)

    def _fire(self, event: simpy.Event) -> None:
        if self._value is not PENDING:  # decided already
            return
        if event._ok:  # what ``succeed`` does, its check made just above
            self._ok = True
            self._value = event
            env = self.env
            heappush(env._queue,
                     (env._now, NORMAL, next(env._eid), self))
        else:
            event.defused = True
            error = event._value
            assert isinstance(error, Exception)
            self.fail(error)


#: ``first_of(env, events)``: the event that succeeds with the first of ``events`` processed
first_of = _FirstOf
