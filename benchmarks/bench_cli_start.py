"""The whole ``clearing-sim run scenarios/`` process, paired against another checkout (issue 30 §3).

Each figure is a whole process, timed from outside (wall: a monotonic clock around the
child; CPU: the child's own user + system time from ``wait4``), one warm-up each, then the
commands in turn, A B A B ..., and the ratio A/B taken pair by pair, so the ratio holds when
the machine's speed drifts. Both checkouts are byte-compiled first (``compileall``): a
machine that sets ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module at every
start, which is not what a user's installed package does.

Besides the pair, the same rounds time what the process cannot do without: Python starting
(``python -c pass``), the third-party packages the engine imports (click, SimPy, PyYAML,
attrs, msgspec), and the engine's whole import; so the report says how much of the command
is left to the engine's own work.

    git worktree add ../old <rev>
    python benchmarks/bench_cli_start.py --against ../old --pairs 9
    python benchmarks/bench_cli_start.py --against ../old --jobs 1    # one process each
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FLOOR = "import attrs, click, simpy, yaml, msgspec, hashlib, decimal, json"
#: what ``run`` imports, as it imports it: with the collector off (``commands.collector``)
ENGINE = ("import gc; gc.disable(); import clearing_sim.cli, clearing_sim.scenario.batch, "
          "clearing_sim.scenario.runner, clearing_sim.scenario.reports")


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process, its output thrown away."""
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    env.pop("FORCE_COLOR", None)
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} in {cwd} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def quartiles(values: list[float]) -> str:
    if len(values) < 2:
        return f"{values[0]:.3f}"
    low, mid, high = statistics.quantiles(values, n=4)
    return f"{mid:.3f} (quartiles {low:.3f}-{high:.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True,
                        help="another checkout of clearing_sim (the B side)")
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--jobs", default=None,
                        help="pass -j JOBS to this checkout's run (the B side takes none)")
    parser.add_argument("folder", nargs="?", default="scenarios/")
    args = parser.parse_args()
    other = args.against.resolve()
    for checkout in (ROOT, other):
        compileall.compile_dir(checkout / "clearing_sim", quiet=1)
    python = sys.executable
    run = [python, "-m", "clearing_sim", "run", args.folder]
    mine = [*run, "-j", args.jobs] if args.jobs else run
    rows: dict[str, list[tuple[float, float]]] = {k: [] for k in
                                                  ("A", "B", "python", "floor", "engine")}
    for side in (mine, run):  # warm-up
        timed(side, ROOT if side is mine else other)
    for _ in range(args.pairs):
        rows["A"].append(timed(mine, ROOT))
        rows["B"].append(timed(run, other))
        rows["python"].append(timed([python, "-c", "pass"], ROOT))
        rows["floor"].append(timed([python, "-c", FLOOR], ROOT))
        rows["engine"].append(timed([python, "-c", ENGINE], ROOT))
    print(f"{' '.join(mine[1:])}: A = {ROOT}, B = {other}; {args.pairs} pairs; "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    labels = {"A": "A: this checkout", "B": "B: the other checkout",
              "python": "python -c pass", "floor": "the third-party imports",
              "engine": "this checkout's engine import"}
    for key, label in labels.items():
        walls = [w for w, _ in rows[key]]
        cpus = [c for _, c in rows[key]]
        print(f"{label:32s} wall {quartiles(walls)}  cpu {quartiles(cpus)}")
    for index, name in ((0, "wall"), (1, "cpu")):
        ratios = [a[index] / b[index] for a, b in zip(rows["A"], rows["B"], strict=True)]
        print(f"A/B {name:4s} {quartiles(ratios)}")


if __name__ == "__main__":
    main()
