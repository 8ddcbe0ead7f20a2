"""A served world for a test suite: ``clearing-sim serve`` started, waited for and stopped.

Public names: ``ServedWorld``, ``ServerFailed``, ``ShimClient``, ``served_world``.

``served_world()`` is a context manager: it starts ``clearing-sim serve`` as a subprocess
(real HTTP) on a free port (``--port 0``, the address read from the line it prints), waits
until ``GET /sim/v1/health`` says ``ready``, hands back a ``ServedWorld`` (base URL,
operator token, the world file's participants' API keys, and a small ``ShimClient``), and
stops the server when the block ends, however it ends (an exception, a failed assertion,
Ctrl-C): SIGINT, then SIGKILL after a grace period. The server's output goes to files, so it
never blocks on a full pipe and can be shown when a test fails.

The pytest fixtures (``clearing_sim.testing.fixtures``, registered by clearing-sim's pytest
plugin, so installing clearing-sim is enough) follow MockServer's pattern:
``clearing_sim_server`` is one server per test session; ``clearing_sim`` is that server
reset for each test (``POST /sim/v1/reset``: a fresh world from the world file, about 45 ms,
most of it the full garbage collection a replaced world gets, ``http/heap.py``), so tests do
not see each other's transactions. A reset issues the participants' keys again:
``ServedWorld.api_keys`` holds the current ones. Override ``clearing_sim_world`` (a world
file's path) and ``clearing_sim_seed`` in a ``conftest.py`` to choose the world. When a test
that used ``clearing_sim`` fails, its report carries the server's output since that test's
reset.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from attrs import define, field

from clearing_sim.domain.jsontext import parse_untrusted

__all__ = ["ServedWorld", "ServerFailed", "ShimClient", "served_world"]

_SERVING = "clearing-sim serving on "
_POLL_S = 0.01
_STOP_GRACE_S = 10.0


class ServerFailed(RuntimeError):
    """The server exited or did not become ready in time; the message carries its output."""


class ShimClient:
    """The operator's calls a test makes most, over one ``httpx.Client`` (``http``, whose
    requests carry the operator token; pass another ``Authorization`` for ``/api/v1``)."""

    def __init__(self, base_url: str, operator_token: str, timeout_s: float = 30.0) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=timeout_s,
                                 headers={"Authorization": f"Bearer {operator_token}"})

    def _data(self, method: str, path: str, body: Any = None, *,
              headers: dict[str, str] | None = None, expect: int = 200) -> Any:
        answer = self.http.request(method, path, json=body, headers=headers)
        if answer.status_code != expect:
            raise AssertionError(f"{method} {path}: expected {expect}, got "
                                 f"{answer.status_code}: {answer.text[:2000]}")
        return parse_untrusted(answer.content)["data"]

    def clock(self) -> dict[str, Any]:
        """``GET /sim/v1/clock``."""
        return dict(self._data("GET", "/sim/v1/clock"))

    def advance(self, seconds: float | None = None, *, until: str | None = None,
                **more: Any) -> dict[str, Any]:
        """``POST /sim/v1/clock/advance`` by ``seconds`` or ``until`` an ISO 8601 instant
        (``more``: any other field the route takes); the clock after it."""
        body = {name: value for name, value in (("seconds", seconds), ("until", until))
                if value is not None}
        return dict(self._data("POST", "/sim/v1/clock/advance", {**body, **more}))

    def add_participant(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /sim/v1/participants``: ``{participantId, apiKey, adminToken, assets, …}``."""
        return dict(self._data("POST", "/sim/v1/participants", body, expect=201))

    def arm_outcome(self, admin_token: str, transaction_id: str,
                    scenario: str) -> dict[str, Any]:
        """The API's ``POST /api/v1/conformance/run``: the issuer answers this transaction
        with ``scenario`` (``failed``, ``rejected``, ``silence``, …); needs the member's
        tenant-admin token (``adminToken`` of ``add_participant``)."""
        return dict(self._data("POST", "/api/v1/conformance/run",
                               {"scenario": scenario, "transactionId": transaction_id},
                               headers={"Authorization": f"Bearer {admin_token}"}))

    def reset(self, seed: int | None = None) -> dict[str, Any]:
        """``POST /sim/v1/reset``: ``{seed, environment, clock, participants}``, each
        participant with its new ``apiKey``."""
        return dict(self._data("POST", "/sim/v1/reset", {} if seed is None else {"seed": seed}))

    def close(self) -> None:
        self.http.close()


