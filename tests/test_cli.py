"""The CLI's demo command: runs every path, prints a stable digest, answers bad input with
exit code 2 and a usage message, never a traceback (DESIGN.md, Bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

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


# validate ------------------------------------------------------------------------------------
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
VALID = (SCENARIOS / "rejected-redeem-unwinds.yaml").read_text()


def _validate(*paths: str) -> Result:
    result = CliRunner().invoke(main, ["validate", *paths])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def test_validate_prints_ok_per_file_and_exits_0(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yml").write_text(VALID)
    result = _validate(str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{tmp_path / 'a.yaml'}: ok",
                                          f"{tmp_path / 'sub' / 'b.yml'}: ok"]


def test_validate_the_scenario_library() -> None:
    result = _validate(str(SCENARIOS))
    assert result.exit_code == 0, result.output
    assert all(line.endswith(": ok") for line in result.output.splitlines())


def test_validate_reports_each_problem_with_file_line_column_and_field(tmp_path: Path) -> None:
    bad_yaml = tmp_path / "bad-yaml.yaml"
    bad_yaml.write_text("scenario: x\nsteps: [\n")
    schema = tmp_path / "schema.yaml"
    schema.write_text(VALID.replace("seed: 11", "seed: eleven"))
    semantic = tmp_path / "semantic.yaml"
    semantic.write_text(VALID.replace('transaction: "${tx}", scenario: rejected',
                                      'transaction: "${txn}", scenario: rejected'))
    result = _validate(str(bad_yaml), str(schema), str(semantic), str(tmp_path / "good.yaml"))
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"{bad_yaml}:3:1: YAML syntax: while parsing a flow node, expected the node content, "
        "but found '<stream end>'",
        f"{schema}:6:9: world.seed: expected an integer, got the string \"eleven\"",
        f"{semantic}:43:24: steps[1].arm.transaction: ${{txn}} is not defined: no earlier step "
        "saves 'txn' (did you mean tx?); expected a name from an earlier step's save, a name of "
        "the world with an attribute, or now",
        f"{tmp_path / 'good.yaml'}: no such file or folder"]


def test_validate_a_folder_without_scenarios_or_nothing_at_all_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no scenarios here")
    result = _validate(str(tmp_path))
    assert result.exit_code == 2
    assert result.output == f"{tmp_path}: no scenario files (*.yaml, *.yml) in this folder\n"
    assert _validate().exit_code == 2


def test_validate_help_has_an_example() -> None:
    result = CliRunner().invoke(main, ["validate", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "clearing-sim validate scenarios/" in result.output


MALFORMED = {  # what is wrong → (how to break the valid file, the line and field reported)
    "bad YAML": (("seed: 11", "seed: [11"), ":8:8: YAML syntax: while parsing a flow sequence"),
    "unknown key": (("  seed: 11", "  seed: 11\n  sed: 12"), ":7:3: world.sed: unknown field"),
    "wrong type": (("status: 201", "status: created"), ":41:15: steps[0].expect.status"),
    "missing field": (("      method: POST\n", ""), ":30:7: steps[0].call.method: missing"),
    "bad duration": (("timeout: 1h", "timeout: 1 hour"), ":49:16: steps[2].wait_until.timeout"),
    "unknown participant": (("      as: northbank", "      as: southbank"),
                            ":30:11: steps[0].call.as: unknown participant"),
    "undefined reference": (('id: "${tx}"\n        fields: {terminal',
                             'id: "${tx2}"\n        fields: {terminal'),
                            ":47:13: steps[2].wait_until.transaction.id: ${tx2} is not defined"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_validate_malformed_files_exit_2_at_the_line(case: str, tmp_path: Path) -> None:
    (old, new), where = MALFORMED[case]
    assert old in VALID
    target = tmp_path / "bad.yaml"
    target.write_text(VALID.replace(old, new, 1))
    result = _validate(str(target))
    assert result.exit_code == 2
    assert result.output.startswith(f"{target}{where}"), result.output


def _on_a_terminal(*args: str, **env: str) -> bytes:
    """Run the CLI with its standard output on a pseudo-terminal; what it wrote there."""
    import os
    import pty
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    master, slave = pty.openpty()
    done = subprocess.run([sys.executable, "-m", "clearing_sim.cli", *args], stdout=slave,
                          stderr=subprocess.PIPE, cwd=root, timeout=60,
                          env={**{k: v for k, v in os.environ.items() if k != "NO_COLOR"},
                               "PYTHONPATH": str(root), **env})
    os.close(slave)
    out = b""
    try:
        while chunk := os.read(master, 65536):
            out += chunk
    except OSError:  # the terminal's other end closed
        pass
    os.close(master)
    assert done.returncode == 0, done.stderr
    return out


def test_no_color_turns_colour_off_on_a_terminal() -> None:
    """https://no-color.org: colour on a terminal, none when NO_COLOR is set and not empty."""
    args = ("validate", "scenarios/cancelled-path.yaml")
    assert b"\x1b[" in _on_a_terminal(*args)
    plain = _on_a_terminal(*args, NO_COLOR="1")
    assert b"\x1b[" not in plain and b"cancelled-path.yaml: ok" in plain


_SCENARIO = "scenarios/webhook-retry-schedule.yaml"


@pytest.mark.parametrize("args", [
    ["run", _SCENARIO, "--junit", "/dev/full"],
    ["run", _SCENARIO, "--junit", "/proc/no/such.xml"],
    ["run", _SCENARIO, "--log", "/dev/full"],
    ["run", _SCENARIO, "--log", "/proc/no/such.jsonl"],
    ["demo", "--log", "/dev/full"],
], ids=" ".join)
def test_an_output_the_system_refuses_is_exit_2_with_its_reason_not_a_traceback(
        args: list[str]) -> None:
    """Bad input gets a clear answer: an output under /proc or on a full disk raised
    OSError out of the command (exit 1 and a traceback, for `workload --out` after the
    whole run). Every command's OSError is the system's sentence and exit 2."""
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert "No space left on device" in result.output or "No such file" in result.output
