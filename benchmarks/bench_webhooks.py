"""Benchmark: the 72-hour webhook disable on virtual time, against a healthy receiver, in one run.

Run:  python benchmarks/bench_webhooks.py [--hours H] [--gap-min M] [--seed S] [--repeat R]

One member subscribes to all six event types; a redeem starts every ``--gap-min`` virtual
minutes (modes 1, 2, 3 in turn) for ``--hours`` virtual hours, so events keep coming. Three
worlds run the same workload: the receiver down for good (503, so the subscription is
disabled 72 h after its first failure and nothing more is sent), a healthy receiver (the
default: 200 after a short latency) and no subscription at all (the engine alone). For each
the wall time (best of R), the virtual hours covered, the webhook attempts and arrivals and
the log size are printed, and for the first the virtual time of the disable.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Generator
from typing import Any

import simpy

from clearing_sim.domain.lifecycle import EventType
from clearing_sim.sim.examples import Cast, example_world, redeem
from clearing_sim.sim.receivers import ReceiverBehaviour

URL = "https://hooks.northbank.example/clearing"
HOUR_MS = 3_600_000


def _workload(cast: Cast, gap_ms: int, end_ms: int) -> Generator[simpy.Event, Any, None]:
    world, i = cast.world, 0
    while world.now_ms + gap_ms <= end_ms:
        yield world.env.timeout(gap_ms)
        mode = 1 + i % 3
        world.initiate(cast.member.id, redeem(cast.asset(mode), "10.00", f"BW-{i:05d}"))
        i += 1


def run(kind: str, hours: int, gap_ms: int, seed: int) -> dict[str, Any]:
    cast = example_world(seed)
    world = cast.world
    if kind != "none":
        world.subscriptions.create(cast.member.id, URL, tuple(EventType))
    if kind == "down":
        world.webhooks.set_receiver(URL, ReceiverBehaviour.failing(503))
    end_ms = hours * HOUR_MS
    world.env.process(_workload(cast, gap_ms, end_ms))
    start = time.perf_counter()
    world.run_until(end_ms)
    wall = time.perf_counter() - start
    disabled = world.log.select("webhook.disabled")
    return {"kind": kind, "wall": wall, "virtual_h": world.now_ms / HOUR_MS,
            "transactions": len(world.transactions),
            "events": len(world.webhooks.events),
            "attempts": len(world.log.select("webhook.attempt")),
            "arrivals": len(world.log.select("webhook.arrival")),
            "records": len(world.log), "digest": world.log.digest(),
            "disabled_h": disabled[0].at_ms / HOUR_MS if disabled else None,
            "failing_since_h": (int(str(disabled[0]["failingSinceMs"])) / HOUR_MS
                                if disabled else None)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=int, default=80)
    parser.add_argument("--gap-min", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    gap_ms = args.gap_min * 60_000
    results = {}
    for kind in ("down", "healthy", "none"):
        runs = [run(kind, args.hours, gap_ms, args.seed) for _ in range(args.repeat)]
        assert len({r["digest"] for r in runs}) == 1, f"{kind}: runs of one seed differ"
        results[kind] = min(runs, key=lambda r: r["wall"])
    down = results["down"]
    assert down["disabled_h"] is not None, "the subscription was not disabled: run longer"
    print(f"workload: a redeem every {args.gap_min} virtual min for {args.hours} virtual h, "
          f"seed {args.seed}, best of {args.repeat}")
    for kind, label in (("down", "receiver down (72-h disable)"),
                        ("healthy", "healthy receiver (baseline)"),
                        ("none", "no subscription (engine alone)")):
        r = results[kind]
        print(f"{label:32} {r['wall']:.3f} s wall for {r['virtual_h']:.0f} virtual h: "
              f"{r['transactions']} tx, {r['events']} events, {r['attempts']} attempts, "
              f"{r['arrivals']} arrivals, {r['records']} log records")
    print(f"disabled at {down['disabled_h']:.3f} virtual h (streak from "
          f"{down['failing_since_h']:.3f} h); virtual hours per wall second: "
          f"{down['virtual_h'] / down['wall']:,.0f}")
    print(f"72-h disable run / healthy baseline wall time: "
          f"{down['wall'] / results['healthy']['wall']:.2f}x")


if __name__ == "__main__":
    main()
