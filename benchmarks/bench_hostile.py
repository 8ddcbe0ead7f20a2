"""Hostile input (issue 14): the figures of the closing note, measured.

Run:  python benchmarks/bench_hostile.py fuzz [--examples N]      # ServiceAPI.handle + ASGI app
      python benchmarks/bench_hostile.py rss                       # peak RSS of validate/run
      python benchmarks/bench_hostile.py schemathesis [--max-time S]   # CLI, --checks all
      python benchmarks/bench_hostile.py all

Not a timed test: it reports. ``fuzz`` draws hostile requests with the suite's Hypothesis
strategies (tests/service/test_hostile_input.py: every route of the API table with every
credential column, bodies with lone surrogates, unnormalised text, huge and deep values,
duplicate keys, wrong types and one poisoned field, hostile headers and query strings;
tests/http/test_hostile_http.py: every route of both surfaces through the ASGI app, six
credentials, arbitrary header and query bytes, other methods) and counts, without stopping
at the first: requests tried, 5xx answers, refusals (4xx) that are not the error envelope,
and refusals that changed the world (its log, ``api.request`` records aside). ``rss`` runs
``clearing-sim validate`` and ``run`` in a child process on each worst scenario file of
issue 14, finding 10 (559-byte billion laughs, a 5 MB file, a 5,000-digit integer, a lone
surrogate in the name, a merge bomb, /dev/zero) and on a shipped scenario, and reads each
child's peak RSS (``os.wait4``, ``ru_maxrss``). ``schemathesis`` serves a world (``clearing-sim
serve``: an issuer, a member, a transaction), writes a config giving each operation the
credential its route takes, and runs the Schemathesis CLI with ``--checks all`` and every phase
(examples, coverage, fuzzing, stateful through the document's links) for ``--max-time``
(``POST /sim/v1/reset`` left out: it gives the world new keys, so every later call is 401);
``benchmarks/hostile_hooks.py`` gives creations a valid body half the time, so the stateful
phase has resources to follow the links to.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TOKEN = "bench-hostile-token"


# fuzz -------------------------------------------------------------------------------------
def _tally(name: str, count: dict[str, int]) -> None:
    print(f"  {name}: {count['requests']} requests, {count['5xx']} 5xx, "
          f"{count['refused']} refused ({count['not_envelope']} not the error envelope), "
          f"{count['changed_on_refusal']} refusals changed the world", flush=True)


def _fuzz_handle(examples: int) -> dict[str, int]:
    from hypothesis import HealthCheck, Phase, given, settings

    from tests.service.test_hostile_input import _SERVICE, _requests, state_digest
    from tests.service.test_hostile_input import assert_refusal_envelope as envelope

    count = dict.fromkeys(("requests", "5xx", "refused", "not_envelope",
                           "changed_on_refusal"), 0)

    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(request=_requests())
    def run(request: Any) -> None:
        world = _SERVICE.world
        before, records = state_digest(world), len(world.log)
        response = _SERVICE.api.handle(request)
        count["requests"] += 1
        count["5xx"] += response.status >= 500
        if response.status >= 400:
            count["refused"] += 1
            count["not_envelope"] += not _holds(lambda: envelope(response))
            added = [r.kind for r in list(world.log)[records:]]
            count["changed_on_refusal"] += (added != ["api.request"]
                                           or state_digest(world) != before)

    run()
    return count


def _holds(check: Callable[[], object]) -> bool:
    try:
        check()
    except (AssertionError, ValueError, KeyError, TypeError):
        return False
    return True


def _fuzz_asgi(examples: int) -> dict[str, int]:
    from hypothesis import HealthCheck, Phase, given, settings

    from clearing_sim.domain.errors import CATALOGUE
    from tests.http.test_hostile_http import _APP, _requests, call
    from tests.service.test_hostile_input import state_digest

    count = dict.fromkeys(("requests", "5xx", "refused", "not_envelope",
                           "changed_on_refusal"), 0)

    def enveloped(body: bytes) -> bool:
        errors = json.loads(body)["errors"]
        return bool(errors) and all(e["code"] in CATALOGUE for e in errors)

    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(request=_requests())
    def run(request: Any) -> None:
        method, path, query, headers, body = request
        before = state_digest(_APP.state.sim.world)
        sent = call(_APP, method, path, query, headers, body)
        count["requests"] += 1
        count["5xx"] += sent.status >= 500
        if sent.status >= 400:
            count["refused"] += 1
            if method != "HEAD":
                count["not_envelope"] += not _holds(lambda: enveloped(sent.body) or 1 / 0)
            count["changed_on_refusal"] += state_digest(_APP.state.sim.world) != before

    run()
    return count


def fuzz(examples: int) -> None:
    print(f"fuzz: {examples} examples per door (Hypothesis, new examples each run)")
    started = time.monotonic()
    _tally("ServiceAPI.handle", _fuzz_handle(examples))
    _tally("ASGI app (both surfaces)", _fuzz_asgi(examples))
    print(f"  {time.monotonic() - started:.0f} s")


# rss --------------------------------------------------------------------------------------
def _laughs(levels: int = 9) -> str:
    lines = ["scenario: lol", 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join([*lines, f"steps: [*l{levels}]"]) + "\n"


def _big(size: int = 5_000_000) -> str:
    head = "scenario: big\nsteps:\n"
    line = "  - advance: 1ms\n"
    return head + line * ((size - len(head)) // len(line))


def _merge_bomb(levels: int = 40) -> str:
    lines = ["scenario: m", "m0: &m0 {a: 1, b: 2}"]
    for i in range(1, levels + 1):
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}], k: [*m{i - 1}, *m{i - 1}, *m{i - 1}]}}")
    return "\n".join(lines) + "\nsteps: []\n"


WORST = {
    "billion-laughs.yaml": _laughs,
    "five-megabytes.yaml": _big,
    "digits.yaml": lambda: "scenario: d\nworld: {seed: " + "9" * 5000 + "}\nsteps: []\n",
    "surrogate-name.yaml": lambda: 'scenario: "Evil\\ud800"\nsteps: []\n',
    "merge-bomb.yaml": _merge_bomb,
    "largest-accepted.yaml": lambda: _big(262_144),  # the worst inside the bounds
}


def _child(args: list[str]) -> tuple[int, float, int, str]:
    """Exit status, wall seconds, peak RSS (KiB) and the last output line of one child."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "clearing_sim.cli", *args], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT),
                                                 "NO_COLOR": "1"})
    assert process.stdout is not None
    output = process.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    lines = [line for line in output.splitlines() if line.strip()] or [""]
    if "Traceback" in output:
        lines.append("TRACEBACK")
    return process.returncode, time.monotonic() - started, usage.ru_maxrss, lines[-1][:110]


