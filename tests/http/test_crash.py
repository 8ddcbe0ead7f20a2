"""The crash test: a journaled server under concurrent load, killed with SIGKILL many times.

The server is a real process (forked, so a restart does not pay the imports again) serving
real HTTP on loopback; the load is three kinds of request from four threads.

After every restart each request answered 2xx is in the journal with its effect; at the
end the restarted server's digest is the journal's (replayed into a fresh world), and equals
that of an uninterrupted in-process shim (no journal) sent the same requests and clock moves
through the live doors, unless a kill came right after a slice of an advance that ended
inside an instant and the restarted server then served requests inside it (no client of an
uninterrupted shim can place a request there: `journal export` leaves out such a session's
digest for the same reason; ``served_inside_an_instant`` finds those entries).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import signal
import socket
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

import httpx
import pytest
import uvicorn

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.journal import JournalFile, read_journal
from clearing_sim.http.replay import open_journal, replay_copy
from tests.http.conftest import Client, resend, served_inside_an_instant

TOKEN = "crash-test-token"
OP = {"Authorization": f"Bearer {TOKEN}"}
SEED = 21


class Server:
    """A journaled shim under uvicorn in a forked process (the parent has paid the imports),
    killed for real with SIGKILL."""

    def __init__(self, journal: Path) -> None:
        parent, child = multiprocessing.get_context("fork").Pipe()
        self.conn = parent
        self.process = multiprocessing.get_context("fork").Process(
            target=_serve, args=(journal, child), daemon=True)
        self.process.start()
        port, self.lines = parent.recv()
        self.base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{self.base}/sim/v1/clock", headers=OP).status_code == 200  # up

    def kill(self) -> None:
        assert self.process.pid is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.join(timeout=10)

    def stop(self) -> str:
        """Stop it cleanly (SIGINT); the digest it stopped at."""
        assert self.process.pid is not None
        os.kill(self.process.pid, signal.SIGINT)
        digest = str(self.conn.recv())
        self.process.join(timeout=10)
        return digest


def _serve(journal: Path, conn: Connection) -> None:
    app = create_app(ServeOptions(operator_token=TOKEN, seed=SEED))
    existing = read_journal(journal) if journal.exists() else None
    lines = open_journal(app, journal, None, existing)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    conn.send((sock.getsockname()[1], lines))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    app.state.sim.journal.writer.close()
    conn.send(app.state.sim.world.log.digest())


class Acks:
    """Every request the server answered 2xx, by kind."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.keys: dict[str, str] = {}  # Idempotency-Key -> transaction id
        self.hooks: list[str] = []
        self.now_ms = 0


def _cast(base: str) -> tuple[dict[str, str], dict[str, str]]:
    with httpx.Client(base_url=base, timeout=10) as http:
        issuer = http.post("/sim/v1/participants", headers=OP, json={
            "kind": "stablecoin_issuer", "name": "Ether Pound", "rtgsBalanceGbp": "1000000.00",
            "assets": [{"code": "GBPE", "ledger": "evm"}]})
        assert issuer.status_code == 201, issuer.text
        member = http.post("/sim/v1/participants", headers=OP, json={
            "kind": "clearing_member", "name": "Northbank", "wallets": {"GBPE": "1000000.00"}})
        assert member.status_code == 201, member.text
        return (issuer.json()["data"]["assets"][0],
                {"Authorization": f"Bearer {member.json()['data']['apiKey']}"})


