"""``clearing-sim journal show|verify`` and ``serve --journal`` refusals (exit 2)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clearing_sim.cli import main
from tests.http.conftest import TOKEN, add, issuer_body, member_body, redeem_body
from tests.http.test_replay import journaled

ROOT = Path(__file__).resolve().parents[2]


def _recorded(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "session.jsonl"
    client, _ = journaled(path)
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    client.post("/api/v1/transactions", headers={**member.auth, "Idempotency-Key": "k-1"},
                json=redeem_body(issuer.asset))
    client.advance(120)
    client.op("POST", "/sim/v1/checkpoints", {"name": "settled"})
    digest = str(client.sim.world.log.digest())
    client.close()
    return path, digest


def test_show_prints_the_header_and_one_line_per_entry(tmp_path: Path) -> None:
    path, _ = _recorded(tmp_path)
    result = CliRunner().invoke(main, ["journal", "show", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "seed 3, sandbox, no world file, manual clock" in lines[0]
    assert any("POST /api/v1/transactions [Idempotency-Key: k-1] -> 201" in line
               for line in lines)
    assert any("clock to +00:02:00.000" in line for line in lines)
    assert lines[-1].strip().endswith("checkpoint settled (digest " + lines[-1].split(
        "digest ")[1])


def test_verify_replays_to_the_same_digest_in_other_processes_and_hash_seeds(
        tmp_path: Path) -> None:
    """Replay determinism across processes and PYTHONHASHSEED (DESIGN.md)."""
    path, digest = _recorded(tmp_path)
    runs = [subprocess.Popen(
        [sys.executable, "-m", "clearing_sim", "journal", "verify", str(path),
         "--operator-token", TOKEN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hash_seed})
        for hash_seed in ("0", "4242")]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert f"digest {digest}" in out, out


def test_a_journal_for_another_world_exits_2_with_the_reason(tmp_path: Path) -> None:
    path, _ = _recorded(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["serve", "--port", "0", "--journal", str(path),
                                  "--operator-token", "not-the-token"])
    assert result.exit_code == 2
    assert "another operator token" in result.output
    result = runner.invoke(main, ["serve", "--port", "0", "--journal", str(path)])
    assert (result.exit_code, "give --operator-token" in result.output) == (2, True)
    result = runner.invoke(main, ["serve", "--port", "0", "--journal", str(path), "--seed",
                                  "9", "--operator-token", TOKEN])
    assert (result.exit_code, "seed 3 in the journal, 9 here" in result.output) == (2, True)
    result = runner.invoke(main, ["journal", "verify", str(path), "--operator-token", "x" * 9])
    assert (result.exit_code, "another operator token" in result.output) == (2, True)


def test_a_damaged_or_missing_journal_exits_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["journal", "show", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "cannot be read" in missing.output
    path, _ = _recorded(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2][:-3] + b"xx}"
    path.write_bytes(b"\n".join(lines))
    damaged = CliRunner().invoke(main, ["serve", "--port", "0", "--journal", str(path),
                                        "--operator-token", TOKEN])
    assert damaged.exit_code == 2 and ":3: a damaged line" in damaged.output
    assert "Traceback" not in damaged.output


def _at_most_4_gib() -> None:  # a regression reading /dev/zero fails, not the machine
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.skipif(not Path("/dev/zero").exists() or not hasattr(os, "mkfifo"),
                    reason="needs /dev/zero and FIFOs")
def test_a_fifo_or_a_device_as_the_journal_is_refused_not_read(tmp_path: Path) -> None:
    """``serve --journal`` and ``journal show|verify`` read a FIFO (no writer: blocked
    forever) or ``/dev/zero`` (read until memory ran out). Each command runs in a process
    of its own with 60 s to answer, so a regression fails instead of hanging. (10 s was too
    little for six processes importing the package at once on a loaded 2-core CI machine:
    each answered right but was killed before it could exit.)"""
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    commands = [[*command, str(journal)] for journal in (fifo, Path("/dev/zero"))
                for command in (["journal", "show"],
                                ["journal", "verify", "--operator-token", TOKEN],
                                ["serve", "--port", "0", "--operator-token", TOKEN,
                                 "--journal"])]
    runs = [subprocess.Popen([sys.executable, "-m", "clearing_sim", *command],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)},
                             preexec_fn=_at_most_4_gib) for command in commands]
    try:
        for command, run in zip(commands, runs, strict=True):
            _, err = run.communicate(timeout=60)
            what = "a FIFO" if command[-1] == str(fifo) else "a character device"
            assert (run.returncode, f"is {what}; a journal is a regular file" in err) == \
                (2, True), (command, run.returncode, err[-600:])
            assert "Traceback" not in err
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
                run.wait()
    assert fifo.is_fifo()
