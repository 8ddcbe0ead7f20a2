"""Load check: the served API on loopback under wrk, next to a bare Starlette route.

Run:  python benchmarks/bench_http.py [--duration S] [--connections C] [--threads T]

Not a timed test: it reports. Two servers run as subprocesses under uvicorn with the same
settings (one process, one event loop, no access log): ``clearing-sim serve`` (manual clock)
and a bare Starlette app whose one route answers a fixed JSON body. The shim gets an issuer,
a member and one settled redeem through the operator surface; then ``wrk`` (Debian package
``wrk``) measures, one after the other, for ``--duration`` seconds each:

- ``GET /api/v1/transactions/{id}`` with the member's API key (the full transaction form);
- ``POST /api/v1/transactions`` (initiate: every request a new redeem; the clock is manual,
  so none of them moves on and the world only grows);
- ``GET /ping`` on the bare Starlette app.

It prints requests per second, p50 and p99 latency for each and the ratios to the bare
route, and checks every answer was 2xx.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
from served import redeem_cast, start

TOKEN = "bench-operator-token"
EXE = Path(sys.executable).with_name("clearing-sim")


def _bare_server() -> None:
    """``--bare-server``: a bare Starlette route under uvicorn, port printed on stdout."""
    import socket

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def ping(request: Request) -> JSONResponse:
        return JSONResponse({"data": {"pong": True}, "meta": {"commandId": "bench"}})

    app = Starlette(routes=[Route("/ping", ping)])
    # IPPROTO_TCP as clearing-sim serve binds it: asyncio sets TCP_NODELAY on accepted
    # sockets only for an explicit TCP protocol (with proto 0, Nagle + delayed ACKs add 40 ms).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(f"bare serving on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(
        sockets=[sock])


def _setup(base: str) -> dict[str, Any]:
    auth, body = redeem_cast(base, TOKEN)
    with httpx.Client(base_url=base, timeout=30) as http:
        tx = http.post("/api/v1/transactions", headers=auth, json=body).json()["data"]["id"]
        http.post("/sim/v1/clock/advance", headers={"Authorization": f"Bearer {TOKEN}"},
                  json={"seconds": 3600})
        assert http.get(f"/api/v1/transactions/{tx}", headers=auth).json()["data"][
            "lifecycleStatus"] == "settled"
    return {"key": auth["Authorization"].removeprefix("Bearer "), "tx": tx, "body": body}


def _wrk(url: str, args: argparse.Namespace, headers: dict[str, str],
         body: dict[str, Any] | None = None) -> dict[str, Any]:
    command = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s",
               "--latency"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        if body is not None:
            script.write(f"wrk.method = \"POST\"\nwrk.body = {json.dumps(json.dumps(body))}\n"
                         "wrk.headers[\"Content-Type\"] = \"application/json\"\n")
    command += ["-s", script.name, url]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    Path(script.name).unlink()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    latency = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+\w+)", out, re.MULTILINE))
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    return {"rps": rps, "p50": latency.get("50"), "p99": latency.get("99"), "requests": total,
            "non2xx": int(bad.group(1)) if bad else 0}


def _ms(text: str | None) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s)", text or "")
    if match is None:
        return float("nan")
    return float(match.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[match.group(2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per measurement")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--bare-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        _bare_server()
        return
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    shim, shim_base = start([str(EXE), "serve", "--port", "0", "--seed", "1",
                              "--operator-token", TOKEN])
    bare, bare_base = start([sys.executable, __file__, "--bare-server"])
    try:
        cast = _setup(shim_base)
        auth = {"Authorization": f"Bearer {cast['key']}"}
        rows = [
            ("GET /api/v1/transactions/{id}",
             _wrk(f"{shim_base}/api/v1/transactions/{cast['tx']}", args, auth)),
            ("POST /api/v1/transactions", _wrk(f"{shim_base}/api/v1/transactions", args, auth,
                                               cast["body"])),
            ("GET /ping (bare Starlette)", _wrk(f"{bare_base}/ping", args, {})),
        ]
    finally:
        for process in (shim, bare):
            process.terminate()
            process.wait(timeout=10)
    bare_rps, bare_p99 = rows[-1][1]["rps"], _ms(rows[-1][1]["p99"])
    print(f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s, loopback, "
          f"{os.cpu_count()} cores, one uvicorn process each")
    for name, r in rows:
        print(f"{name:<32} {r['rps']:>9,.0f} req/s  p50 {r['p50']:>8}  p99 {r['p99']:>8}  "
              f"({r['requests']} requests, {r['non2xx']} non-2xx)  "
              f"rps {r['rps'] / bare_rps:.2f}x bare, p99 {_ms(r['p99']) / bare_p99:.1f}x bare")
    if any(r["non2xx"] for _, r in rows):
        raise SystemExit("some answers were not 2xx")


if __name__ == "__main__":
    main()
