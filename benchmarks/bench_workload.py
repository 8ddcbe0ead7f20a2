"""Benchmark: analysts' workloads — throughput next to bare SimPy, sweep speed-up, memory.

Run:  python benchmarks/bench_workload.py [--transactions N] [--repeat R] [--sweep-runs K]
                                          [--memory N1,N2,...] [--skip-throughput] [--skip-sweep]

1. Throughput: a mixed workload (redeems and swaps in a 4:1 mix, one issuer per settlement
   mode with small reject/fail/silence probabilities, log-normal amounts, one healthy webhook
   subscription; every initiation through ``ServiceAPI.handle``) on one core, sized to about N
   transactions. It reports transactions and SimPy events per wall-second of the simulation,
   then a bare SimPy loop of the same number of events (``bench_sagas.run_bare``) in the same
   process, and the ratio of cost per event; then the cost of the frames and metrics and of
   the digest. Best of R runs.
2. Sweep speed-up: K runs (one parameter set × K seeds of the same workload at N / 4
   transactions) with 1 worker (this process) and with 2 local worker processes, wall time
   including the pool's start-up; the results must be identical.
3. Memory: for each size in ``--memory``, a child process runs the workload as an analyst's
   in-memory run does (every log record and every transaction kept) and reports its peak RSS;
   the per-transaction slope between the two largest sizes gives an extrapolation to
   1,000,000 transactions. Then for each size in ``--stream-memory`` the same in a streamed
   run (``clearing-sim workload --log FILE --stream``: the log goes to a file on disk as the
   run goes, finished transactions are forgotten), which checks that the file's sha256 is the
   run's digest. ``--stream-memory 1000000`` is the issue's million-transaction run (about
   40 minutes, a 9 GB log in the temporary folder). See docs/analysis.md, "Memory".
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Run as a script: this checkout's engine, whatever the environment has installed (an
#: editable install of another checkout would otherwise answer ``import clearing_sim``, and a
#: run from a baseline checkout would measure the wrong engine); each child runs this file
#: again, so the same. Imported (``instructions.py --what stream --checkout DIR``), the
#: importer's path decides: inserting this checkout then measured it in place of DIR's.
if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attrs import evolve

from clearing_sim.analysis.driver import WorkloadDriver
from clearing_sim.analysis.frames import frames_from_log
from clearing_sim.analysis.loader import parse_workload
from clearing_sim.analysis.metrics import run_metrics
from clearing_sim.analysis.model import Arrivals, Workload
from clearing_sim.analysis.sweeps import sweep

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sagas import run_bare  # the engine benchmark's baseline, in this process

_PROFILE = """{commitPoint: %s, custodyModel: POOLED_ISSUER_WALLET, feedbackChannel: [%s],
              fiatLeg: NUVANTE_SETTLES_RTGS, ledger: %s%s}"""
WORKLOAD = f"""
workload: bench-mixed
horizon: 24h
issuers:
  stellarsterling:
    rtgs: "100000000000.00"
    assets: [GBPS]
    profile: {_PROFILE % ("ON_OBSERVATION", "POLLABLE_RESOURCE", "stellar", "")}
  etherpound:
    rtgs: "100000000000.00"
    assets: [GBPE]
    profile: {_PROFILE % ("ON_INSTRUCTION", "SIGNED_WEBHOOK", "evm",
                          ", preBurnTransferRequired: false, apiBaseUrl: 'https://i2.example/api',"
                          " webhookUrl: 'https://service.example/issuer-webhooks'")}
    behaviour: {{outcomes: {{rejected: 0.01, failed: 0.005, silence: 0.01}}}}
  solquid:
    rtgs: "100000000000.00"
    assets: [GBPQ]
    profile: {_PROFILE % ("ON_INSTRUCTION", "POLLABLE_RESOURCE", "solana",
                          ", preBurnTransferRequired: true, apiBaseUrl: 'https://i3.example/api'")}
    behaviour: {{outcomes: {{rejected: 0.01, failed: 0.005, silence: 0.01}}}}
