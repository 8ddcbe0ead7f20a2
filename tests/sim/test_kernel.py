"""The kernel is SimPy's environment with a leaner loop: the same events in the same order."""

from __future__ import annotations

from collections.abc import Callable, Generator
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
    late = env.timeout(5)
    timeout = env.timeout(3, value="v")
    urgent = env.event()
    urgent._ok, urgent._value = True, None  # triggered, as ``Initialize`` is
    env.schedule(urgent, simpy.events.URGENT, 3)  # same time, urgent: before the timeout
    assert isinstance(timeout, Timeout) and isinstance(timeout, simpy.Timeout)
    order: list[simpy.Event] = []
    for event in (late, timeout, urgent):
        event.callbacks.append(order.append)
    assert env.peek() == 3
    env.step()
    assert order == [urgent] and env.now == 3
    env.run()
    assert order == [urgent, timeout, late] and timeout.value == "v" and env.now == 5
    assert env.peek() == float("inf")
    with pytest.raises(simpy.core.EmptySchedule):
        env.step()


def test_fractional_times_are_refused() -> None:
    """Virtual time is whole ms: a fractional time cannot be packed into a key."""
    env = Kernel()
    with pytest.raises(TypeError):
        env.timeout(0.5)
    with pytest.raises(TypeError):
        env.run(until=2.5)
    env.run(until=2.0)
    assert env.now == 2 and isinstance(env.now, int)


@given(_SCRIPTS, st.lists(st.integers(1, 15), min_size=1, max_size=4))
@settings(max_examples=40, deadline=None)
def test_run_until_times_matches_simpy(script: Script, stops: list[int]) -> None:
    """``run(until=t)``: every event before ``t``, then the clock at ``t``, as SimPy."""
    def make(kind: Callable[[], simpy.Environment]) -> Callable[[], simpy.Environment]:
        def stepped() -> simpy.Environment:
            env = kind()
            real_run = env.run

            def run(until: Any = None) -> Any:
                at = 0
                for stop in stops:
                    at += stop
                    real_run(until=at)
                    seen_at.append(int(env.now))
                return real_run()
            env.run = run  # type: ignore[method-assign]
            return env
        return stepped

    seen_at: list[int] = []
    kernel = _trace(make(Kernel), script)
    kernel_at, seen_at[:] = list(seen_at), []
    assert kernel == _trace(make(simpy.Environment), script)
    assert kernel_at == seen_at


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


def test_an_until_event_left_from_an_interrupted_run_still_stops_the_loop() -> None:
    """``run(until=event)`` broken by an error leaves its stop callback on the event: a
    later plain ``run()`` stops there, as SimPy's own ``run`` would, and the next goes on."""
    env = Kernel()
    env.event().fail(KeyError("boom"))
    stop = env.timeout(4, value="stopped")
    later(env, 10, lambda: None)
    with pytest.raises(KeyError):
        env.run(until=stop)
    assert env.run() == "stopped" and env.now == 4
    env.run()
    assert env.now == 10


def test_an_interrupted_run_until_a_time_leaves_nothing_behind() -> None:
    """``run(until=t)`` queues no stop event (it stops below ``t``'s keys): after an error
    the next ``run()`` goes on to the end."""
    env = Kernel()
    env.event().fail(KeyError("boom"))
    later(env, 10, lambda: None)
    with pytest.raises(KeyError):
        env.run(until=4)
    env.run()
    assert env.now == 10


def test_every_event_factory_is_bound_once() -> None:
    """``env.event()``, ``env.process()`` and the rest are bound to the instance at its
    creation, SimPy's own and the kernel's ``timeout`` alike (no descriptor call per use)."""
    env = Kernel()
    for name in ("event", "process", "timeout", "all_of", "any_of"):
        assert getattr(env, name) is getattr(env, name), name  # the same bound object
    assert isinstance(env.timeout(1), Timeout) and type(env.event()) is simpy.Event
