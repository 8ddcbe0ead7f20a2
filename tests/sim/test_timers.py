"""``timers.soon`` and ``timers.later`` run a callback exactly where a process would run it:
``soon`` where a process started now takes its first step (after the caller's next actions,
before this instant's ordinary events), ``later`` where a process waiting on a timeout made
now resumes. The log's order, and so its digest, depends on it."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import simpy

from clearing_sim.sim.timers import first_of, later, soon

Starter = Callable[[simpy.Environment, list[str], str], None]


def _with_process(env: simpy.Environment, seen: list[str], name: str) -> None:
    def run() -> Generator[simpy.Event, Any, None]:
        seen.append(f"{name} start {env.now}")
        yield env.timeout(5)
        seen.append(f"{name} end {env.now}")
    env.process(run())


def _with_timers(env: simpy.Environment, seen: list[str], name: str) -> None:
    def start() -> None:
        seen.append(f"{name} start {env.now}")
        later(env, 5, lambda: seen.append(f"{name} end {env.now}"))
    soon(env, start)


def _story(starter: Starter) -> list[str]:
    env, seen = simpy.Environment(), []

    def driver() -> Generator[simpy.Event, Any, None]:
        yield env.timeout(1)
        ordinary = env.event()
        ordinary.callbacks.append(lambda _: seen.append(f"ordinary {env.now}"))
        ordinary.succeed()  # scheduled before the start: still runs after it (urgent first)
        starter(env, seen, "a")
        seen.append("caller goes on")
        yield env.timeout(5)  # due with "a end" but made first ("a" starts later): runs first
        seen.append(f"driver {env.now}")
        starter(env, seen, "b")

    env.process(driver())
    env.run()
    return seen


def test_soon_and_later_run_where_a_process_would() -> None:
    assert _story(_with_timers) == _story(_with_process) == [
        "caller goes on", "a start 1", "ordinary 1", "driver 6", "b start 6", "a end 6",
        "b end 11"]  # "b start" is urgent: before "a end", an ordinary event of instant 6


def test_first_of_wakes_like_any_of_with_the_first_event_processed() -> None:
    """``first_of`` wakes its waiter in the same instant and order as ``env.any_of``; it
    succeeds with the first event processed, at once if one already was, and fails with it."""
    def story(wait: Callable[[simpy.Environment, list[simpy.Event]], simpy.Event]) -> list[str]:
        env, seen = simpy.Environment(), []
        done = env.timeout(0)

        def waiter(name: str, delays: tuple[int, ...]) -> Generator[simpy.Event, Any, None]:
            yield done
            yield wait(env, [env.timeout(d) for d in delays])
            seen.append(f"{name} {env.now}")

        def other() -> Generator[simpy.Event, Any, None]:
            for _ in range(3):
                yield env.timeout(2)
                seen.append(f"other {env.now}")

        env.process(waiter("a", (4, 2)))
        env.process(other())
        env.process(waiter("b", (6,)))
        env.run()
        return seen

    assert story(first_of) == story(lambda env, events: env.any_of(events))
    env = simpy.Environment()
    processed = env.timeout(0)
    env.run()
    assert first_of(env, [processed, env.timeout(5)]).triggered
    failing = env.event()
    woken = first_of(env, [failing, env.timeout(5)])
    failing.fail(ValueError("no"))
    woken.defused = True
    env.run()
    assert not woken.ok and isinstance(woken.value, ValueError)
