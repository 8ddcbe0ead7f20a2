"""Benchmark: what the operator's paged lists cost as history grows (issue 30, section 2).

Run:  python benchmarks/bench_operator_routes.py [--records N [N ...]] [--calls C] [--seed S]

Not a timed test: it reports. For each size N it builds a world of at least N log records
whose history lives in SQLite as a served world's does (``clearing_sim.http.history``: the
log's store and the book's archive): Poisson redeems of the example cast, Northbank
subscribed to every event (its receiver answers 200), run to the end on virtual time. Then,
in process, C calls of each route handler (query read, page read, rows made; no HTTP):

- ``GET /sim/v1/deliveries`` (the first page, ``limit=100``; a subscription's, the same;
  one transaction's),
- ``GET /sim/v1/transactions?limit=1000`` (what the console asks each second) and with
  ``terminal=true`` (archived ones, on disk),

and prints the median and p90 of each, beside the same answers read the old way (every
attempt read and sorted; every transaction filtered, the archive decoded), fewer calls. The
last lines give each one's median at the largest size over its median at the smallest.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from bench_routes import RECORDS_PER_REDEEM, _ms, timed

from clearing_sim.domain.lifecycle import EventType
from clearing_sim.http import stories, views
from clearing_sim.http.history import History
from clearing_sim.sim.examples import example_world
from clearing_sim.sim.workload import poisson_redeems
from clearing_sim.sim.world import World
from clearing_sim.stories import delivery_log
from clearing_sim.stories.story import transaction_row


def build(records: int, seed: int) -> tuple[World, History, str]:
    """A world of at least ``records`` records, its history on disk; a subscription's id."""
    history = History()
    cast = example_world(seed, log_store=history.log, archive=history.archive)
    world = cast.world
    hook = world.subscriptions.create(cast.member.id, "https://hooks.example.com/in",
                                      tuple(EventType))
    count = max(1, records // (RECORDS_PER_REDEEM + 9))  # and about 9 webhook records
    for mode in (1, 2, 3):
        world.fund(cast.member, cast.asset(mode), Decimal(10 * count))
    world.env.process(poisson_redeems(cast, count, mean_gap_ms=200))
    world.run_all()
    return world, history, hook.id


def handler_call(world: World, handler: Any, query: dict[str, str]) -> Callable[[], Any]:
    """One call of an operator route's handler, as the door makes it (no HTTP)."""
    ctx = SimpleNamespace(world=world, query=query, request=SimpleNamespace(query=query))

    def call() -> Any:
        coroutine = handler(ctx)
        try:
            coroutine.send(None)
        except StopIteration as done:
            assert done.value.status == 200
            return done.value
        raise AssertionError("the handler waited")

    return call


def old_deliveries(world: World, subscription_id: str | None = None,
                   transaction_id: str | None = None) -> list[dict[str, Any]]:
    """The old reading: every event and attempt read, filtered, sorted, then sliced."""
    events = {r["eventId"]: r for r in world.log.select("webhook.event")}
    found = [(r["sentAtMs"], r.seq, r) for r in world.log.select("webhook.attempt")
             if (subscription_id is None or r["subscriptionId"] == subscription_id)
             and (transaction_id is None
                  or events[r["eventId"]]["transactionId"] == transaction_id)]
    found.sort(key=lambda a: (a[0], a[1]))
    return [delivery_log._attempt_wire(world, r, events[r["eventId"]]) for _, _, r in found[:100]]


def old_list(world: World, terminal: bool | None) -> list[dict[str, Any]]:
    """The old reading: every transaction filtered, then the page sliced."""
    found = [tx for tx in world.transactions if terminal is None or tx.terminal is terminal]
    return [transaction_row(world, tx) for tx in found[:1000]]


def measure(records: int, calls: int, seed: int) -> dict[str, float]:
    started = time.perf_counter()
    world, history, hook = build(records, seed)
    some_tx = next(iter(world.transactions)).id
    print(f"\n{len(world.log):,} records, {len(world.log.select('webhook.attempt')):,} "
          f"attempts, {len(world.transactions):,} transactions "
          f"(built in {time.perf_counter() - started:.1f} s)")
    new = {"deliveries": {"limit": "100"},
           "deliveries of a subscription": {"subscriptionId": hook, "limit": "100"},
           "deliveries of a transaction": {"transactionId": some_tx, "limit": "100"},
           "console list": {"limit": "1000"},
           "console list, terminal": {"terminal": "true", "limit": "1000"}}
    figures: dict[str, float] = {}
    for name, query in new.items():
        handler = stories.transactions if name.startswith("console") else views.deliveries
        call = handler_call(world, handler, query)
        call()  # warm (the deliveries index is made here, once)
        samples = timed(call, calls)
        figures[name] = statistics.median(samples)
        print(f"  {name:<34} {_ms(samples)}  ({calls} calls)")
    old_calls = max(3, calls // 20)
    old: dict[str, Callable[[], object]] = {
        "deliveries, old": lambda: old_deliveries(world),
        "deliveries of a subscription, old": lambda: old_deliveries(world, hook),
        "deliveries of a transaction, old": lambda: old_deliveries(world, None, some_tx),
        "console list, old": lambda: old_list(world, None),
        "console list, terminal, old": lambda: old_list(world, True)}
    for name, call in old.items():
        samples = timed(call, old_calls)
        figures[name] = statistics.median(samples)
        print(f"  {name:<34} {_ms(samples)}  ({old_calls} calls)")
    history.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[50_000, 400_000])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    results = [measure(n, args.calls, args.seed) for n in sorted(args.records)]
    if len(results) > 1:
        first, last = results[0], results[-1]
        print("\nlargest / smallest world, median per call:")
        for name in first:
            print(f"  {name:<34} {last[name] / first[name]:8.2f}x")


if __name__ == "__main__":
    main()
