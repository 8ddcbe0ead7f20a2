"""Benchmark: instructions per transaction, counted by callgrind (repeatable on a busy machine).

Run:  python benchmarks/instructions.py [--what model|digest|same|toy|stream]
                                        [--small N] [--large N] [--checkout DIR]

Wall-clock ratios on a shared 2-core machine move by 30 % from one run to the next; the
instructions a run executes do not (the same count for the same code, inputs and
environment, whatever else the machine is doing). This runs the chosen workload twice under
``valgrind --tool=callgrind`` in a child process, with ``--small`` and ``--large``
transactions, and prints the difference divided by the difference in transactions: the
instructions one more transaction costs, start-up and imports cancelled out.

- ``model``: ``bench_sagas.run_model`` (redeems, mixed modes, Poisson arrivals), no digest;
- ``digest``: the same, then the log's digest (canonical JSON of every record and sha256);
- ``same``: ``same_work.run_same_work``, the same-work baseline the headline ratio
  (model / same-work, issue 30 §4) compares against;
- ``toy``: ``bench_sagas.run_toy``, the toy saga the old ratio compared against;
- ``stream``: ``bench_workload``'s mixed workload (redeems and swaps through
  ``ServiceAPI.handle``, a webhook subscription) streamed to a log file, as
  ``clearing-sim workload --log FILE --stream`` runs it.

``--checkout DIR`` counts another checkout's engine (e.g. ``git worktree add --detach
/tmp/base main``) with this checkout's benchmark code: before and after, the same workload.
model / same-work by instructions is ``same``'s figure over ``model``'s (model / toy,
the old comparison, ``toy``'s over ``model``'s).
"""

from __future__ import annotations

import argparse
import os
import re
import site
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = """
import sys
sys.path[:0] = [{checkout!r}, {here!r}, *{site!r}]
what, n = {what!r}, {n}
if what in ("model", "digest"):
    from bench_sagas import run_model
    if what == "model":
        from clearing_sim.sim.examples import example_world
        from clearing_sim.sim.workload import poisson_redeems
        cast = example_world(0)
        cast.world.env.process(poisson_redeems(cast, n, mean_gap_ms=2_000))
        cast.world.run_all()
    else:
        run_model(n, 0)
elif what == "toy":
    from bench_sagas import run_toy
    run_toy(n, 0)
elif what == "same":
    from same_work import run_same_work
    run_same_work(n, 0)
else:
    import tempfile
    from pathlib import Path
    from bench_workload import sized
    from clearing_sim.analysis.driver import WorkloadDriver
    with tempfile.TemporaryDirectory() as folder:
        with Path(folder, "log.jsonl").open("wb") as sink:
            driver = WorkloadDriver(sized(n), seed=0, log_sink=sink)
            driver.run()
    print("initiated", driver.initiated)
"""


def count(what: str, n: int, checkout: str) -> tuple[int, int]:
    """Instructions callgrind collected for one child run, and its transaction count."""
    # valgrind starts the interpreter by its real path, outside a virtual environment: the
    # child gets this interpreter's site-packages on its path instead
    code = CHILD.format(checkout=checkout, here=str(HERE), site=site.getsitepackages(),
                        what=what, n=n)
    env = dict(os.environ, PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/cg.out",
             sys.executable, "-c", code],
            capture_output=True, text=True, env=env, check=False)
    if out.returncode:
        sys.exit(f"the {what} run failed under callgrind:\n{out.stderr[-3000:]}")
    found = re.search(r"Collected : (\d+)", out.stderr)
    assert found, out.stderr[-2000:]
    done = re.search(r"initiated (\d+)", out.stdout)
    return int(found.group(1)), int(done.group(1)) if done else n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--what", choices=("model", "digest", "toy", "same", "stream"),
                        default="model")
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--large", type=int, default=550)
    parser.add_argument("--checkout", default=str(HERE.parent),
                        help="the checkout whose engine is counted (default: this one)")
    args = parser.parse_args()
    small, n_small = count(args.what, args.small, args.checkout)
    large, n_large = count(args.what, args.large, args.checkout)
    per = (large - small) / (n_large - n_small)
    print(f"{args.what} ({args.checkout}): {per:,.0f} instructions per transaction "
          f"({n_small} and {n_large} transactions: {small:,} and {large:,})")


if __name__ == "__main__":
    main()
