"""``timers.soon`` and ``timers.later`` run a callback exactly where a process would run it:
``soon`` where a process started now takes its first step (after the caller's next actions,
before this instant's ordinary events), ``later`` where a process waiting on a timeout made
now resumes. The log's order, and so its digest, depends on it."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import simpy

from clearing_sim.sim.timers import later, soon

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
