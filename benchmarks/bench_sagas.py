"""Benchmark: N redeem sagas (mixed modes, Poisson arrivals) against bare SimPy, in one run.

Run:  python benchmarks/bench_sagas.py [--transactions N] [--seed S] [--repeat R] [--digest]
                                       [--mix] [--baseline CHECKOUT] [--clock wall|cpu]

``--mix`` first reports the headline figure (issue 30 §4: where the engine stands against its
own work): the model against the *same-work* baseline (``same_work.run_same_work``: the
model's modelled work per redeem in lean plain SimPy, the same records and fields, signed
status webhooks, receipts, Decimal fees, latency draws, SLA timers, no failure paths; see
its docstring for what it omits), and, as the old comparison, against the *toy saga*
(``run_toy``: per transaction 8 timeouts, 2 issuer round trips and 10 log records, about a
quarter of the model's work), in R *paired rounds*: each round runs the model, the
same-work program and the toy, each after a garbage collection, in an order that
alternates (model first, then last), and takes the round's ratios of transactions per
second; it prints the median round's model / same-work and model / toy with their
quartiles (the goal held: model / same-work 1.0x), the best rate of each and the digest.
Runs back to back see the same contention, so the median of paired ratios holds on a busy
machine where best-of-R figures swing; ``--clock cpu`` times by the process's CPU time
instead of the wall clock, steadier still.
``--baseline CHECKOUT`` (another checkout of the project, e.g. ``git worktree add /tmp/base
main``) also loads that checkout's engine into this process and runs it beside this one for R
rounds: each round runs both (which goes first alternates), the same-work program and the
toy, each after a garbage collection, and takes the round's ratios; it prints the median
round (with the quartiles), the best run of each and both digests.

It reports transactions per wall-second and SimPy events per wall-second for the model, and
events per wall-second for a bare SimPy loop that processes the same number of events
(timeouts in one process) in the same process, then the ratio of cost per event. The target
(issue: the engine) is the model's cost per event within 3× of bare SimPy. Best of R runs.
It then runs bare SimPy with the model's *mix* of events (``run_bare_mix``: sub-processes,
``any_of`` and ``|`` conditions, plain events; no model code) and reports what that mix alone
costs against the timeout loop: the share of the ratio no model code could remove.
``--digest`` also prints the run's event-log digest (the same for every run of one seed), the
check that a change to the engine left the model's behaviour as it was.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import random
import statistics
import sys
import time
from collections.abc import Callable, Generator
from typing import Any

import simpy
from same_work import run_same_work  # this folder: the script's own directory is on the path

from clearing_sim.sim.examples import example_world
from clearing_sim.sim.workload import poisson_redeems

#: The clock the runs are timed with: wall (``perf_counter``) unless ``--clock cpu`` (the
#: process's CPU time, steadier on a machine other work shares).
clock = time.perf_counter


def _scheduled(env: simpy.Environment) -> int:
    """Events the environment scheduled so far (SimPy's event id counter)."""
    return next(env._eid)  # a private counter, read once after the run


def load_engine(checkout: str) -> tuple[Any, Any]:
    """``example_world`` and ``poisson_redeems`` of the ``clearing_sim`` in ``checkout``,
    loaded beside the one already imported (the engine imports nothing lazily, so each set
    of modules keeps its own)."""
    mine = {name: module for name, module in sys.modules.items()
            if name == "clearing_sim" or name.startswith("clearing_sim.")}
    for name in mine:
        del sys.modules[name]
    sys.path.insert(0, checkout)
    try:
        examples = importlib.import_module("clearing_sim.sim.examples")
        workload = importlib.import_module("clearing_sim.sim.workload")
    finally:
        sys.path.remove(checkout)
        for name in [n for n in sys.modules
                     if n == "clearing_sim" or n.startswith("clearing_sim.")]:
            del sys.modules[name]
        sys.modules.update(mine)
    return examples.example_world, workload.poisson_redeems


def run_model(n: int, seed: int, engine: tuple[Any, Any] | None = None,
              ) -> tuple[float, int, int, str]:
    make_world, redeems = engine or (example_world, poisson_redeems)
    cast = make_world(seed)
    world = cast.world
    world.env.process(redeems(cast, n, mean_gap_ms=2_000))
    start = clock()
    world.run_all()
    wall = clock() - start
    settled = sum(1 for tx in world.transactions if tx.lifecycle_status.value == "settled")
    assert settled == n, f"only {settled} of {n} settled"
    return wall, _scheduled(world.env), len(world.log), world.log.digest()


def run_toy(transactions: int, seed: int) -> float:
    """The toy saga: what a transaction costs in SimPy with the model's shape of work and none
    of its code. Per transaction one process waits 8 timeouts (intake, lock, earmark, the
    sending of two instructions, burn, settlement, the last update) and two issuer round
    trips (each a sub-process that waits the issuer's latency and answers through an event
    the saga waits on); it appends 10 records (a tuple of time, sequence, kind and a dict of
    fields) to a list. Arrivals are Poisson from ``seed``.
    Returns the wall seconds of the run."""
    env = simpy.Environment()
    rng = random.Random(seed)
    log: list[tuple[float, int, str, dict[str, Any]]] = []

    def record(kind: str, tx: int, **fields: Any) -> None:
        log.append((env.now, len(log), kind, {"transactionId": tx, **fields}))

    def issuer(tx: int, answer: simpy.Event) -> Generator[simpy.Event, Any, None]:
        yield env.timeout(rng.randint(500, 20_000))
        record("issuer.request", tx, route="POST /instructions")
        answer.succeed("COMPLETED")

    def saga(tx: int) -> Generator[simpy.Event, Any, None]:
        yield env.timeout(200)
        record("saga.step", tx, name="Validated")
        yield env.timeout(rng.randint(400, 1_600))
        record("ledger.lock", tx, amount="10.00")
        yield env.timeout(rng.randint(300, 500))
        record("rtgs.earmark", tx, amountGbp="10.00")
        for _ in range(2):
            yield env.timeout(rng.randint(60, 120))
            answer = env.event()
            env.process(issuer(tx, answer))
            status = yield answer
            record("issuer.instruction", tx, status=status)
        yield env.timeout(rng.randint(400, 1_600))
        record("ledger.burn", tx, amount="10.00")
        yield env.timeout(rng.randint(300, 500))
        record("rtgs.settle", tx, amountGbp="10.00")
        yield env.timeout(1)
        record("transaction.state", tx, lifecycleStatus="settled")

    def arrivals() -> Generator[simpy.Event, Any, None]:
        for tx in range(transactions):
            yield env.timeout(round(rng.expovariate(1 / 2_000)))
            env.process(saga(tx))

    env.process(arrivals())
    start = clock()
    env.run()
    wall = clock() - start
    assert len(log) == 10 * transactions
    return wall


def run_bare(events: int) -> float:
    env = simpy.Environment()

    def loop() -> Generator[simpy.Event, Any, None]:
        for _ in range(events - 2):  # process start and end are events too
            yield env.timeout(1)

    env.process(loop())
    start = clock()
    env.run()
    return clock() - start


def run_bare_mix(transactions: int) -> tuple[float, int]:
    """Bare SimPy with the model's mix of events and no model code: per transaction a process
    that waits three times on ``any_of`` a timeout and an event a sub-process succeeds (an
    issuer read answering before its deadline), three times on ``|`` of two timeouts and twice
    on a sub-process of two timeouts, from Poisson-like arrivals. Per transaction that is what
    the model schedules (``--mix`` prints the model's counts): ~16 timeouts, 6 processes
    (each an initialisation and an end), 3 ``AnyOf``, 3 ``Condition`` and 2-3 plain events.
    Returns (wall seconds, events scheduled)."""
    env = simpy.Environment()

    def signal(event: simpy.Event) -> Generator[simpy.Event, Any, None]:
        yield env.timeout(40)
        event.succeed()

    def child() -> Generator[simpy.Event, Any, None]:
        yield env.timeout(5)
        yield env.timeout(5)

    def transaction() -> Generator[simpy.Event, Any, None]:
        for _ in range(3):
            answer = env.event()
            env.process(signal(answer))
            yield env.any_of([env.timeout(50), answer])
        for _ in range(3):
            yield env.timeout(10) | env.timeout(20)
        for _ in range(2):
            yield env.process(child())

    def arrivals() -> Generator[simpy.Event, Any, None]:
        for n in range(transactions):
            yield env.timeout(1 + n % 3)
            env.process(transaction())

    env.process(arrivals())
    start = clock()
    env.run()
    return clock() - start, _scheduled(env)


def event_mix(n: int, seed: int) -> dict[str, int]:
    """The SimPy events the model schedules for ``n`` redeems, by class."""
    cast = example_world(seed)
    world = cast.world
    counts: dict[str, int] = {}
    schedule = world.env.schedule

    def counting(event: simpy.Event, priority: Any = 1, delay: float = 0) -> None:
        name = type(event).__name__
        counts[name] = counts.get(name, 0) + 1
        schedule(event, priority, delay)

    world.env.schedule = counting  # type: ignore[method-assign]
    world.env.process(poisson_redeems(cast, n, mean_gap_ms=2_000))
    world.run_all()
    return counts


def spread(ratios: list[float]) -> str:
    """The median of paired ratios, with the quartiles when there are two or more."""
    if len(ratios) < 2:
        return f"{ratios[0]:.3f}x"
    low, _, high = statistics.quantiles(ratios, n=4)
    return f"{statistics.median(ratios):.3f}x (quartiles {low:.3f}-{high:.3f})"


def paired_rounds(runs: dict[str, Callable[[], float]], repeat: int) -> dict[str, list[float]]:
    """``repeat`` rounds of every run in ``runs`` (label -> a run returning its seconds),
    each after a collection, in the given order in even rounds and the reverse in odd
    ones (runs back to back see the same contention on a shared machine). Returns each
    label's seconds, one per round, in round order."""
    seconds: dict[str, list[float]] = {label: [] for label in runs}
    order = list(runs)
    for i in range(repeat):
        for label in (order if i % 2 == 0 else order[::-1]):
            gc.collect()
            seconds[label].append(runs[label]())
    return seconds


def mix_rounds(n: int, seed: int, repeat: int) -> str:
    """The headline: model / same-work and model / toy, the median of ``repeat`` paired
    rounds (a rate ratio: the other run's seconds over the model's). Returns the digest."""
    results: list[tuple[float, int, int, str]] = []

    def model() -> float:
        results.append(run_model(n, seed))
        return results[-1][0]

    seconds = paired_rounds({"model": model, "same-work": lambda: run_same_work(n, seed, clock),
                             "toy": lambda: run_toy(n, seed)}, repeat)
    assert len({run[1:] for run in results}) == 1, "runs of one seed differ"
    best = {label: n / min(times) for label, times in seconds.items()}
    print(f"best of {repeat}: model {best['model']:,.0f} tx/s; same-work (the model's "
          f"records, webhooks, receipts, fees, draws, SLA timers) {best['same-work']:,.0f} "
          f"tx/s; toy saga (8 timeouts, 2 round trips, 10 records) {best['toy']:,.0f} tx/s")

    def ratios(other: str) -> list[float]:
        return [o / m for o, m in zip(seconds[other], seconds["model"], strict=True)]

    print(f"median of {repeat} paired rounds: model / same-work {spread(ratios('same-work'))} "
          f"(goal 1.0x); model / toy {spread(ratios('toy'))} (the old comparison)")
    return results[0][3]


def compare(checkout: str, n: int, seed: int, repeat: int) -> None:
    """Before (``checkout``) and after (this engine) in one process, ``repeat`` rounds: each
    round runs both (in turn first: before-after, then after-before), the same-work program
    and the toy saga, each after a collection, and takes the round's ratios (the runs of
    one round, back to back, see the same contention on a shared machine). Prints the
    median round's ratios with their quartiles, and the best run of each."""
    engines = {"before": load_engine(checkout), "after": None}
    best: dict[str, tuple[float, int, int, str]] = {}

    def model(label: str) -> Callable[[], float]:
        def run() -> float:
            result = run_model(n, seed, engines[label])
            best[label] = min(best.get(label, result), result)
            return result[0]
        return run

    seconds = paired_rounds({"before": model("before"), "after": model("after"),
                             "same-work": lambda: run_same_work(n, seed, clock),
                             "toy": lambda: run_toy(n, seed)}, repeat)
    print(f"same-work: best {n / min(seconds['same-work']):,.0f} tx/s; "
          f"toy saga: best {n / min(seconds['toy']):,.0f} tx/s")
    for label, (wall, events, records, digest) in best.items():
        print(f"model {label}: best {n / wall:,.0f} tx/s, {events} SimPy events, "
              f"{records} records, digest {digest}")

    def ratios(other: str, label: str) -> list[float]:
        return [o / m for o, m in zip(seconds[other], seconds[label], strict=True)]

    print(f"median of {repeat} rounds: after / before {spread(ratios('before', 'after'))}; "
          f"model / same-work before {spread(ratios('same-work', 'before'))}, after "
          f"{spread(ratios('same-work', 'after'))}; model / toy (the old comparison) before "
          f"{spread(ratios('toy', 'before'))}, after {spread(ratios('toy', 'after'))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--digest", action="store_true", help="print the event-log digest")
    parser.add_argument("--mix", action="store_true",
                        help="model / same-work and model / toy in paired rounds, and the "
                             "model's SimPy events by class, per transaction")
    parser.add_argument("--baseline", metavar="CHECKOUT",
                        help="also run the engine of this checkout, alternately with this one")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time runs by the wall clock or by the process's CPU time "
                             "(steadier when other work shares the machine)")
    args = parser.parse_args()
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.baseline:
        compare(args.baseline, args.transactions, args.seed, args.repeat)
    runs = [run_model(args.transactions, args.seed) for _ in range(args.repeat)]
    assert len({run[1:] for run in runs}) == 1, "runs of one seed differ"
    wall, events, records, digest = min(runs)
    if args.mix:
        print(f"digest {mix_rounds(args.transactions, args.seed, args.repeat)}")
    bare = min(run_bare(events) for _ in range(args.repeat))
    per_model, per_bare = wall / events, bare / events
    print(f"model: {args.transactions} redeems, {events} SimPy events, {records} log records")
    print(f"model: {wall:.3f} s wall, {args.transactions / wall:,.0f} tx/s, "
          f"{events / wall:,.0f} events/s, {per_model * 1e6:.2f} us/event")
    print(f"bare SimPy: {events} timeouts, {bare:.3f} s wall, {events / bare:,.0f} events/s, "
          f"{per_bare * 1e6:.2f} us/event")
    print(f"ratio (model cost per event / bare SimPy): {per_model / per_bare:.2f}x (target <= 3x)")
    mix_wall, mix_events = min(run_bare_mix(args.transactions) for _ in range(args.repeat))
    per_mix = mix_wall / mix_events
    print(f"bare SimPy, the model's event mix (no model code): {mix_events} events, "
          f"{mix_wall:.3f} s wall, {per_mix * 1e6:.2f} us/event = {per_mix / per_bare:.2f}x "
          "bare timeouts")
    print(f"model cost per event / bare SimPy with the same mix: {per_model / per_mix:.2f}x")
    if args.mix:
        per_tx = {name: count / args.transactions
                  for name, count in sorted(event_mix(args.transactions, args.seed).items())}
        print("model's events per transaction: "
              + ", ".join(f"{name} {count:.1f}" for name, count in per_tx.items()))
    if args.digest and not args.mix:
        print(f"digest {digest}")


if __name__ == "__main__":
    main()