@define
class ServedWorld:
    """A running ``clearing-sim serve``: where it is, its token, its keys and a client."""

    base_url: str
    operator_token: str
    process: subprocess.Popen[bytes]
    stdout_path: Path
    stderr_path: Path
    client: ShimClient
    #: the world file's participants: name in the file -> current API key / participant id
    api_keys: dict[str, str] = field(factory=dict)
    participant_ids: dict[str, str] = field(factory=dict)
    #: the seed it started with (the one the ``clearing_sim`` fixture resets to)
    seed: int = 0
    _mark: tuple[int, int] = (0, 0)  # the output's size at the last reset
    _kept: tuple[str, str] | None = None  # the whole output, kept once the server stopped

    def reset(self, seed: int | None = None) -> dict[str, Any]:
        """A fresh world (the world file's, again); the keys it issued replace ``api_keys``."""
        self._mark = (len(self.stdout), len(self.stderr))
        answer = self.client.reset(seed)
        self.api_keys = {p["key"]: p["apiKey"] for p in answer["participants"]}
        self.participant_ids = {p["key"]: p["participantId"] for p in answer["participants"]}
        return answer

    def output(self, *, since_reset: bool = False) -> str:
        """What the server printed (standard output, then standard error)."""
        out, err = self.stdout, self.stderr
        if since_reset:
            out, err = out[self._mark[0]:], err[self._mark[1]:]
        return out + (f"--- stderr ---\n{err}" if err else "")

    @property
    def stdout(self) -> str:
        """Everything the server printed on standard output so far (all of it once stopped)."""
        return self._kept[0] if self._kept is not None else _read(self.stdout_path)

    @property
    def stderr(self) -> str:
        return self._kept[1] if self._kept is not None else _read(self.stderr_path)

    def keep_output(self) -> None:
        """Read the output files for good (``served_world`` does it once the server stopped,
        before its temporary folder goes)."""
        self._kept = (_read(self.stdout_path), _read(self.stderr_path))


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _command(world_file: str | os.PathLike[str] | None, seed: int | None, token: str,
             host: str, args: Sequence[str]) -> list[str]:
    command = [sys.executable, "-m", "clearing_sim", "serve", "--host", host, "--port", "0",
               "--operator-token", token]
    if seed is not None:
        command += ["--seed", str(seed)]
    if world_file is not None:
        command += ["--world", os.fspath(world_file)]
    return [*command, *args]


def _wait_base_url(process: subprocess.Popen[bytes], stdout: Path, stderr: Path,
                   deadline: float) -> str:
    """The address from the ``clearing-sim serving on URL`` line."""
    while True:
        for line in _read(stdout).splitlines():
            if line.startswith(_SERVING):
                return line[len(_SERVING):].split()[0]
        _check_running(process, stdout, stderr, deadline, "print its address")
        time.sleep(_POLL_S)


def _check_running(process: subprocess.Popen[bytes], stdout: Path, stderr: Path,
                   deadline: float, waiting_for: str) -> None:
    if process.poll() is not None:
        raise ServerFailed(f"clearing-sim serve exited ({process.returncode}) before it could "
                           f"{waiting_for}:\n{_read(stdout)}{_read(stderr)}")
    if time.monotonic() > deadline:
        raise ServerFailed(f"clearing-sim serve did not {waiting_for} in time:\n"
                           f"{_read(stdout)}{_read(stderr)}")


def _wait_ready(process: subprocess.Popen[bytes], http: httpx.Client, stdout: Path,
                stderr: Path, deadline: float) -> None:
    """Until ``GET /sim/v1/health`` answers ``ready: true``."""
    while True:
        try:
            answer = http.get("/sim/v1/health")
            if answer.status_code == 200 \
                    and parse_untrusted(answer.content)["data"]["ready"] is True:
                return
        except (httpx.TransportError, ValueError):  # not listening yet; not our server
            pass
        _check_running(process, stdout, stderr, deadline, "become ready")
        time.sleep(_POLL_S)


def _seed(banner: str) -> int:
    """The seed the ``clearing-sim serving on URL (… world, seed N, …)`` line names."""
    found = re.search(r"^" + re.escape(_SERVING) + r".*\bseed (-?\d+)", banner, re.MULTILINE)
    assert found is not None, banner
    return int(found.group(1))


def _staged(banner: str) -> tuple[dict[str, str], dict[str, str]]:
    """API keys and ids from the ``participant KEY: ID (kind) API key K`` lines."""
    keys, ids = {}, {}
    for line in banner.splitlines():
        if line.startswith("participant ") and " API key " in line:
            words = line.split()
            keys[words[1].rstrip(":")] = words[-1]
            ids[words[1].rstrip(":")] = words[2]
    return keys, ids


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Ctrl-C (it stops cleanly and prints its digest), then kill after the grace period."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def served_world(world_file: str | os.PathLike[str] | None = None, *, seed: int | None = None,
                 operator_token: str | None = None, args: Sequence[str] = (),
                 host: str = "127.0.0.1", startup_timeout_s: float = 60.0,
                 output_dir: str | os.PathLike[str] | None = None) -> Iterator[ServedWorld]:
    """``clearing-sim serve`` on a free port until the block ends (see the module's text).

    ``seed``: ``--seed`` (``None``: the world file's, or 0); ``operator_token``: a random one
    when not given; ``args``: more ``serve`` options (``--journal F``, ``--clock realtime``,
    …); ``output_dir``: where the server's output files go (a temporary folder, removed at
    the end, when not given). ``ServerFailed`` when it exits or is not ready in time."""
    token = operator_token if operator_token is not None else secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="clearing-sim-") as scratch:
        folder = Path(output_dir) if output_dir is not None else Path(scratch)
        stdout, stderr = folder / "serve.stdout", folder / "serve.stderr"
        with stdout.open("wb") as out, stderr.open("wb") as err:
            process = subprocess.Popen(_command(world_file, seed, token, host, args),
                                       stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                       env={**os.environ, "NO_COLOR": "1"})
        client: ShimClient | None = None
        server: ServedWorld | None = None
        try:
            deadline = time.monotonic() + startup_timeout_s
            base_url = _wait_base_url(process, stdout, stderr, deadline)
            client = ShimClient(base_url, token)
            _wait_ready(process, client.http, stdout, stderr, deadline)
            banner = _read(stdout)
            keys, ids = _staged(banner)
            server = ServedWorld(base_url, token, process, stdout, stderr, client, keys, ids,
                                 _seed(banner))
            yield server
        finally:
            if client is not None:
                client.close()
            _stop(process)
            if server is not None:
                server.keep_output()
