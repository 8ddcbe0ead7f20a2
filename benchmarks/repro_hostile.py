"""Issue 14's findings 1-9 and 11, reproduced as the issue words them, against a real server.

Run:  python benchmarks/repro_hostile.py [--only N ...] [--transactions 12000]

Not a test: it reports. Each finding starts its own ``clearing-sim serve`` (this checkout's
code, ``python -m clearing_sim.cli``, uvicorn on 127.0.0.1, a free port), sends the issue's
exact requests with httpx, and prints one line per check, ``ok`` or ``FAIL``, with what it
measured (statuses, digests, wall waits, the server's peak RSS from /proc). Finding 6 runs
real receivers on loopback (one drips a byte every 5 s; one answers 100 MiB); finding 8
fills the world with ``--transactions`` redemptions and times a clock read and a
transaction read during a 366-day advance. Finding 10 (scenario files) is measured by
``bench_hostile.py rss``. Exit status 1 when any check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "repro-operator-token"
FAILED: list[str] = []


def check(finding: int, what: str, ok: bool, detail: object = "") -> None:
    print(f"  [{finding:>2}] {'ok  ' if ok else 'FAIL'} {what}  {detail}", flush=True)
    if not ok:
        FAILED.append(f"{finding}: {what}")


class Server:
    """``clearing-sim serve --port 0`` as a child process; its base URL read from the banner."""

    def __init__(self, *args: str, token: str = TOKEN) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "clearing_sim.cli", "serve", "--port", "0",
             "--operator-token", token, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        assert first.startswith("clearing-sim serving on"), first
        self.base = first.split()[3]
        self.op = {"Authorization": f"Bearer {token}"}
        self.client = httpx.Client(base_url=self.base, timeout=120)

    def rss_kib(self, field: str = "VmHWM") -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return -1

    def digest(self) -> str:
        return str(self.client.get("/sim/v1/digest", headers=self.op).json()["data"]["digest"])

    def state(self) -> tuple[str, int]:
        """What the world *is*: a hash of every log record but the ``api.request`` ones (a
        refusal is logged as a request, and changes nothing else), and how many there are."""
        digest, count, cursor = hashlib.sha256(), 0, 1
        while cursor is not None:
            page = self.client.get("/sim/v1/log", headers=self.op,
                                   params={"cursor": cursor, "limit": 1000}).json()
            for record in page["data"]:
                if record["kind"] != "api.request":
                    digest.update(json.dumps(record, sort_keys=True).encode())
                    count += 1
            cursor = page["meta"]["nextCursor"]
        return digest.hexdigest(), count

    def stop(self, sig: int = signal.SIGINT) -> tuple[str, str]:
        self.client.close()
        self.process.send_signal(sig)
        out, err = self.process.communicate(timeout=30)
        return out, err

    def cast(self, wallet: str = "1000.00") -> dict[str, Any]:
        """An issuer (GBPE, Mode 2 on evm) and a member, through the operator surface."""
        issuer = self.client.post("/sim/v1/participants", headers=self.op, json={
            "kind": "stablecoin_issuer", "name": "Ether Pound",
            "rtgsBalanceGbp": "1000000000.00", "assets": [{"code": "GBPE", "ledger": "evm"}]})
        member = self.client.post("/sim/v1/participants", headers=self.op, json={
            "kind": "clearing_member", "name": "Northbank", "wallets": {"GBPE": wallet}})
        data = member.json()["data"]
        return {"asset": issuer.json()["data"]["assets"][0], "member": data["participantId"],
                "key": {"Authorization": f"Bearer {data['apiKey']}"},
                "admin": {"Authorization": f"Bearer {data['adminToken']}"}}


@contextmanager
def serving(*args: str, token: str = TOKEN) -> Iterator[Server]:
    server = Server(*args, token=token)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


def redeem(asset: dict[str, Any], reference: str = "INV-1", amount: str = "1.00") -> str:
    """A redemption body, JSON with ``ensure_ascii`` (a surrogate goes out as ``\\ud800``)."""
    return json.dumps({"useCase": "redeem", "paymentReference": reference,
                       "source": {"amount": amount, "asset": asset},
                       "target": {"amount": amount, "asset": {"code": "GBP"}}})


def application(name: str) -> str:
    return json.dumps({"organisationName": name, "role": "participant",
                       "primaryContact": {"name": "Eve", "email": "eve@example.com"},
                       "custodyModel": "mpc", "chains": ["stellar"]})


JSON = {"Content-Type": "application/json"}


def finding_1() -> None:
    with serving() as s:
        before = s.state()
        r = s.client.post("/api/v1/onboarding/applications", headers=JSON,
                          content=application("Evil\ud800"))
        check(1, "anonymous onboarding, organisationName 'Evil\\ud800'", r.status_code == 400,
              (r.status_code, r.json()["errors"][0]["code"]))
        reads = [s.client.get(p, headers=s.op).status_code
                 for p in ("/sim/v1/digest", "/sim/v1/log", "/sim/v1/participants")]
        check(1, "digest, log, participants still answer", reads == [200] * 3, reads)
        check(1, "no record but the request's own", s.state() == before, before[1])
        cast = s.cast()
        made = s.client.post("/api/v1/webhooks", headers={**cast["key"], **JSON}, json={
            "url": "https://hooks.example.com/w", "events": ["transaction.received"]})
        before = s.state()
        statuses = [s.client.post("/api/v1/transactions", content=redeem(
            cast["asset"], "INV-\ud800"), headers={**cast["key"], **JSON,
                                                   "Idempotency-Key": "k1"}).status_code
                    for _ in range(3)]
        listed = s.client.get("/api/v1/transactions", headers=cast["key"]).json()["data"]
        check(1, f"paymentReference 'INV-\\ud800' x3, one key, a subscription "
              f"({made.status_code})", statuses == [400] * 3 and listed == [],
              f"statuses {statuses}, transactions {len(listed)}")
        check(1, "no record but the requests' own", s.state() == before, before[1])


def finding_2() -> None:
    with serving() as s:
        cast = s.cast()
        digits = "9" * 5000
        answers = [s.client.get(f"/api/v1/transactions?limit={digits}",
                                headers=cast["key"]),
                   s.client.get(f"/api/v1/transactions?cursor={digits}", headers=cast["key"]),
                   s.client.get("/api/v1/transactions?cursor=" + base64.urlsafe_b64encode(
                       digits.encode()).decode(), headers=cast["key"]),
                   s.client.get(f"/sim/v1/log?limit={digits}", headers=s.op),
                   s.client.get(f"/sim/v1/log?cursor={digits}", headers=s.op)]
        got = [(a.status_code, a.json()["errors"][0]["code"]) for a in answers]
        check(2, "5,000-digit limit and cursors (API and /sim/v1/log)",
              all(status == 400 for status, _ in got), got)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def finding_3() -> None:
    with serving() as s:
        jwt = ".".join((_b64(b'{"alg":"HS256","typ":"JWT"}'), _b64(b"[" * 3000), _b64(b"x")))
        got = [s.client.get(path, headers={"Authorization": f"Bearer {jwt}"}).status_code
               for path in ("/api/v1/transactions", "/api/v1/system/status")]
        check(3, "JWT whose claims are 3,000 nested '['", got == [401, 401], got)


def finding_4() -> None:
    from clearing_sim.service.auth import Credentials
    from clearing_sim.sim.world import World, WorldConfig

    keys, digests = [], []
    for token in ("token-alpha-1", "token-alpha-1", "token-bravo-2"):
        with serving("--seed", "0", token=token) as s:
            cast = s.cast()
            keys.append(cast["key"]["Authorization"])
            digests.append(s.digest())
            if len(keys) == 1:
                forged = Credentials(World(WorldConfig(seed=0))).issue_session(cast["member"])
                got = s.client.get("/api/v1/webhooks",
                                   headers={"Authorization": f"Bearer {forged}"})
                check(4, "tenant-admin JWT minted from the printed seed alone",
                      got.status_code == 401, got.status_code)
    check(4, "same seed + token: same keys and digest", keys[0] == keys[1]
          and digests[0] == digests[1], digests[0][:16])
    check(4, "same seed, other token: other keys", keys[0] != keys[2])


def finding_5() -> None:
    with serving() as s:
        body = application("Replay Ltd")
        first = s.client.post("/api/v1/onboarding/applications", content=body,
                              headers={**JSON, "Idempotency-Key": "onb-1"})
        other = httpx.Client(base_url=s.base)  # a second caller, its own connection
        second = other.post("/api/v1/onboarding/applications", content=body,
                            headers={**JSON, "Idempotency-Key": "onb-1"})
        other.close()
        secret_1 = first.json()["data"]["sandbox"]["apiKeySecret"]
        secret_2 = second.json()["data"]["sandbox"]["apiKeySecret"]
        check(5, "anonymous replay of an onboarding key + body",
              bool(secret_1) and secret_2 is None
              and second.headers.get("Idempotent-Replayed") == "true",
              f"first {first.status_code} secret {'set' if secret_1 else 'none'}; replay "
              f"{second.status_code} secret {secret_2!r}")


class Receivers:
    """Two hostile webhook receivers on loopback, in a thread with its own event loop:
    ``/drip`` sends its answer one byte every 5 s; ``/big`` answers a 100 MiB body."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.sent_bytes = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        await reader.readexactly(length)
        try:
            if head.split()[1] == b"/drip":
                for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok":
                    writer.write(bytes([byte]))
                    await writer.drain()
                    await asyncio.sleep(5)
            else:
                size, chunk = 100 * 1024 * 1024, b"x" * (1024 * 1024)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
                for _ in range(size // len(chunk)):
                    writer.write(chunk)
                    await writer.drain()
                    self.sent_bytes += len(chunk)
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    def __enter__(self) -> Receivers:
        async def start() -> None:
            await asyncio.start_server(self._serve, sock=self.sock)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(start(), self.loop).result()
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def _advance(s: Server, seconds: float) -> tuple[float, int]:
    started = time.monotonic()
    r = s.client.post("/sim/v1/clock/advance", headers=s.op, json={"seconds": seconds})
    return time.monotonic() - started, r.status_code


def finding_6() -> None:
    with Receivers() as receivers:
        for path, what in (("drip", "a receiver sending one byte every 5 s"),
                           ("big", "a receiver answering 100 MiB")):
            with serving("--deliver-webhooks", "--allow-private-webhook-urls") as s:
                cast = s.cast()
                rss_before = s.rss_kib("VmRSS")
                s.client.post("/api/v1/webhooks", headers=cast["key"], json={
                    "url": f"http://127.0.0.1:{receivers.port}/{path}",
                    "events": ["transaction.received"]})
                s.client.post("/api/v1/transactions", headers={**cast["key"], **JSON},
                              content=redeem(cast["asset"]))
                wall, status = _advance(s, 1)
                attempts = s.client.get("/sim/v1/deliveries", headers=s.op).json()["data"]
                shown = [(a["response"] or {}).get("status") for a in attempts]
                rss = s.rss_kib() - rss_before
                check(6, f"one-second advance with {what}",
                      status == 200 and wall < 11 and rss < 50_000,
                      f"advance {status} in {wall:.1f} s wall; attempts {shown}; "
                      f"peak RSS +{rss / 1024:.1f} MiB")


def finding_7() -> None:
    """The checked address is the one connected to: a name that resolves to a public address
    at the check and to loopback afterwards still goes to the public one."""
    from ipaddress import ip_address

    from clearing_sim.http.delivery import pinned

    url, host, extensions = pinned("https://hooks.example.com:8443/w?q=1",
                                   ip_address("93.184.215.14"))
    check(7, "the request goes to the checked address, Host and SNI kept",
          url.startswith("https://93.184.215.14:8443/") and host == "hooks.example.com:8443"
          and extensions.get("sni_hostname") == "hooks.example.com",
          (url, host, extensions))


def finding_8(transactions: int) -> None:
    with serving() as s:
        cast = s.cast(wallet="100000000.00")
        started = time.monotonic()
        ids = [s.client.post("/api/v1/transactions", headers={**cast["key"], **JSON},
                             content=redeem(cast["asset"], f"INV-{n}")).json()["data"]["id"]
               for n in range(transactions)]
        print(f"       {transactions} redemptions initiated in "
              f"{time.monotonic() - started:.1f} s", flush=True)
        waits: dict[str, list[float]] = {"clock": [], "transaction": []}
        done = threading.Event()

        def read(kind: str, get: Callable[[httpx.Client], httpx.Response]) -> None:
            with httpx.Client(base_url=s.base, timeout=120) as reader:
                while not done.is_set():
                    t0 = time.monotonic()
                    assert get(reader).status_code == 200
                    waits[kind].append(time.monotonic() - t0)
                    time.sleep(0.05)

        readers = [threading.Thread(target=read, args=("clock", lambda c: c.get(
                       "/sim/v1/clock", headers=s.op))),
                   threading.Thread(target=read, args=("transaction", lambda c: c.get(
                       f"/api/v1/transactions/{ids[-1]}", headers=cast["key"])))]
        for thread in readers:
            thread.start()
        wall, status = _advance(s, 366 * 86400)
        done.set()
        for thread in readers:
            thread.join()
        for kind, measured in waits.items():
            check(8, f"GET {kind} during a 366-day advance ({status}, {wall:.1f} s wall)",
                  status == 200 and max(measured) < 1,
                  f"{len(measured)} reads, max {max(measured) * 1000:.0f} ms, "
                  f"median {sorted(measured)[len(measured) // 2] * 1000:.0f} ms")


def finding_9() -> None:
    with serving() as s:
        cast = s.cast()
        s.client.post("/api/v1/webhooks", headers=cast["key"], json={
            "url": "https://hooks.example.com/w", "events": ["transaction.received"]})
        for n in range(120):
            s.client.post("/api/v1/transactions", headers={**cast["key"], **JSON},
                          content=redeem(cast["asset"], f"INV-{n}"))
        _advance(s, 1)
        page = s.client.get("/sim/v1/deliveries", headers=s.op).json()
        check(9, "GET /sim/v1/deliveries is paged", len(page["data"]) <= 100
              and page["meta"].get("nextCursor") is not None,
              f"{len(page['data'])} on the first page, nextCursor set")
        rss_before = s.rss_kib("VmRSS")
        body = b"x" * (15 * 1024 * 1024)

        def post(_: int) -> int:
            with httpx.Client(base_url=s.base, timeout=120) as c:
                try:
                    return c.post("/api/v1/transactions", content=body, headers=JSON
                                  ).status_code
                except httpx.HTTPError:
                    return -1  # answered before the body was sent: the server closed
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(32) as pool:
            statuses = list(pool.map(post, range(32)))
        grown = (s.rss_kib() - rss_before) / 1024
        check(9, "32 concurrent unauthenticated 15-MiB posts",
              set(statuses) <= {401, -1} and grown < 64,
              f"statuses {sorted(set(statuses))}, peak RSS +{grown:.1f} MiB")

        def keyed(_: int) -> int:
            with httpx.Client(base_url=s.base, timeout=120) as c:
                try:
                    return c.post("/api/v1/transactions", content=body,
                                  headers={**cast["key"], **JSON}).status_code
                except httpx.HTTPError:
                    return -1
        with ThreadPoolExecutor(32) as pool:
            statuses = list(pool.map(keyed, range(32)))
        grown = (s.rss_kib() - rss_before) / 1024
        check(9, "32 concurrent authenticated 15-MiB posts (1 MiB + 1 byte read)",
              set(statuses) <= {413, -1} and grown < 96,
              f"statuses {sorted(set(statuses))}, peak RSS +{grown:.1f} MiB")


def finding_11() -> None:
    s = Server()
    try:
        _finding_11(s)
    finally:
        if s.process.poll() is None:
            s.stop()


def _finding_11(s: Server) -> None:
    spec = s.client.get("/openapi.json").json()
    keys = [p["schema"] for path in spec["paths"].values() for op in path.values()
            for p in op.get("parameters", []) if p["name"] == "Idempotency-Key"]
    check(11, "OpenAPI Idempotency-Key: no pattern, 1-256 characters", bool(keys) and all(
        "pattern" not in k and (k["minLength"], k["maxLength"]) == (1, 256) for k in keys),
          f"{len(keys)} operations")
    schemas = spec["components"]["schemas"]
    nullable = [schemas["OnboardingApplication"]["properties"]["derivedMode"],
                schemas["Clock"]["properties"]["speed"]]
    check(11, "nullable fields typed nullable (derivedMode, Clock.speed)",
          all("null" in json.dumps(n) for n in nullable), nullable)
    long_key = "é" * 256
    r = s.client.post("/api/v1/onboarding/applications", content=application("Keyed Ltd"),
                      headers=[("Content-Type", b"application/json"),
                               ("Idempotency-Key", long_key.encode())])
    check(11, "a 256-character (512-byte) Idempotency-Key is taken", r.status_code == 201,
          r.status_code)
    cast = s.cast()
    get = s.client.get("/api/v1/system/status", headers=cast["key"])
    head = s.client.head("/api/v1/system/status", headers=cast["key"])
    check(11, "HEAD on a GET route: the GET without its body",
          head.status_code == get.status_code == 200 and head.content == b""
          and head.headers["content-length"] == get.headers["content-length"],
          (head.status_code, head.headers.get("content-length")))
    raw = socket.create_connection(("127.0.0.1", int(s.base.rsplit(":", 1)[1])))
    raw.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
    answer = raw.recv(65536).decode(errors="replace")
    raw.close()
    check(11, "uvicorn's own 400 is the error envelope", answer.startswith("HTTP/1.1 400")
          and '"malformed_http_request"' in answer, answer.split("\r\n")[0])
    digest = s.digest()
    out, _ = s.stop(signal.SIGTERM)
    check(11, "SIGTERM prints the final digest", digest in out, out.strip().splitlines()[-1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=int, nargs="*", default=[1, 2, 3, 4, 5, 6, 7, 8, 9, 11])
    parser.add_argument("--transactions", type=int, default=12_000)
    args = parser.parse_args()
    findings: dict[int, Callable[[], None]] = {
        1: finding_1, 2: finding_2, 3: finding_3, 4: finding_4, 5: finding_5, 6: finding_6,
        7: finding_7, 8: lambda: finding_8(args.transactions), 9: finding_9, 11: finding_11}
    for number in args.only:
        print(f"finding {number}", flush=True)
        findings[number]()
    print(f"{len(FAILED)} failed" + (": " + "; ".join(FAILED) if FAILED else ""))
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
