"""The CLI's demo command: runs every path, prints a stable digest, answers bad input with
exit code 2 and a usage message, never a traceback (DESIGN.md, Bad input)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from clearing_sim.cli import main


def test_demo_runs_every_path_and_prints_a_stable_digest() -> None:
    first = CliRunner().invoke(main, ["demo", "--seed", "3"])
    second = CliRunner().invoke(main, ["demo", "--seed", "3"])
    assert first.exit_code == 0, first.output
    assert first.output == second.output
    assert "failed (parked)" in first.output and "cancelled" in first.output
    assert first.output.splitlines()[-1].split("digest ")[1] != ""


def test_demo_writes_the_event_log_as_canonical_json_lines(tmp_path: Path) -> None:
    target = tmp_path / "demo.jsonl"
    result = CliRunner().invoke(main, ["demo", "--log", str(target)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert records[0]["kind"] == "world.created"


def test_bad_input_exits_2_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    for args in (["demo", "--seed", "x"], ["demo", "--bogus"],
                 ["demo", "--log", str(tmp_path / "missing" / "x.jsonl")]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert "Error:" in result.output and "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
