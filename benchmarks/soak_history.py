"""Soak: a served world's memory per settled transaction, history on disk vs in memory.

Run:  python benchmarks/soak_history.py [--transactions N] [--batch B] [--connections C]
                                         [--read-seconds S] [--stop-by HH:MM]
                                         [--plot PNG] [--json FILE]

Not a timed test: it reports (issue 30 §1). Two ``clearing-sim serve`` processes (manual
clock, one uvicorn loop each) are driven the same way through HTTP: an issuer and a member
(``served.redeem_cast``), then batches of ``B`` redeems (each with its own
``Idempotency-Key``, ``C`` connections at once), each batch followed by an advance that
settles it (``--advance-seconds``, two hours by default). Idempotency entries are kept a
virtual day, so they count in the growth until the clock has moved a day past the first.
After every batch the server's resident memory (``VmRSS`` of
``/proc/PID/status``) is read. Growth per settled transaction is the least-squares slope
of RSS over settled transactions after warm-up (the first ``--warmup`` fraction of the
run): one server keeps its history in SQLite (the default), the other in memory
(``--history-in-memory``).

Then, both servers still up, GET latency on the history is measured on each, ``C``
connections, ``--read-seconds`` in all, in ``--rounds`` rounds whose order alternates (the
machine is shared: both see the same load): a member's ``GET /api/v1/transactions/{id}``
of settled transactions spread over the run, and ``GET /sim/v1/log?cursor=…&limit=100``
pages spread over the log.
Latency is wall time per request seen by the client (this process, a lean keep-alive
HTTP/1.1 client, ``_Connection``: httpx cost more CPU than the server), so both servers
pay the same client cost; p50 and p99 are printed, and the ratio disk / memory.

The RSS curves go to a PNG (``--plot``), the figures to JSON (``--json``); every ten
batches the curve so far goes to ``FILE.partial.json`` (a long run stopped early leaves it).
``--stop-by`` ends the soak at a wall time (UTC) short of ``--transactions``: the figures
are then those of the redeems settled by then.
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from served import redeem_cast, start

TOKEN = "soak-operator-token"
EXE = Path(sys.executable).with_name("clearing-sim")
OP = {"Authorization": f"Bearer {TOKEN}"}


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


class _Connection:
    """A lean HTTP/1.1 keep-alive client for the soak's requests: httpx spent ~5 ms of CPU per
    request, more than the server, on the same two cores (and held the reads to ~25 a
    second, too few for a p99). One request at a time on one connection; the answer read
    by its ``Content-Length``; a connection the server closed is opened again."""

    def __init__(self, base: str) -> None:
        host, port = base.removeprefix("http://").rstrip("/").split(":")
        self._host, self._port = host, int(port)
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def send(self, method: str, path: str, headers: dict[str, str],
                   body: bytes | None = None) -> tuple[int, bytes]:
        for attempt in range(3):  # a keep-alive connection the server closed: again,
            try:                  # safely (the same key replays the first answer)
                return await self._exchange(method, path, headers, body)
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _exchange(self, method: str, path: str, headers: dict[str, str],
                        body: bytes | None) -> tuple[int, bytes]:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self._host, self._port)
        reader, writer = self._streams
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        writer.write(f"{method} {path} HTTP/1.1\r\nHost: {self._host}\r\n{head}"
                     f"\r\n".encode() + (body or b""))
        await writer.drain()
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in
                  (line.partition(":") for line in lines[1:] if line)}
        answer = await reader.readexactly(int(fields["content-length"]))
        if fields.get("connection", "").lower() == "close":
            await self.close()
        return status, answer

    async def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


async def _batch(connections: list[_Connection], auth: dict[str, str], body: dict[str, Any],
                 first: int, count: int) -> list[str]:
    ids: list[str] = [""] * count
    queue = iter(range(count))
    payload = json.dumps(body).encode()

    async def worker(connection: _Connection) -> None:
        for i in queue:
            headers = {**auth, "Idempotency-Key": f"soak-{first + i}"}
            status, answer = await connection.send("POST", "/api/v1/transactions", headers,
                                                  payload)
            assert status == 201, answer
            ids[i] = json.loads(answer)["data"]["id"]

    await asyncio.gather(*(worker(connection) for connection in connections))
    return ids


async def soak(base: str, pid: int, args: argparse.Namespace) -> dict[str, Any]:
    auth, body = redeem_cast(base, TOKEN)
    limits = httpx.Limits(max_connections=args.connections)
    curve: list[tuple[int, int]] = [(0, rss_bytes(pid))]
    sample: list[str] = []
    connections = [_Connection(base) for _ in range(args.connections)]
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as http:
        done = 0
        started = time.perf_counter()
        while done < args.transactions and (args.stop_by is None or time.time() < args.stop_by):
            count = min(args.batch, args.transactions - done)
            ids = await _batch(connections, auth, body, done, count)
            sample.extend(ids[:: max(1, count // 20)])
            advance = await http.post("/sim/v1/clock/advance", headers=OP,
                                      json={"seconds": args.advance_seconds})
            assert advance.status_code == 200, advance.text
            done += count
            curve.append((done, rss_bytes(pid)))
            if len(curve) % 10 == 0:
                if args.json is not None:  # a checkpoint: a run stopped early leaves its curve
                    args.json.with_suffix(".partial.json").write_text(json.dumps(curve))
                print(f"  {done:>8} settled, RSS {curve[-1][1] / 2**20:7.1f} MiB, "
                      f"{time.perf_counter() - started:6.0f} s", flush=True)
        status = (await http.get(f"/api/v1/transactions/{sample[-1]}", headers=auth)).json()
        assert status["data"]["lifecycleStatus"] == "settled", status
        records = (await http.get("/sim/v1/digest", headers=OP)).json()["data"]["records"]
    for connection in connections:
        await connection.close()
    return {"curve": curve, "records": records, "reads": {}, "sample": sample, "auth": auth,
            "bytes_per_tx": _slope(curve, args.warmup),
            "soak_s": time.perf_counter() - started}


async def paired_reads(bases: dict[str, str], results: dict[str, dict[str, Any]],
                       args: argparse.Namespace) -> None:
    """The read measurement on every server, in ``--rounds`` rounds whose order alternates,
    so that both see the same load of the (shared) machine; latencies pooled per server."""
    pooled: dict[str, dict[str, list[float]]] = {store: {} for store in bases}
    for round_ in range(args.rounds):
        order = list(bases) if round_ % 2 == 0 else list(bases)[::-1]
        for store in order:
            r = results[store]
            connections = [_Connection(bases[store]) for _ in range(args.connections)]
            await _reads(connections, r["auth"], r["sample"], r["records"], args,
                         pooled[store])
            for connection in connections:
                await connection.close()
    for store, by_route in pooled.items():
        for name, latencies in by_route.items():
            latencies.sort()
            results[store]["reads"][name] = {
                "requests": len(latencies), "p50_ms": 1000 * latencies[len(latencies) // 2],
                "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)]}


async def _reads(connections: list[_Connection], auth: dict[str, str], sample: list[str],
                 records: int, args: argparse.Namespace,
                 into_by_route: dict[str, list[float]]) -> None:
    rng = random.Random(7)
    for name, target in (("GET /api/v1/transactions/{id}",
                          lambda: (f"/api/v1/transactions/{rng.choice(sample)}", auth)),
                         ("GET /sim/v1/log?cursor=&limit=100",
                          lambda: (f"/sim/v1/log?cursor={rng.randrange(records)}&limit=100",
                                   OP))):
        latencies = into_by_route.setdefault(name, [])
        deadline = time.perf_counter() + args.read_seconds / args.rounds

        async def reader(connection: _Connection, make: Any = target,
                         into: list[float] = latencies, until: float = deadline) -> None:
            while time.perf_counter() < until:
                path, headers = make()
                begun = time.perf_counter()
                status, answer = await connection.send("GET", path, headers)
                into.append(time.perf_counter() - begun)
                assert status == 200, answer

        await asyncio.gather(*(reader(connection) for connection in connections))


def _slope(curve: list[tuple[int, int]], warmup: float) -> float:
    """Least-squares bytes per settled transaction over the curve after warm-up."""
    points = [(x, y) for x, y in curve if x >= curve[-1][0] * warmup]
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else 0.0


def _plot(results: dict[str, dict[str, Any]], path: Path, args: argparse.Namespace) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(7, 4))
    for name, result in results.items():
        xs = [x for x, _ in result["curve"]]
        ys = [y / 2**20 for _, y in result["curve"]]
        axes.plot(xs, ys, label=f"{name}: {result['bytes_per_tx']:,.0f} B per settled tx")
    settled = max(result["curve"][-1][0] for result in results.values())
    axes.axvline(settled * args.warmup, color="grey", linestyle=":",
                 label="end of warm-up")
    axes.set_xlabel("settled redeems (through HTTP, clock advancing)")
    axes.set_ylabel("server RSS (MiB)")
    axes.set_title("clearing-sim serve: resident memory over a soak")
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def _utc(hhmm: str) -> float:
    """The epoch seconds of today's ``HH:MM`` UTC."""
    now = time.gmtime()
    hour, minute = map(int, hhmm.split(":"))
    return calendar.timegm((now.tm_year, now.tm_mon, now.tm_mday, hour, minute, 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--warmup", type=float, default=0.2)
    parser.add_argument("--advance-seconds", type=int, default=7200,
                        help="virtual seconds each batch's advance moves the clock (an "
                             "idempotency entry is kept a virtual day: a longer advance "
                             "reaches the steady state sooner)")
    parser.add_argument("--read-seconds", type=float, default=10.0,
                        help="seconds of reads per route and server, over all rounds")
    parser.add_argument("--rounds", type=int, default=4,
                        help="read rounds, their order alternating between the servers")
    parser.add_argument("--stores", default="disk,memory",
                        help="which servers to soak: disk, memory or both (comma-separated)")
    parser.add_argument("--stop-by", type=_utc, default=None, metavar="HH:MM",
                        help="end the soak at this UTC time (of today) even if short of "
                             "--transactions; the figures are those reached")
    parser.add_argument("--plot", type=Path, default=Path("benchmarks/results/soak_rss.png"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    processes, bases = [], {}
    try:
        for store in args.stores.split(","):
            extra = ["--history-in-memory"] if store == "memory" else []
            process, bases[store] = start([str(EXE), "serve", "--port", "0", "--seed", "1",
                                           "--operator-token", TOKEN, *extra])
            processes.append(process)
            print(f"{store}: soaking {args.transactions} redeems", flush=True)
            results[store] = asyncio.run(soak(bases[store], process.pid, args))
        asyncio.run(paired_reads(bases, results, args))
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
    settled = max(r["curve"][-1][0] for r in results.values())
    print(f"{settled} redeems in batches of {args.batch}, {args.connections} "
          f"connections, {os.cpu_count()} cores; growth after the first {args.warmup:.0%}")
    for store, r in results.items():
        print(f"{store:>7}: {r['bytes_per_tx']:>8,.0f} B per settled transaction, "
              f"RSS {r['curve'][0][1] / 2**20:.0f} -> {r['curve'][-1][1] / 2**20:.0f} MiB, "
              f"{r['records']:,} records, soak {r['soak_s']:.0f} s")
        for name, read in r["reads"].items():
            print(f"         {name:<36} p50 {read['p50_ms']:7.2f} ms  p99 {read['p99_ms']:7.2f}"
                  f" ms  ({read['requests']} requests)")
    if {"disk", "memory"} <= results.keys():
        for name in results["disk"]["reads"]:
            ratio = results["disk"]["reads"][name]["p99_ms"] / \
                results["memory"]["reads"][name]["p99_ms"]
            print(f"p99 disk / memory, {name}: {ratio:.2f}x")
    _plot(results, args.plot, args)
    if args.json is not None:
        for r in results.values():
            del r["auth"], r["sample"]
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
