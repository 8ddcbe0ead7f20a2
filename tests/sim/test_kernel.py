"""The kernel is SimPy's environment with a leaner loop: the same events in the same order."""

from __future__ import annotations

from collections.abc import Callable, Generator
from functools import partial
from typing import Any

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.sim.kernel import Kernel, Timeout
from clearing_sim.sim.timers import first_of, later, soon

Script = list[tuple[str, int]]


def _trace(make: Callable[[], simpy.Environment], script: Script) -> list[tuple[int, str]]:
    """Run ``script`` (processes waiting on timeouts, callbacks, urgent calls, first-ofs)
    and return what happened when, in order."""
    env = make()
    seen: list[tuple[int, str]] = []

    def proc(name: str, delays: list[int]) -> Generator[simpy.Event, Any, None]:
        for delay in delays:
            yield env.timeout(delay)
            seen.append((int(env.now), f"{name} woke after {delay}"))
            soon(env, lambda: seen.append((int(env.now), f"{name} soon")))

    for i, (kind, delay) in enumerate(script):
        name = f"{kind}{i}"
        if kind == "proc":
            env.process(proc(name, [delay, delay // 2, 0]))
        elif kind == "later":
            later(env, delay, lambda name=name: seen.append((int(env.now), name)))
        elif kind == "first":
            waits = [env.timeout(delay), env.timeout(delay // 3)]
            first_of(env, waits).callbacks.append(
                lambda e, name=name: seen.append((int(env.now), f"{name} {e.value._delay}")))
        else:
            soon(env, lambda name=name: seen.append((int(env.now), name)))
    env.run()
    return seen


_SCRIPTS = st.lists(st.tuples(st.sampled_from(["proc", "later", "first", "soon"]),
                              st.integers(0, 20)), max_size=12)


@given(_SCRIPTS)
@settings(max_examples=60, deadline=None)
def test_same_events_in_the_same_order_as_simpy(script: Script) -> None:
    """Same-instant order (urgent before normal, then scheduling order) decides which draw a
    resume gets: the kernel must process exactly what SimPy processes, in its order."""
    assert _trace(Kernel, script) == _trace(simpy.Environment, script)


def test_timeout_is_a_simpy_timeout_keyed_as_schedule_keys_it() -> None:
    env = Kernel()
    env.timeout(5)
    timeout = env.timeout(3, value="v")
    assert isinstance(timeout, Timeout) and isinstance(timeout, simpy.Timeout)
    assert [key[:3] for key in sorted(env._queue)] == [(3, 1, 1), (5, 1, 0)]
    env.run()
    assert timeout.value == "v" and env.now == 5


def test_negative_delay_refused() -> None:
    with pytest.raises(ValueError, match="Negative delay"):
        Kernel().timeout(-1)


def test_run_until_is_simpy_s_own() -> None:
    env = Kernel()
    fired: list[int] = []
    for at in (1, 5, 9):
        later(env, at, lambda at=at: fired.append(at))
    env.run(until=5)
    assert fired == [1] and env.now == 5
    env.run()
    assert fired == [1, 5, 9] and env.now == 9


def test_a_failed_event_nobody_defused_crashes_the_run() -> None:
    env = Kernel()
    env.event().fail(KeyError("lost"))
    with pytest.raises(KeyError, match="lost"):
        env.run()


def test_a_defused_failure_does_not() -> None:
    env = Kernel()
    event = env.event()
    event.callbacks.append(lambda e: setattr(e, "defused", True))
    event.fail(KeyError("lost"))
    env.run()
    assert env.peek() == float("inf")


def test_an_until_left_from_an_interrupted_run_still_stops_the_loop() -> None:
    """``run(until=...)`` broken by an error leaves its stop event queued: a later plain
    ``run()`` stops there, as SimPy's own ``run`` would, and the next one goes on."""
    env = Kernel()
    env.event().fail(KeyError("boom"))
    later(env, 10, lambda: None)
    with pytest.raises(KeyError):
        env.run(until=4)
    assert env.run() is None and env.now == 4
    env.run()
    assert env.now == 10


def test_every_event_factory_is_bound_once() -> None:
    """``env.event()``, ``env.process()`` and the rest are bound to the instance at its
    creation, SimPy's own and the kernel's ``timeout`` alike (no descriptor call per use)."""
    env = Kernel()
    for name in ("event", "process", "timeout", "all_of", "any_of"):
        assert getattr(env, name) is getattr(env, name), name  # the same bound object
    assert isinstance(env.timeout(1), Timeout) and type(env.event()) is simpy.Event


def _stepped(env: simpy.Environment, at: int) -> None:
    """What ``World.run_until`` did before ``Kernel.run_through``: SimPy's ``run(until=)``,
    then ``step`` through the events due at exactly ``at``."""
    if at > env.now:
        env.run(until=at)
    while env.peek() <= at:
        env.step()


def _checkpoints(script: Script, gaps: list[int], through: bool) -> list[tuple[int, str]]:
    """Events of ``script`` (each timed one answered by a same-instant one), run to
    checkpoints ``gaps`` apart by ``run_through`` or by ``_stepped``; what happened when."""
    env = Kernel()
    seen: list[tuple[int, str]] = []

    def note(name: str) -> None:
        seen.append((int(env.now), name))

    def timed(name: str) -> None:
        note(name)
        soon(env, lambda: note(f"{name} soon"))

    for i, (kind, delay) in enumerate(script):
        if kind == "soon":
            soon(env, partial(note, f"{kind}{i}"))
        else:
            later(env, delay, partial(timed, f"{kind}{i}"))
    at = 0
    for gap in gaps:
        at += gap
        if through:
            env.run_through(at)
        else:
            _stepped(env, at)
        note(f"checkpoint {at}, next {env.peek()}")
    return seen


@given(_SCRIPTS, st.lists(st.integers(0, 12), min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_run_through_processes_what_run_until_and_step_process(script: Script,
                                                               gaps: list[int]) -> None:
    """``run_through(at)`` (a scenario's wait calls it once per instant) processes the events
    due up to and including ``at``, in the queue's order, and leaves the clock at ``at``:
    what ``run(until=at)`` and then ``step()`` while ``peek() <= at`` do, checkpoint by
    checkpoint (a gap of 0 runs the current instant again)."""
    assert _checkpoints(script, gaps, True) == _checkpoints(script, gaps, False)


def test_run_through_spends_an_until_left_from_an_interrupted_run() -> None:
    """A stop event left by a ``run(until=...)`` an error broke does not stop
    ``run_through`` short of its instant: every event due by then runs."""
    env = Kernel()
    env.event().fail(KeyError("boom"))
    fired: list[int] = []
    for at in (2, 6, 10):
        later(env, at, lambda at=at: fired.append(at))
    with pytest.raises(KeyError):
        env.run(until=4)
    env.run_through(8)
    assert fired == [2, 6] and env.now == 8


def test_run_through_crashes_on_a_failed_event_nobody_defused() -> None:
    env = Kernel()
    env.event().fail(KeyError("lost"))
    with pytest.raises(KeyError, match="lost"):
        env.run_through(3)
