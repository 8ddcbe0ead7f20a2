"""A real ``clearing-sim serve`` process on a free loopback port, started and stopped by a
test: this worktree's code (``python -m clearing_sim.cli``), its banner read line by line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from attrs import define, field

from tests.http.conftest import ETHER_POUND_YAML, SETTLED_HOOK_YAML

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "served-token-1"

#: A world file: Northbank and Ether Pound (Mode 2, GBPE on evm), one subscription.
WORLD = """\
world: {seed: 5}
members:
  northbank: {name: Northbank, wallets: {GBPE: "1000.00"}}
""" + ETHER_POUND_YAML + SETTLED_HOOK_YAML


@define
class Served:
    process: subprocess.Popen[str]
    base: str
    banner: list[str] = field(factory=list)
    output: str = ""  # the rest of standard output, once the server has stopped
    errors: str = ""

    def api_key(self, key: str) -> str:
        line = next(b for b in self.banner if b.startswith(f"participant {key}:"))
        return line.split()[-1]

    def participant_id(self, key: str) -> str:
        line = next(b for b in self.banner if b.startswith(f"participant {key}:"))
        return line.split()[2]

    @property
    def operator(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKEN}"}


@contextmanager
def served(tmp_path: Path, *args: str, world: str = WORLD) -> Iterator[Served]:
    """Serve ``world`` until the block ends, then Ctrl-C the server and wait for it."""
    path = tmp_path / "world.yaml"
    path.write_text(world, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "clearing_sim.cli", "serve", "--port", "0", "--operator-token",
         TOKEN, "--world", str(path), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)})
    server: Served | None = None
    try:
        assert process.stdout is not None
        banner = [process.stdout.readline().rstrip("\n")]
        assert banner[0].startswith("clearing-sim serving on http://127.0.0.1:"), banner
        while not banner[-1].startswith("OpenAPI:"):
            banner.append(process.stdout.readline().rstrip("\n"))
        while not banner[-1].startswith("(every subscription's secret"):  # the world has one
            banner.append(process.stdout.readline().rstrip("\n"))
        server = Served(process, banner[0].split()[3], banner)
        httpx.get(f"{server.base}/openapi.json", timeout=10).raise_for_status()  # ready
        yield server
    finally:
        process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        if server is not None:
            server.output, server.errors = out, err
