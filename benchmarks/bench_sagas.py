"""Benchmark: N redeem sagas (mixed modes, Poisson arrivals) against bare SimPy, in one run.

Run:  python benchmarks/bench_sagas.py [--transactions N] [--seed S] [--repeat R] [--digest]

It reports transactions per wall-second and SimPy events per wall-second for the model, and
events per wall-second for a bare SimPy loop that processes the same number of events
(timeouts in one process) in the same process, then the ratio of cost per event. The target
(issue: the engine) is the model's cost per event within 3× of bare SimPy. Best of R runs.
``--digest`` also prints the run's event-log digest (the same for every run of one seed), the
check that a change to the engine left the model's behaviour as it was.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Generator
from typing import Any

import simpy

from clearing_sim.sim.examples import example_world
from clearing_sim.sim.workload import poisson_redeems


def _scheduled(env: simpy.Environment) -> int:
    """Events the environment scheduled so far (SimPy's event id counter)."""
    return next(env._eid)  # a private counter, read once after the run


def run_model(n: int, seed: int) -> tuple[float, int, int, str]:
    cast = example_world(seed)
    world = cast.world
    world.env.process(poisson_redeems(cast, n, mean_gap_ms=2_000))
    start = time.perf_counter()
    world.run_all()
    wall = time.perf_counter() - start
    settled = sum(1 for tx in world.transactions if tx.lifecycle_status.value == "settled")
    assert settled == n, f"only {settled} of {n} settled"
    return wall, _scheduled(world.env), len(world.log), world.log.digest()


def run_bare(events: int) -> float:
    env = simpy.Environment()

    def loop() -> Generator[simpy.Event, Any, None]:
        for _ in range(events - 2):  # process start and end are events too
            yield env.timeout(1)

    env.process(loop())
    start = time.perf_counter()
    env.run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--digest", action="store_true", help="print the event-log digest")
    args = parser.parse_args()
    runs = [run_model(args.transactions, args.seed) for _ in range(args.repeat)]
    assert len({run[1:] for run in runs}) == 1, "runs of one seed differ"
    wall, events, records, digest = min(runs)
    bare = min(run_bare(events) for _ in range(args.repeat))
    per_model, per_bare = wall / events, bare / events
    print(f"model: {args.transactions} redeems, {events} SimPy events, {records} log records")
    print(f"model: {wall:.3f} s wall, {args.transactions / wall:,.0f} tx/s, "
          f"{events / wall:,.0f} events/s, {per_model * 1e6:.2f} us/event")
    print(f"bare SimPy: {events} timeouts, {bare:.3f} s wall, {events / bare:,.0f} events/s, "
          f"{per_bare * 1e6:.2f} us/event")
    print(f"ratio (model cost per event / bare SimPy): {per_model / per_bare:.2f}x (target <= 3x)")
    if args.digest:
        print(f"digest {digest}")


if __name__ == "__main__":
    main()