def rss() -> None:
    normal = ROOT / "scenarios" / "redeem-happy-path-mode-2.yaml"
    print("rss: peak resident memory of one child process (ru_maxrss)")
    with tempfile.TemporaryDirectory() as folder:
        files = {"(shipped) " + normal.name: normal}
        for name, make in WORST.items():
            path = Path(folder) / name
            path.write_text(make(), encoding="utf-8")
            files[f"{name} ({path.stat().st_size:,} bytes)"] = path
        files["/dev/zero (endless)"] = Path("/dev/zero")
        for label, path in files.items():
            for command in ("validate", "run"):
                code, wall, peak, last = _child([command, str(path)])
                print(f"  {command:8} {label:42} exit {code}  {wall:5.1f} s  "
                      f"{peak / 1024:6.1f} MiB  {last}", flush=True)


# schemathesis -----------------------------------------------------------------------------
def _config(base: str, cast: dict[str, Any]) -> str:
    """A Schemathesis config giving each operation the credential its route takes: the
    operator token on /sim/v1, the issuer's admin JWT on its own routes, else the member's
    API key where the document allows one, else its admin JWT (per operationId, so no
    scheme-matching guess decides)."""
    spec = httpx.get(f"{base}/openapi.json", timeout=30).json()
    lines = [f'[parameters]\n"path.issuerId" = "{cast["issuer"]}"\n']
    for path, item in spec["paths"].items():
        for operation in item.values():
            schemes = {next(iter(s)) for s in operation.get("security", []) if s}
            if path.startswith("/sim/v1/"):
                token = TOKEN
            elif path.startswith(("/api/v1/issuers/", "/api/v1/reserves/")):
                token = cast["issuer_admin"]
            elif "apiKey" in schemes:
                token = cast["member_key"]
            elif "adminSession" in schemes:
                token = cast["member_admin"]
            else:
                continue  # a public route
            lines.append(f'[[operations]]\ninclude-operation-id = "{operation["operationId"]}"'
                         f'\nheaders = {{ Authorization = "Bearer {token}" }}\n')
    return "\n".join(lines)