def _load(base: str, round_: int, asset: dict[str, str], auth: dict[str, str], acks: Acks,
          stop: threading.Event) -> list[threading.Thread]:
    def initiate(http: httpx.Client, n: int) -> None:
        key = f"r{round_}-i{n}"
        answer = http.post("/api/v1/transactions", headers={**auth, "Idempotency-Key": key},
                           json={"useCase": "redeem", "paymentReference": key,
                                 "source": {"amount": "1.00", "asset": asset},
                                 "target": {"amount": "1.00", "asset": {"code": "GBP"}}})
        if answer.status_code == 201:
            with acks.lock:
                acks.keys[key] = answer.json()["data"]["id"]

    def advance(http: httpx.Client, n: int) -> None:
        answer = http.post("/sim/v1/clock/advance", headers=OP, json={"seconds": 1 + n % 7})
        if answer.status_code == 200:
            with acks.lock:
                acks.now_ms = max(acks.now_ms, answer.json()["data"]["nowMs"])

    def subscribe(http: httpx.Client, n: int) -> None:
        answer = http.post("/api/v1/webhooks", headers=auth, json={
            "url": f"https://hooks-{round_}-{n}.northbank.example/h",
            "events": ["transaction.received", "transaction.settled"]})
        if answer.status_code == 201:
            with acks.lock:
                acks.hooks.append(answer.json()["data"]["id"])

    def worker(act: Callable[[httpx.Client, int], None], pause_s: float) -> None:
        with httpx.Client(base_url=base, timeout=10) as http:
            n = 0
            while not stop.is_set():
                try:
                    act(http, n)
                except httpx.HTTPError:
                    return  # the server is gone: this request was never answered
                n += 1
                time.sleep(pause_s)

    threads = [threading.Thread(target=worker, args=(act, pause))
               for act, pause in ((initiate, 0.0), (initiate, 0.0), (advance, 0.01),
                                  (subscribe, 0.02))]
    for thread in threads:
        thread.start()
    return threads


def _journal_keys(journal: JournalFile) -> dict[str, int]:
    keys = {}
    for _, entry in journal.entries:
        if entry["k"] == "api":
            for name, value in entry["headers"]:
                if name.lower() == "idempotency-key":
                    keys[value] = entry["status"]
    return keys


def crash_and_restart(tmp_path: Path, kills: int) -> None:
    path = tmp_path / "crash.jsonl"
    rng = random.Random(kills)
    acks = Acks()
    server = Server(path)
    asset, auth = _cast(server.base)
    for round_ in range(kills):
        stop = threading.Event()
        threads = _load(server.base, round_, asset, auth, acks, stop)
        time.sleep(rng.uniform(0.3, 0.9))
        server.kill()  # SIGKILL: no shutdown, no flush of anything not yet written
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        server = Server(path)  # restart: replays the journal
        journal = read_journal(path)
        keys = _journal_keys(journal)
        missing = [key for key in acks.keys if keys.get(key) != 201]
        assert not missing, f"round {round_}: acknowledged but not journaled: {missing[:5]}"
    final = server.stop()
    journal = read_journal(path)
    assert final == replay_copy(journal, TOKEN).world.log.digest(), kills  # it rebuilds
    client = resend(journal, TOKEN)  # an uninterrupted shim sent the same requests
    world = client.sim.world
    inside = served_inside_an_instant(journal, TOKEN)
    # unless a kill came after a slice that ended inside an instant and the restarted shim
    # served requests there, which a shim sent requests between whole advances cannot (the
    # same reason `journal export` leaves out such a session's digest)
    assert inside or final == world.log.digest(), kills
    assert all(world.transactions.get(tx) is not None for tx in acks.keys.values())
    assert all(world.subscriptions.get(hook) is not None for hook in acks.hooks)
    assert world.now_ms >= acks.now_ms
    assert len(acks.keys) > kills  # the load did reach the server between kills
    client.close()


def test_sigkill_under_load_loses_no_acknowledged_request(tmp_path: Path) -> None:
    crash_and_restart(tmp_path, kills=6)


@pytest.mark.slow
def test_sigkill_under_load_many_times(tmp_path: Path) -> None:
    crash_and_restart(tmp_path, kills=60)


def test_acknowledged_means_durable_not_just_written(tmp_path: Path) -> None:
    """An answer is sent only after its entry is fsynced: the writer's count of fsyncs
    moves for every answered change (group commit may share one among several)."""
    app = create_app(ServeOptions(operator_token=TOKEN, seed=SEED))
    open_journal(app, tmp_path / "j.jsonl", None, None)
    client = Client(app)
    writer = app.state.sim.journal.writer
    before = writer.fsyncs
    moved = client.request("POST", "/sim/v1/clock/advance", headers=OP, json={"seconds": 1})
    assert moved.status_code == 200
    assert writer.fsyncs == before + 1
    assert client.request("GET", "/sim/v1/clock", headers=OP).status_code == 200
    assert writer.fsyncs == before + 1  # a read writes nothing, waits for nothing
    client.close()

