"""Benchmark: the CPU time of loading every file of ``scenarios/``, paired (issue 30 §3).

Run:  python benchmarks/bench_load.py [--against OTHER_CHECKOUT] [--pairs N] [--reps R]

Each side runs in its own process, with ``PYTHONPATH`` and the working folder set to its
checkout (this one, and ``--against`` if given), one after the other, N times: each process
loads every file once to warm up, then R times, and answers the median of the R process-CPU
times. Printed: each pair, then the medians of each side and the median of the pairs'
ratios (this checkout / the other). On a shared machine the single figures move with the
load; the pairs' ratio moves less. A benchmark, never a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
_ONE_SIDE = """
import statistics, sys, time
from clearing_sim.scenario.loader import collect, load_scenario
def load_all():
    return [load_scenario(found) for found in collect(("scenarios",))]
load_all()
times = []
for _ in range(int(sys.argv[1])):
    start = time.process_time()
    load_all()
    times.append(time.process_time() - start)
print(statistics.median(times))
"""


def _one_side(checkout: Path, reps: int) -> float:
    """The median CPU seconds of one load of ``scenarios/`` in ``checkout``, in a process."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", _ONE_SIDE, str(reps)], cwd=checkout, env=env,
                          check=True, capture_output=True, text=True)
    return float(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout, to pair with this one")
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    ours, theirs = [], []
    for _ in range(args.pairs):
        if args.against is not None:
            theirs.append(_one_side(args.against.resolve(), args.reps))
        ours.append(_one_side(HERE, args.reps))
        pair = f" against {theirs[-1] * 1000:.1f} ms" if theirs else ""
        print(f"this checkout {ours[-1] * 1000:.1f} ms{pair}")
    print(f"median: this checkout {statistics.median(ours) * 1000:.1f} ms")
    if theirs:
        ratio = statistics.median(o / t for o, t in zip(ours, theirs, strict=True))
        print(f"median: the other {statistics.median(theirs) * 1000:.1f} ms; "
              f"median ratio of the pairs {ratio:.2f}")


if __name__ == "__main__":
    main()
