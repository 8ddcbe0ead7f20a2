"""The journal's cost: initiate req/s with ``serve --journal`` against without it, one run.

Run:  python benchmarks/bench_journal.py [--duration S] [--connections C] [--rounds R]

Not a timed test: it reports. Two ``clearing-sim serve`` processes (this checkout's code,
manual clock, the same seed and cast) run side by side, one journaling to a file on the
working directory's disk (every answer waits for its entry's fsync; concurrent answers share
one, group commit), one without. ``wrk`` (Debian package ``wrk``; ``--connections``
requests in flight) posts new redeems (``POST /api/v1/transactions``) to
one, then the other, alternating for ``--rounds`` rounds of ``--duration`` seconds so that
both see the same machine; it prints each round, the medians and their ratio, and checks
every answer was 2xx. Then, in this process, what one entry costs on the CPU beside what
the API's handling of the same initiation costs (the ceiling of the ratio on a busy loop).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from served import redeem_cast, start

TOKEN = "bench-operator-token"
ROOT = Path(__file__).resolve().parents[1]


def _start(*extra: str) -> tuple[subprocess.Popen[str], str]:
    return start([sys.executable, "-m", "clearing_sim", "serve", "--port", "0", "--seed", "1",
                  "--operator-token", TOKEN, *extra], env={"PYTHONPATH": str(ROOT)})


def _wrk(base: str, auth: dict[str, str], body: dict[str, Any], connections: int,
         duration_s: float) -> tuple[float, int]:
    """(requests per second, answers that were not 2xx), measured by wrk."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(f"wrk.method = \"POST\"\nwrk.body = {json.dumps(json.dumps(body))}\n"
                     "wrk.headers[\"Content-Type\"] = \"application/json\"\n")
    command = ["wrk", "-t1", f"-c{connections}", f"-d{duration_s:g}s", "-s", script.name,
               "-H", f"Authorization: {auth['Authorization']}", f"{base}/api/v1/transactions"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    Path(script.name).unlink()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, int(bad.group(1)) if bad else 0


def _entry_cost(folder: Path, count: int = 2000) -> tuple[float, float]:
    """In this process: (µs per ``ServiceAPI.handle`` of an initiation, µs to journal it)."""
    sys.path.insert(0, str(ROOT))
    from clearing_sim.http import ServeOptions, create_app
    from clearing_sim.http.replay import open_journal
    from clearing_sim.service.messages import Request
    from tests.http.conftest import Client, add, issuer_body, member_body, redeem_body

    app = create_app(ServeOptions(operator_token="operator-token-1", seed=1))
    open_journal(app, folder / "entry-cost.jsonl", None, None)
    client = Client(app)
    issuer, member = add(client, issuer_body()), add(client, member_body(GBPE="1000000.00"))
    sim, request = app.state.sim, Request.build(
        "POST", "/api/v1/transactions", token=member.key,
        json_body=redeem_body(issuer.asset or {}, "1.00"))
    start = time.perf_counter()
    answers = [sim.api.handle(request) for _ in range(count)]
    handled = time.perf_counter()
    for answer in answers:
        sim.journal.api(request, answer, 0)
    journaled = time.perf_counter()
    client.close()
    return (handled - start) / count * 1e6, (journaled - handled) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5, help="seconds per measurement")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    folder = Path(tempfile.mkdtemp(prefix="bench-journal-", dir=Path.cwd()))
    journal = folder / "bench.jsonl"
    plain, plain_base = _start()
    journaled, journaled_base = _start("--journal", str(journal))
    rates: dict[str, list[float]] = {"without": [], "with": []}
    bad = 0
    try:
        servers = {"without": (plain_base, *redeem_cast(plain_base, TOKEN)),
                   "with": (journaled_base, *redeem_cast(journaled_base, TOKEN))}
        for round_ in range(args.rounds):
            for name in ("without", "with"):
                base, auth, body = servers[name]
                rps, wrong = _wrk(base, auth, body, args.connections, args.duration)
                rates[name].append(rps)
                bad += wrong
                print(f"round {round_ + 1}: {name:<7} --journal {rps:>8,.0f} req/s", flush=True)
    finally:
        for process in (plain, journaled):
            process.terminate()
            process.wait(timeout=30)
    size = journal.stat().st_size
    without, with_ = statistics.median(rates["without"]), statistics.median(rates["with"])
    print(f"POST /api/v1/transactions, {args.connections} in flight, {args.rounds} x "
          f"{args.duration:g} s each, {os.cpu_count()} cores, one uvicorn process each")
    print(f"without --journal  {without:>8,.0f} req/s (median)")
    print(f"with --journal     {with_:>8,.0f} req/s (median)   {with_ / without:.2f}x   "
          f"journal {size / 1e6:.1f} MB")
    handle_us, entry_us = _entry_cost(folder)
    print(f"in process: ServiceAPI.handle {handle_us:.0f} us per initiation, its journal entry "
          f"{entry_us:.0f} us (encode, seal, hash, CRC, write; the fsync is off the event "
          f"loop): at most {handle_us / (handle_us + entry_us):.2f}x on CPU")
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    if bad:
        raise SystemExit(f"{bad} answers were not 2xx")


if __name__ == "__main__":
    main()
