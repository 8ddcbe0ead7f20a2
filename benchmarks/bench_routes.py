"""Benchmark: what ``GET /api/v1/system/status`` and a one-transaction list cost as history grows.

Run:  python benchmarks/bench_routes.py [--records N [N ...]] [--calls C] [--seed S]

Not a timed test: it reports (issue 30, section 2: "status and a one-transaction list at 1k
and at 1M records within 2x of each other"). For each size N it builds a world holding at
least N log records, quickly: Poisson redeems of the example cast (funded for the run) run
to the end on virtual time, no API in the way; then Southbank, a second member, initiates
one redeem and it settles. A ``ServiceAPI`` then answers, in process, C calls of

- ``GET /api/v1/system/status`` (Northbank's key), and
- ``GET /api/v1/transactions`` (Southbank's key: its one transaction),

and prints the median and p90 of each call's wall time, beside what the same answers cost
computed the old way: the latency walk back over the log (``recent_latency_ms``, the
definition the running figures are tested against) plus the parked count over every
transaction, and the list's scan over every transaction. The last line gives each route's
median at the largest size over its median at the smallest. A million records take a few
minutes to build (about 32,000 redeems).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from decimal import Decimal

from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request
from clearing_sim.sim.examples import example_world, redeem
from clearing_sim.sim.gauges import recent_latency_ms
from clearing_sim.sim.workload import poisson_redeems
from clearing_sim.sim.world import World

RECORDS_PER_REDEEM = 31  # about: the log's records per settled redeem


def build(records: int, seed: int) -> tuple[World, ServiceAPI, str, str, str]:
    """A world of at least ``records`` records; its API, two keys and the lone member's id."""
    cast = example_world(seed)
    world = cast.world
    count = max(1, records // RECORDS_PER_REDEEM)
    for mode in (1, 2, 3):  # enough in the wallet for every redeem (10.00 each)
        world.fund(cast.member, cast.asset(mode), Decimal(10 * count))
    world.env.process(poisson_redeems(cast, count, mean_gap_ms=200))
    world.run_all()
    other = world.add_member("Southbank", Decimal("0.00"), {cast.asset(2): Decimal("100.00")})
    world.initiate(other.id, redeem(cast.asset(2), "10.00", "ONE-1"))
    world.run_all()
    started = time.perf_counter()
    api = ServiceAPI(world)  # made after the history: reads it once for the running figures
    print(f"  the API made on {len(world.log):,} records in "
          f"{(time.perf_counter() - started) * 1e3:.1f} ms (its figures read them once)")
    member_key = api.credentials.issue_api_key(cast.member.id)[1]
    other_key = api.credentials.issue_api_key(other.id)[1]
    return world, api, member_key, other_key, other.id


def timed(call: Callable[[], object], calls: int) -> list[float]:
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return seconds


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1e3:9.3f} ms  p90 {p90 * 1e3:9.3f} ms"


def measure(records: int, calls: int, seed: int) -> dict[str, float]:
    started = time.perf_counter()
    world, api, member_key, other_key, other_id = build(records, seed)
    print(f"\n{len(world.log):,} records, {len(world.transactions):,} transactions "
          f"(built in {time.perf_counter() - started:.1f} s)")

    def status() -> None:
        response = api.handle(Request.build("GET", "/api/v1/system/status", token=member_key))
        assert response.status == 200, response.body

    def listing() -> None:
        response = api.handle(Request.build("GET", "/api/v1/transactions", token=other_key))
        assert response.status == 200 and len(response.json()["data"]) == 1, response.body

    def status_walked() -> None:
        records_now = world.log.select()
        recent_latency_ms(records_now, "ledger.")
        recent_latency_ms(records_now, "rtgs.")
        sum(1 for tx in world.transactions if tx.parked)

    def listing_scanned() -> None:
        [tx for tx in world.transactions if other_id in tx.audience][::-1]

    figures = {}
    old_calls = max(3, calls // 20)
    for name, call, n in (("status", status, calls), ("status, old walk", status_walked,
                                                       old_calls),
                          ("list (1 transaction)", listing, calls),
                          ("list, old scan", listing_scanned, old_calls)):
        call()  # warm
        samples = timed(call, n)
        figures[name] = statistics.median(samples)
        print(f"  {name:<22} {_ms(samples)}  ({n} calls)")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[1_000, 1_000_000])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = sorted(args.records)
    results = [measure(n, args.calls, args.seed) for n in sizes]
    if len(results) > 1:
        first, last = results[0], results[-1]
        print(f"\nlargest / smallest world, median per call: "
              f"status {last['status'] / first['status']:.2f}x, "
              f"list {last['list (1 transaction)'] / first['list (1 transaction)']:.2f}x "
              f"(target: within 2x); the old ways "
              f"{last['status, old walk'] / first['status, old walk']:.0f}x and "
              f"{last['list, old scan'] / first['list, old scan']:.0f}x")


if __name__ == "__main__":
    main()