members:
  northbank:
    wallets: {{GBPS: "100000000000.00", GBPE: "100000000000.00", GBPQ: "100000000000.00"}}
    arrivals: {{rate_per_hour: 100}}
    mix: {{redeem: 4, swap: 1}}
    amount: {{lognormal: {{median: "250.00", sigma: 1.0, min: "1.00", max: "250000.00"}}}}
webhooks:
  treasury:
    participant: northbank
    url: https://hooks.northbank.example/clearing
    events: [transaction.settled, transaction.parked, transaction.failed]
"""


def sized(transactions: int) -> Workload:
    """The mixed workload with a rate that gives about ``transactions`` in 24 virtual hours."""
    workload = parse_workload(WORKLOAD, "bench-mixed.yaml")
    member = evolve(workload.members[0], arrivals=Arrivals(transactions / 24))
    return evolve(workload, members=(member,))


def throughput(transactions: int, repeat: int) -> None:
    workload = sized(transactions)
    best = None
    for _ in range(repeat):
        driver = WorkloadDriver(workload, seed=0)
        start = time.perf_counter()
        world = driver.run()
        wall = time.perf_counter() - start
        events = next(world.env._eid)  # SimPy's event counter, read once after the run
        if best is None or wall < best[0]:
            best = (wall, events, world)
    assert best is not None
    wall, events, world = best
    n = len(world.transactions)
    start = time.perf_counter()
    frames = frames_from_log(world.log)
    run_metrics(frames)
    analysis = time.perf_counter() - start
    start = time.perf_counter()
    digest = world.log.digest()
    digest_s = time.perf_counter() - start
    bare = min(run_bare(events) for _ in range(repeat))
    per_model, per_bare = wall / events, bare / events
    print(f"workload: {n} transactions ({frames.transactions['use_case'].value_counts().to_dict()}"
          f"), {events} SimPy events, {len(world.log)} log records, "
          f"{len(frames.attempts)} webhook attempts")
    print(f"model: {wall:.3f} s wall, {n / wall:,.0f} tx/s, {events / wall:,.0f} events/s, "
          f"{per_model * 1e6:.2f} us/event")
    print(f"bare SimPy: {events} timeouts, {bare:.3f} s wall, {events / bare:,.0f} events/s, "
          f"{per_bare * 1e6:.2f} us/event")
    print(f"ratio (model cost per event / bare SimPy): {per_model / per_bare:.2f}x")
    print(f"frames + metrics: {analysis:.3f} s ({n / analysis:,.0f} tx/s); digest: {digest_s:.3f} s"
          f"; digest {digest}")


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def parallelism() -> float:
    """How much faster two CPU-bound processes finish than one after the other (2.0: two free
    cores; 1.0: one), so the sweep speed-up can be read against what the machine offers."""
    from concurrent.futures import ProcessPoolExecutor

    n = 5_000_000
    start = time.perf_counter()
    _burn(n)
    _burn(n)
    serial = time.perf_counter() - start
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_burn, [10, 10]))
        start = time.perf_counter()
        list(pool.map(_burn, [n, n]))
        parallel = time.perf_counter() - start
    return serial / parallel


def sweep_speedup(transactions: int, runs: int) -> None:
    print(f"machine: two CPU-bound processes run {parallelism():.2f}x faster than one after "
          "the other (2.00x = two free cores)")
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "w.yaml").write_text(WORKLOAD.replace("rate_per_hour: 100",
                                                           f"rate_per_hour: {transactions / 24}"))
        Path(folder, "s.yaml").write_text(f"sweep: bench\nworkload: w.yaml\nseeds: 0-{runs - 1}\n")
        walls = {}
        results = {}
        for workers in (1, 2):
            start = time.perf_counter()
            results[workers] = sweep(Path(folder, "s.yaml"), workers=workers)
            walls[workers] = time.perf_counter() - start
    assert results[1].digests == results[2].digests
    assert results[1].metrics.equals(results[2].metrics)
    print(f"sweep: {runs} runs of ~{transactions} transactions: 1 worker {walls[1]:.2f} s, "
          f"2 workers {walls[2]:.2f} s, speed-up {walls[1] / walls[2]:.2f}x "
          "(identical results and digests)")


def peak_rss() -> int:
    """This process's peak RSS in bytes: ``VmHWM`` (Linux; unlike ``ru_maxrss`` it is not
    inherited from the parent across ``exec``), else ``ru_maxrss``."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(transactions: int, stream: bool) -> None:
    """In a fresh process: run the workload (streamed: its log to a file in a temporary
    folder) and print its transactions, records, peak RSS in bytes, wall seconds and log size."""
    start = time.perf_counter()
    if not stream:
        driver = WorkloadDriver(sized(transactions), seed=0)
        world = driver.run()
        print(driver.initiated, len(world.log), peak_rss(), time.perf_counter() - start, 0)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "log.jsonl")
        with path.open("wb") as sink:
            driver = WorkloadDriver(sized(transactions), seed=0, log_sink=sink)
            world = driver.run()
        wall = time.perf_counter() - start
        rss = peak_rss()
        content = hashlib.sha256()  # the file is the canonical lines, each ended by "\n"
        size = path.stat().st_size
        with path.open("rb") as log:
            remaining = size - 1  # without the last line's "\n"
            while remaining > 0:
                chunk = log.read(min(1 << 20, remaining))
                content.update(chunk)
                remaining -= len(chunk)
        assert content.hexdigest() == world.log.digest(), "streamed file and digest differ"
        assert len(world.transactions) == 0, "a streamed run forgets finished transactions"
        print(driver.initiated, len(world.log), rss, wall, size)


