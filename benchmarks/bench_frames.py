"""Benchmark: frames from a streamed log file — wall time and peak RSS, this checkout beside
another one, the frames checked identical.

Run:  python benchmarks/bench_frames.py LOG [LOG ...] [--baseline CHECKOUT]
                                        [--what transactions|metrics] [--repeat R]

For each log file (a canonical JSON-lines event log, e.g. from ``clearing-sim workload FILE
--log LOG --stream``) and each checkout (``--baseline`` first, then this one), a fresh child
process with that checkout first on its path imports the analysis code, then builds from the
file, with ``frames_from_jsonl``:

- ``transactions``: the ``transactions`` frame alone;
- ``metrics``: the three frames the metrics need (``transactions``, ``deliveries``,
  ``subscriptions``) and ``run_metrics`` of them (what ``clearing-sim workload --stream``
  builds after its run).

The child reports the CPU seconds (user + system) and wall seconds of the building (on a
shared machine the CPU time is the steadier figure), its peak RSS (``resource.getrusage``:
the whole process, the imports included), its RSS before the building (the imports' floor)
and each frame's size (``memory_usage(deep=True)``); it pickles what it built, and this
process checks the two checkouts' frames (and metrics) equal, dtypes included
(``pd.testing.assert_frame_equal``). With ``--repeat R`` each child runs R times (fresh
processes, alternating) and the least CPU time is shown, with the largest peak RSS, then
every run's spread (CPU, peak RSS, the imports' floor).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
METRIC_FRAMES = ("transactions", "deliveries", "subscriptions")


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def child(log: str, what: str, out: str) -> None:
    """In a fresh process: build, measure, pickle what was built to ``out``, print JSON."""
    import pandas as pd

    import clearing_sim
    from clearing_sim.analysis.frames import frames_from_jsonl
    from clearing_sim.analysis.metrics import run_metrics

    pd.Series([1.0, None], dtype="Int64").astype("float64")  # warm pandas' lazy imports
    floor = _rss_bytes()
    start, cpu = time.perf_counter(), _cpu_seconds()
    names = ("transactions",) if what == "transactions" else METRIC_FRAMES
    frames = frames_from_jsonl(log, names)
    metrics = run_metrics(frames) if what == "metrics" else None
    wall, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    peak = _rss_bytes()
    built: dict[str, Any] = {name: frames[name] for name in names}
    if metrics is not None:
        built["metrics"] = metrics
    with open(out, "wb") as target:
        pickle.dump(built, target, protocol=pickle.HIGHEST_PROTOCOL)
    sizes = {name: int(frame.memory_usage(deep=True).sum()) for name, frame in built.items()}
    print(json.dumps({"wall": wall, "cpu": cpu, "peak": peak, "floor": floor, "sizes": sizes,
                      "rows": len(frames["transactions"]),
                      "code": str(Path(clearing_sim.__file__).parent.parent)}))


def measure(checkout: Path, log: str, what: str, out: str) -> dict[str, Any]:
    """One child's figures. A child's peak RSS starts from its parent's at the fork, so this
    process never loads a frame itself (the comparison runs in a child too)."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, str(HERE / "bench_frames.py"), "--child", log,
                           "--what", what, "--out", out], env=env, check=True,
                          capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(result["code"]).resolve() == checkout.resolve(), (result["code"], checkout)
    return result


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The least CPU time and the largest peak RSS of the runs, with their spreads."""
    fastest = min(runs, key=lambda r: r["cpu"])
    return {**fastest, "peak": max(r["peak"] for r in runs),
            "cpus": sorted(r["cpu"] for r in runs), "peaks": sorted(r["peak"] for r in runs),
            "floors": sorted(r["floor"] for r in runs)}


def compare(before: str, after: str) -> str:
    """Frames equal, dtypes included; a column that became ``category`` (on purpose) is
    compared after conversion back to the dtype it had, and named."""
    import pandas as pd

    with open(before, "rb") as a, open(after, "rb") as b:
        old, new = pickle.load(a), pickle.load(b)
    assert old.keys() == new.keys(), (old.keys(), new.keys())
    converted: list[str] = []
    for name in old:
        frame = new[name].copy()
        for column in frame.columns:
            was = old[name][column].dtype if column in old[name] else None
            if was is not None and isinstance(frame[column].dtype, pd.CategoricalDtype) \
                    and not isinstance(was, pd.CategoricalDtype):
                frame[column] = frame[column].astype(was)
                converted.append(f"{name}.{column}")
        pd.testing.assert_frame_equal(old[name], frame, check_exact=True)
    if not converted:
        return "identical (values and dtypes): " + ", ".join(old)
    return (f"identical values ({', '.join(old)}); dtypes identical but {len(converted)} "
            f"columns now category, equal after conversion back: {', '.join(converted)}")


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def report(label: str, r: dict[str, Any]) -> str:
    sizes = ", ".join(f"{name} {mib(size)}" for name, size in r["sizes"].items())
    line = (f"  {label:<8} {r['cpu']:7.2f} s CPU ({r['wall']:6.2f} s wall)"
            f"   peak RSS {mib(r['peak']):>9}"
            f"   (imports {mib(r['floor'])}, building +{mib(r['peak'] - r['floor'])})"
            f"   frames: {sizes}")
    if len(r["cpus"]) == 1:
        return line
    return (line + f"\n  {'':<8} {len(r['cpus'])} runs: CPU {r['cpus'][0]:.2f}-"
            f"{r['cpus'][-1]:.2f} s, peak RSS {r['peaks'][0] / 2**20:.1f}-"
            f"{r['peaks'][-1] / 2**20:.1f} MiB, imports {r['floors'][0] / 2**20:.1f}-"
            f"{r['floors'][-1] / 2**20:.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument("--what", choices=("transactions", "metrics"), default="transactions")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--compare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.logs[0], args.what, args.out)
        return
    if args.compare:
        print(compare(str(Path(args.out, "before.pickle")), str(Path(args.out, "after.pickle"))))
        return
    this = HERE.parent
    checkouts = ([("before", args.baseline)] if args.baseline else []) + [("after", this)]
    with tempfile.TemporaryDirectory() as folder:
        for log in args.logs:
            size = Path(log).stat().st_size
            print(f"{log} ({size / 1e9:.2f} GB), {args.what}:")
            runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in checkouts}
            for _ in range(args.repeat):
                for label, checkout in checkouts:
                    out = str(Path(folder, f"{label}.pickle"))
                    runs[label].append(measure(checkout, log, args.what, out))
            results = {label: best(found) for label, found in runs.items()}
            print(f"  {results['after']['rows']:,} transactions")
            for label, result in results.items():
                print(report(label, result))
            if args.baseline:
                old, new = results["before"], results["after"]
                print(f"  after / before: CPU time {new['cpu'] / old['cpu']:.2f}x, wall "
                      f"{new['wall'] / old['wall']:.2f}x, peak RSS "
                      f"{new['peak'] / old['peak']:.2f}x, building's RSS "
                      f"{(new['peak'] - new['floor']) / (old['peak'] - old['floor']):.2f}x")
                done = subprocess.run(  # in a child: this process stays small (see measure)
                    [sys.executable, str(HERE / "bench_frames.py"), "--compare", log,
                     "--out", folder], check=True, capture_output=True, text=True)
                print("  " + done.stdout.strip())


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    if "--child" not in sys.argv and "--compare" not in sys.argv:
        print(f"({time.perf_counter() - start:.0f} s in all)")
