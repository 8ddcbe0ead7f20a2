"""Benchmark: the CPU of playing every scenario file, this checkout beside another (issue 30 §3).

Run:  python benchmarks/bench_scenario_play.py --baseline DIR [--rounds R] [--path scenarios]
      python benchmarks/bench_scenario_play.py --baseline DIR --instructions

Not a timed test: it reports. The files are loaded once per process; what is measured is
``scenario.runner.play`` of each loaded scenario, in process, after a warm-up round (the
CPU seconds of ``clearing-sim run`` left once Python has started, imported and read the
files). Two worker processes, one per checkout (``PYTHONPATH`` the checkout, so its engine
and runner run), take turns on the same machine, A B B A A B...: each round's CPU seconds
(``time.process_time``), then the median of each and of the paired ratios. Both must give
the same results and digests (checked every round: a fingerprint of every result's repr and
every log's digest).

``--instructions`` instead counts instructions under ``valgrind --tool=callgrind`` (the same
count for the same code whatever else the machine does): one process per checkout playing
every file once after the warm-up, another three times; half the difference is one play.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
THIS = HERE.parent


def worker(path: str, plays: int | None) -> None:
    """Load ``path``, play everything once, then one round per line read from stdin
    (``plays``: that many rounds at once, no output: the callgrind count)."""
    import clearing_sim
    from clearing_sim.scenario.loader import load_scenario
    from clearing_sim.scenario.runner import play

    files = sorted(p for p in Path(path).iterdir() if p.suffix in (".yaml", ".yml"))
    scenarios = [load_scenario(file) for file in files]
    for scenario in scenarios:
        play(scenario)
    if plays is not None:
        for _ in range(plays):
            for scenario in scenarios:
                play(scenario)
        return
    print("ready", Path(clearing_sim.__file__).resolve().parent.parent, flush=True)
    for _ in sys.stdin:
        fingerprint = hashlib.sha256()
        started = time.process_time()
        results = [play(scenario)[0] for scenario in scenarios]
        spent = time.process_time() - started
        for result in results:
            fingerprint.update(repr(result).encode())
        print(spent, fingerprint.hexdigest(), flush=True)


def _env(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}


def paired(checkouts: dict[str, Path], path: str, rounds: int) -> None:
    workers = {}
    for label, checkout in checkouts.items():
        workers[label] = subprocess.Popen(
            [sys.executable, __file__, "--worker", path], cwd=THIS, env=_env(checkout),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert workers[label].stdout is not None
        ready, code = workers[label].stdout.readline().split()
        assert ready == "ready" and Path(code) == checkout.resolve(), (label, code)
    spent: dict[str, list[float]] = {label: [] for label in checkouts}
    labels = list(checkouts)
    for n in range(rounds):
        prints = set()
        for label in labels if n % 2 == 0 else reversed(labels):
            proc = workers[label]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
            seconds, fingerprint = proc.stdout.readline().split()
            spent[label].append(float(seconds))
            prints.add(fingerprint)
        assert len(prints) == 1, f"round {n}: the checkouts' results differ"
    for proc in workers.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    for label in labels:
        times = spent[label]
        print(f"{label:>8}: median {statistics.median(times) * 1000:.1f} ms CPU "
              f"(min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}) over {rounds} rounds")
    if len(labels) == 2:
        before, after = spent[labels[0]], spent[labels[1]]
        ratios = sorted(b / a for a, b in zip(before, after, strict=True))
        print(f"after / before: {statistics.median(after) / statistics.median(before):.3f} "
              f"(medians); paired ratios: median {statistics.median(ratios):.3f}, "
              f"range {ratios[0]:.3f}-{ratios[-1]:.3f}; the same results every round")


def instructions(checkout: Path, path: str) -> int:
    counts = []
    for plays in (1, 3):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                 sys.executable, __file__, "--worker", path, "--plays", str(plays)],
                cwd=THIS, env=_env(checkout), capture_output=True, text=True, check=True)
        found = re.search(r"Collected : (\d+)", out.stderr)
        assert found is not None, out.stderr[-2000:]
        counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) // 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--path", default="scenarios", help="the files (from the checkout)")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--plays", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.plays)
        return
    checkouts = ({"before": args.baseline.resolve()} if args.baseline else {}) | {"after": THIS}
    if args.instructions:
        found = {label: instructions(checkout, args.path)
                 for label, checkout in checkouts.items()}
        for label, count in found.items():
            print(f"{label:>8}: {count:,} instructions per play of {args.path}")
        if len(found) == 2:
            print(f"after / before: {found['after'] / found['before']:.3f}")
        return
    paired(checkouts, args.path, args.rounds)


if __name__ == "__main__":
    main()