def memory(sizes: list[int], stream: bool = False) -> None:
    label = "memory, streamed" if stream else "memory, in memory"
    points = []
    for size in sizes:
        command = [sys.executable, __file__, "--rss-child", str(size)]
        out = subprocess.run(command + (["--stream"] if stream else []), check=True,
                             capture_output=True, text=True).stdout.split()
        n, records, rss = int(out[0]), int(out[1]), int(out[2])
        wall, log_bytes = float(out[3]), int(out[4])
        points.append((n, rss))
        on_disk = f", log file {log_bytes / 1e9:,.2f} GB = digest" if stream else ""
        print(f"{label}: {n} transactions, {records} records in {wall:,.0f} s: peak RSS "
              f"{rss / 2**20:,.0f} MiB ({rss / n / 1024:,.2f} KiB per transaction, all in)"
              f"{on_disk}")
    if len(points) >= 2:
        (n1, r1), (n2, r2) = points[-2], points[-1]
        slope = (r2 - r1) / (n2 - n1)
        fixed = r2 - slope * n2
        million = fixed + slope * 1_000_000
        print(f"{label}: {slope / 1024:,.2f} KiB per extra transaction; extrapolated peak RSS at "
              f"1,000,000 transactions: {million / 2**30:,.1f} GiB (target < 1 GiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=4_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sweep-runs", type=int, default=8)
    parser.add_argument("--memory", default="5000,20000",
                        help="transaction counts for the RSS measurement ('' to skip)")
    parser.add_argument("--stream-memory", default="5000,50000",
                        help="transaction counts for the streamed run's RSS ('' to skip)")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--rss-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child is not None:
        child(args.rss_child, args.stream)
        return
    if not args.skip_throughput:
        throughput(args.transactions, args.repeat)
    if not args.skip_sweep:
        sweep_speedup(args.transactions // 4, args.sweep_runs)
    if args.memory:
        memory([int(n) for n in args.memory.split(",")])
    if args.stream_memory:
        memory([int(n) for n in args.stream_memory.split(",")], stream=True)


if __name__ == "__main__":
    main()
