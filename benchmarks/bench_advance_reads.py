"""Reads and writes during a long advance (issue 31 §3), on a served world.

The world of the finding: 6,000 redeems initiated over HTTP, 15 webhook subscriptions whose
simulated receivers answer 500 for ever (so five days of the 38-hour retry schedule and the
72-hour disables run inside the advance), then one 5-day advance. While it runs, ``--readers``
connections loop on ``GET /api/v1/transactions/{id}`` (a member's read of one of its
transactions) and ``GET /sim/v1/clock``, and one writer initiates a redeem once a second.

Printed: the advance's wall time; every read's latency (p50, p95, p99, max; the target is a
p99 under 100 ms); each write's answer (201 once the advance is over, or 409
``clock_advancing`` after its bounded wait) and how long it took; the machine's share: a
bare ``asyncio.sleep`` probe's lateness in this client process beside the reads, and
``os.getloadavg()``; and the same reads against the same world with no advance running
(``--idle`` seconds before and after it), the floor that the machine and the read set. Run::

    python benchmarks/bench_advance_reads.py [--transactions 6000] [--days 5] [--readers 4]

Never a timed test: a figure of one machine at one moment (docs/http.md quotes it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from served import redeem_cast, start

TOKEN = "bench-operator-token"
OP = {"Authorization": f"Bearer {TOKEN}"}
_PROBE_S = 0.005


async def _initiate(http: httpx.AsyncClient, auth: dict[str, str], body: dict[str, Any],
                    count: int, connections: int = 16) -> list[str]:
    ids: list[str] = []
    queue = iter(range(count))

    async def one() -> None:
        for n in queue:
            answer = await http.post("/api/v1/transactions",
                                     headers={**auth, "Idempotency-Key": f"b-{n}"},
                                     json={**body, "paymentReference": f"B-{n}"})
            answer.raise_for_status()
            ids.append(answer.json()["data"]["id"])

    await asyncio.gather(*(one() for _ in range(connections)))
    return ids


async def _subscribe(http: httpx.AsyncClient, auth: dict[str, str], count: int) -> None:
    for n in range(count):
        url = f"https://hooks{n}.failing.example/h"
        answer = await http.put("/sim/v1/receivers", headers=OP, json={"url": url, "status": 500})
        answer.raise_for_status()
        answer = await http.post("/api/v1/webhooks", headers=auth, json={
            "url": url, "events": ["transaction.received", "transaction.in_flight",
                                   "transaction.settled"]})
        answer.raise_for_status()


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _figures(latencies: list[float]) -> dict[str, float]:
    return {name: round(1000 * _percentile(latencies, share), 1)
            for name, share in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))}


async def _jitter(done: asyncio.Event, lateness: list[float]) -> None:
    """The machine's share: how late a bare ``asyncio.sleep`` of this (client) process wakes,
    with no server work in it; on an idle machine well under a millisecond."""
    while not done.is_set():
        started = time.perf_counter()
        await asyncio.sleep(_PROBE_S)
        lateness.append(time.perf_counter() - started - _PROBE_S)


async def _reads(http: httpx.AsyncClient, auth: dict[str, str], ids: list[str], readers: int,
                 done: asyncio.Event, reads: list[float]) -> None:
    async def reader(n: int) -> None:
        k = n
        while not done.is_set():
            k += readers
            started = time.perf_counter()
            if k % 2:
                answer = await http.get(f"/api/v1/transactions/{ids[k % len(ids)]}",
                                        headers=auth)
            else:
                answer = await http.get("/sim/v1/clock", headers=OP)
            answer.raise_for_status()
            reads.append(time.perf_counter() - started)

    await asyncio.gather(*(reader(n) for n in range(readers)))


async def _idle(http: httpx.AsyncClient, auth: dict[str, str], ids: list[str], readers: int,
                seconds: float) -> dict[str, Any]:
    """The same reads against the same world with no advance running: the floor that the
    machine and the read itself set."""
    reads: list[float] = []
    lateness: list[float] = []
    done = asyncio.Event()
    tasks = [asyncio.create_task(_reads(http, auth, ids, readers, done, reads)),
             asyncio.create_task(_jitter(done, lateness))]
    await asyncio.sleep(seconds)
    done.set()
    await asyncio.gather(*tasks)
    return {"reads": len(reads), "read_ms": _figures(reads),
            "probe_late_ms": _figures(lateness), "loadavg": os.getloadavg()}


async def _during(base: str, auth: dict[str, str], body: dict[str, Any], ids: list[str],
                  days: float, readers: int, idle_s: float) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=readers + 4)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as http:
        before = await _idle(http, auth, ids, readers, idle_s)
        reads: list[float] = []
        lateness: list[float] = []
        writes: list[tuple[int, float]] = []
        done = asyncio.Event()

        async def writer() -> None:
            n = 0
            while not done.is_set():
                started = time.perf_counter()
                answer = await http.post("/api/v1/transactions",
                                         headers={**auth, "Idempotency-Key": f"w-{n}"},
                                         json={**body, "paymentReference": f"W-{n}"})
                writes.append((answer.status_code, time.perf_counter() - started))
                n += 1
                await asyncio.sleep(1.0)

        async def advance() -> float:
            started = time.perf_counter()
            answer = await http.post("/sim/v1/clock/advance", headers=OP,
                                     json={"seconds": days * 86_400})
            answer.raise_for_status()
            done.set()
            return time.perf_counter() - started

        load_before = os.getloadavg()
        tasks = [asyncio.create_task(_reads(http, auth, ids, readers, done, reads)),
                 asyncio.create_task(_jitter(done, lateness)), asyncio.create_task(writer())]
        await asyncio.sleep(0.2)  # the readers are reading before the advance starts
        wall_s = await advance()
        await asyncio.gather(*tasks)
        load_after = os.getloadavg()
        after = await _idle(http, auth, ids, readers, idle_s)
    return {"advance_wall_s": round(wall_s, 2), "reads": len(reads),
            "read_ms": _figures(reads),
            "read_ms_mean": round(1000 * statistics.fmean(reads), 1) if reads else None,
            "probe_late_ms": _figures(lateness),
            "loadavg": {"before": load_before, "after": load_after},
            "writes": [{"status": status, "ms": round(1000 * seconds, 1)}
                       for status, seconds in writes],
            "idle_before": before, "idle_after": after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=6000)
    parser.add_argument("--subscriptions", type=int, default=15)
    parser.add_argument("--days", type=float, default=5.0)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--idle", type=float, default=5.0,
                        help="seconds of the same reads with no advance, before and after")
    args = parser.parse_args()
    process, base = start([sys.executable, "-m", "clearing_sim", "serve", "--port", "0",
                           "--operator-token", TOKEN, "--seed", "1"])
    try:
        auth, body = redeem_cast(base, TOKEN)

        async def build() -> list[str]:
            async with httpx.AsyncClient(base_url=base, timeout=60) as http:
                await _subscribe(http, auth, args.subscriptions)
                return await _initiate(http, auth, body, args.transactions)

        started = time.perf_counter()
        ids = asyncio.run(build())
        built_s = time.perf_counter() - started
        figures = asyncio.run(_during(base, auth, body, ids, args.days, args.readers,
                                     args.idle))
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(json.dumps({"transactions": args.transactions, "subscriptions": args.subscriptions,
                      "days": args.days, "readers": args.readers,
                      "build_s": round(built_s, 1), **figures}, indent=1))


if __name__ == "__main__":
    main()
