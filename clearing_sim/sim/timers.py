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

import simpy
from simpy.events import PENDING, URGENT

__all__ = ["first_of", "later", "soon"]


class _Soon(simpy.Event):
    """An event that has succeeded and is scheduled urgently now (what ``Initialize`` is)."""

    def __init__(self, env: simpy.Environment, fn: Callable[[], object]) -> None:
        def fire(_: simpy.Event) -> None:
            fn()

        self.env = env
        self.callbacks = [fire]
        self._value = None
        self._ok = True
        env.schedule(self, URGENT)


def soon(env: simpy.Environment, fn: Callable[[], object]) -> None:
    _Soon(env, fn)


def later(env: simpy.Environment, delay: float, fn: Callable[[], None]) -> simpy.Timeout:
    timeout = env.timeout(delay)
    timeout.callbacks.append(lambda _: fn())
    return timeout


class _FirstOf(simpy.Event):
    """Succeeds with the first of ``events`` to be processed (fails if that one failed).

    Unlike a condition it does not take itself off the other events once decided: each
    still calls it once, for nothing (a waiter's deadline collects one such call per wake).
    It reads the events' state as ``Event`` itself does (``callbacks`` None once processed,
    ``_ok``), without a property call per event."""

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
            self.env.schedule(self)
        else:
            event.defused = True
            error = event._value
            assert isinstance(error, Exception)
            self.fail(error)


def first_of(env: simpy.Environment, events: list[simpy.Event]) -> simpy.Event:
    return _FirstOf(env, events)