def _served_cast(base: str) -> dict[str, Any]:
    op = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=base, timeout=30) as client:
        issuer = client.post("/sim/v1/participants", headers=op, json={
            "kind": "stablecoin_issuer", "name": "Ether Pound",
            "rtgsBalanceGbp": "1000000.00", "assets": [{"code": "GBPE", "ledger": "evm"}]}
                             ).json()["data"]
        member = client.post("/sim/v1/participants", headers=op, json={
            "kind": "clearing_member", "name": "Northbank", "wallets": {"GBPE": "1000000.00"}}
                             ).json()["data"]
        client.post("/api/v1/transactions", headers={
            "Authorization": f"Bearer {member['apiKey']}"}, json={
            "useCase": "redeem", "paymentReference": "ST-1",
            "source": {"amount": "1.00", "asset": issuer["assets"][0]},
            "target": {"amount": "1.00", "asset": {"code": "GBP"}}})
    return {"token": TOKEN, "member_key": member["apiKey"], "member_admin": member["adminToken"],
            "issuer_admin": issuer["adminToken"], "issuer": issuer["participantId"],
            "asset": issuer["assets"][0]}


def schemathesis(max_time: int) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "clearing_sim.cli", "serve", "--port", "0", "--seed", "0",
         "--operator-token", TOKEN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
    try:
        assert server.stdout is not None
        base = server.stdout.readline().split()[3]
        with tempfile.TemporaryDirectory() as folder:
            config = Path(folder) / "schemathesis.toml"
            cast = _served_cast(base)
            config.write_text(_config(base, cast), encoding="utf-8")
            command = [str(Path(sys.executable).with_name("schemathesis")), "--no-color",
                       "--config-file", str(config), "run", f"{base}/openapi.json",
                       "--checks", "all", "--max-time", str(max_time), "--workers", "1",
                       "--continue-on-failure", "--request-timeout", "30",
                       # a reset would give the world new keys: every later call a 401
                       "--exclude-path", "/sim/v1/reset",
                       "--report", "junit", "--report-dir", folder]
            print("schemathesis:", " ".join(command[1:4]), "… --checks all --max-time",
                  max_time, flush=True)
            env = {**os.environ, "SCHEMATHESIS_HOOKS": "hostile_hooks",
                   "PYTHONPATH": f"{ROOT / 'benchmarks'}:{ROOT}",
                   "BENCH_HOSTILE_ASSET": json.dumps(cast["asset"])}
            result = subprocess.run(command, capture_output=True, text=True, cwd=folder,
                                    env=env)
            _summarise(result.stdout + result.stderr)
    finally:
        server.terminate()
        server.communicate(timeout=30)


def _summarise(output: str) -> None:
    keep = re.compile(r"(test cases|Test cases|API Operations|Phases|Examples|Coverage|"
                      r"Fuzzing|Stateful|failures|Failures|passed|failed|errors|Errors|"
                      r"Warnings|Summary|Tested|Seed|^\s*[❌✅🚫⏭]|^_+ )")
    for line in output.splitlines():
        if keep.search(line):
            print("  " + line.rstrip(), flush=True)
    Path(tempfile.gettempdir(), "bench_hostile_schemathesis.txt").write_text(output)
    print(f"  (full output: {tempfile.gettempdir()}/bench_hostile_schemathesis.txt)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["fuzz", "rss", "schemathesis", "all"])
    parser.add_argument("--examples", type=int, default=5000,
                        help="fuzz: Hypothesis examples per door")
    parser.add_argument("--max-time", type=int, default=300,
                        help="schemathesis: the run's time budget in seconds")
    args = parser.parse_args()
    if args.what in ("fuzz", "all"):
        fuzz(args.examples)
    if args.what in ("rss", "all"):
        rss()
    if args.what in ("schemathesis", "all"):
        schemathesis(args.max_time)


if __name__ == "__main__":
    main()
