"""The README's curl walkthrough, pasted as one block into bash (issue 19: it raced the
server's start), against a real ``clearing-sim serve`` on a free loopback port: every JSON
line it prints is the one its comments promise (``…`` elides the rest of a value; a comment
``# …`` skips lines)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from clearing_sim.cli import main
from clearing_sim.http import ServeOptions
from clearing_sim.http.simulation import Simulation
from clearing_sim.scenario.loader import parse_scenario
from clearing_sim.scenario.runner import play

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


def _walkthrough(tmp_path: Path, *serve_args: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    """The README's block run by bash against ``clearing-sim serve`` on a free port (with
    ``serve_args``); the block and what it printed."""
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
    more = "".join(f" {arg}" for arg in serve_args)
    script = ("trap 'kill $(jobs -p) 2>/dev/null' EXIT\n"
              + block.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
              .replace(serve, serve.replace(" &", f" --port {port}{more} &")))
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
    return block, done


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="curl, jq")
def test_the_readme_walkthrough_pasted_as_one_block_prints_what_it_promises(
        tmp_path: Path) -> None:
    block, done = _walkthrough(tmp_path)
    expected = [line[2:] for line in block.splitlines()
                if line.startswith(("# {", "# …"))]
    actual = [line for line in done.stdout.splitlines() if line.startswith("{")]
    _check(expected, actual)
    assert "clearing-sim stopped at virtual 2026-01-01T00:06:00.000Z" in done.stdout


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="curl, jq")
def test_the_readme_walkthrough_session_exports_to_a_scenario_that_replays_it(
        tmp_path: Path) -> None:
    """Issue 27: ``journal export`` refused the README's own session ("POST
    /sim/v1/participants has no scenario step"). Its participants are now ``operator:
    {add_participant}`` steps, the calls made with their keys ``as`` them: the exported file
    passes under ``clearing-sim run`` and, its keys sealed as the served world's were, ends
    with the session's digest."""
    journal = tmp_path / "session.jsonl"
    _, done = _walkthrough(tmp_path, "--journal", str(journal))
    [digest] = [json.loads(line)["digest"] for line in done.stdout.splitlines()
                if line.startswith('{"digest":')]
    out = tmp_path / "walkthrough.yaml"
    exported = CliRunner().invoke(main, ["journal", "export", str(journal), "--operator-token",
                                         "devtoken1", "--scenario", str(out)])
    assert exported.exit_code == 0, exported.output
    steps = yaml.safe_load(out.read_text())["steps"]
    added = [s["operator"]["add_participant"] for s in steps if "add_participant" in
             s.get("operator", {})]
    assert [(a["key"], a["kind"]) for a in added] == [
        ("ether-pound", "stablecoin_issuer"), ("northbank", "clearing_member")]
    calls = [s["call"] for s in steps if "call" in s]
    assert {c.get("as") for c in calls} == {"northbank"}
    assert [c for c in calls if c.get("credential") == "admin"]  # the adminToken's arm
    run = CliRunner().invoke(main, ["run", str(out)])
    assert run.exit_code == 0, run.output
    # The file's own run signs with keys from the seed alone (it does not hold the operator
    # token that sealed the session's): it expects its own digest and names the session's.
    # Sealed with the session's key secret, the same steps end with the session's digest.
    [at] = [i for i, s in enumerate(steps) if "digest" in s.get("expect", {})]
    assert digest in steps[at]["name"]
    session_steps = {**yaml.safe_load(out.read_text()), "steps": steps[:at]}
    scenario = parse_scenario(yaml.safe_dump(session_steps), str(out))
    secret = Simulation(ServeOptions(operator_token="devtoken1")).key_secret
    result, _ = play(scenario, key_secret=secret)
    assert result.passed and result.digest == digest
