"""The README's curl walkthrough, pasted as one block into bash (issue 19: it raced the
server's start), against a real ``clearing-sim serve`` on a free loopback port: every JSON
line it prints is the one its comments promise (``…`` elides the rest of a value; a comment
``# …`` skips lines)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _matches(expected: str, actual: str) -> bool:
    pieces = expected.split("…")
    if not actual.startswith(pieces[0]):
        return False
    at = len(pieces[0])
    for piece in pieces[1:]:
        found = actual.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _check(expected: list[str], actual: list[str]) -> None:
    lines = iter(actual)
    skipping = False
    for want in expected:
        if want.startswith("…"):
            skipping = True
            continue
        for got in lines:
            if _matches(want, got):
                break
            assert skipping, f"expected {want!r}, got {got!r}"
        else:
            raise AssertionError(f"expected {want!r}, the output ended")
        skipping = False


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="curl, jq")
def test_the_readme_walkthrough_pasted_as_one_block_prints_what_it_promises(
        tmp_path: Path) -> None:
    [block] = [b for b in re.findall(r"```bash\n(.*?)```", README.read_text(), re.S)
               if "clearing-sim serve --seed 7" in b]
    assert block.index("until curl -sf") < block.index("$BASE/sim/v1/clock")
    wrapper = tmp_path / "bin" / "clearing-sim"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m clearing_sim.cli "$@"\n')
    wrapper.chmod(0o755)
    port = _free_port()
    serve = "clearing-sim serve --seed 7 --operator-token devtoken1 &"
    assert serve in block
    script = ("trap 'kill $(jobs -p) 2>/dev/null' EXIT\n"
              + block.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
              .replace(serve, serve.replace(" &", f" --port {port} &")))
    process = subprocess.Popen(
        ["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT, start_new_session=True,
        env={"PATH": f"{wrapper.parent}:/usr/bin:/bin", "PYTHONPATH": str(ROOT),
             "NO_COLOR": "1", "HOME": str(tmp_path)})
    try:
        stdout, stderr = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the server, if the block did not end
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    assert "Connection refused" not in done.stderr and "Traceback" not in done.stderr, \
        done.stderr
    expected = [line[2:] for line in block.splitlines()
                if line.startswith(("# {", "# …"))]
    actual = [line for line in done.stdout.splitlines() if line.startswith("{")]
    _check(expected, actual)
    assert "clearing-sim stopped at virtual 2026-01-01T00:06:00.000Z" in done.stdout
