"""``clearing-sim serve`` configured by CLEARING_SIM_* environment variables (how the
container image is configured, issue 27 section 1): each is named in ``--help``, each is read,
and the command line wins over it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from clearing_sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
ENV_OPTIONS = {"CLEARING_SIM_HOST": "--host", "CLEARING_SIM_PORT": "--port",
               "CLEARING_SIM_SEED": "--seed", "CLEARING_SIM_OPERATOR_TOKEN": "--operator-token",
               "CLEARING_SIM_WORLD": "--world", "CLEARING_SIM_ENVIRONMENT": "--environment",
               "CLEARING_SIM_CLOCK": "--clock", "CLEARING_SIM_JOURNAL": "--journal",
               "CLEARING_SIM_HISTORY_DIR": "--history-dir"}


def _serve(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(main, ["serve", *args], env=env)


@pytest.fixture
def never_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable that was not read lets serve reach its socket: fail there, not serve."""
    def refuse(host: str, port: int) -> None:
        raise AssertionError(f"serve went on to listen on {host}:{port}")
    monkeypatch.setattr("clearing_sim.http.cli._bind", refuse)


def test_help_names_each_environment_variable_beside_its_option() -> None:
    help_text = _serve({}, "--help").output
    options = " ".join(help_text[help_text.index("Options:"):].split())
    for variable, option in ENV_OPTIONS.items():
        after = options[options.index(f" {option} ") + 1:]
        assert f"[env var: {variable}" in after[:after.index(" --", 3)], option


@pytest.mark.parametrize(("env", "args", "message"), [
    ({"CLEARING_SIM_OPERATOR_TOKEN": "short"}, [], "Invalid value for --operator-token"),
    ({"CLEARING_SIM_PORT": "70000"}, [], "Invalid value for '--port'"),
    ({"CLEARING_SIM_SEED": "seven"}, [], "Invalid value for '--seed'"),
    ({"CLEARING_SIM_WORLD": "no-such-world.yaml"}, [], "no-such-world.yaml: no such file"),
    ({"CLEARING_SIM_CLOCK": "realtime"}, ["--speed", "0"], "must be a number above 0"),
    ({"CLEARING_SIM_ENVIRONMENT": "staging"}, [], "Invalid value for '--environment'"),
    ({"CLEARING_SIM_HISTORY_DIR": "no-such-dir"}, [], "Invalid value for '--history-dir'"),
    ({"CLEARING_SIM_HISTORY_DIR": "."}, ["--history-in-memory"], "contradict each other"),
])
@pytest.mark.usefixtures("never_listens")
def test_a_bad_environment_variable_exits_2_like_its_option(
        env: dict[str, str], args: list[str], message: str) -> None:
    result = _serve(env, *args)
    assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.usefixtures("never_listens")
def test_the_command_line_wins_over_the_environment() -> None:
    # realtime from the environment would take --speed; --clock manual refuses it
    result = _serve({"CLEARING_SIM_CLOCK": "realtime"}, "--clock", "manual", "--speed", "2")
    assert result.exit_code == 2 and "--speed applies to --clock realtime only" in result.output


def test_a_server_configured_only_by_the_environment(tmp_path: Path) -> None:
    token = "env-token-0123456789"
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT),
           "CLEARING_SIM_HOST": "127.0.0.1", "CLEARING_SIM_PORT": "0",
           "CLEARING_SIM_SEED": "41", "CLEARING_SIM_OPERATOR_TOKEN": token,
           "CLEARING_SIM_CLOCK": "manual", "CLEARING_SIM_ENVIRONMENT": "production",
           "CLEARING_SIM_JOURNAL": str(tmp_path / "journal.jsonl")}
    process = subprocess.Popen([sys.executable, "-m", "clearing_sim.cli", "serve"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=tmp_path, env=env)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "(production world, seed 41, manual clock" in banner, banner
        base = banner.split()[3]
        assert base.startswith("http://127.0.0.1:") and not base.endswith(":0")
        assert process.stdout.readline().startswith(f"operator token: {token} ")
        rest = [process.stdout.readline(), process.stdout.readline()]
        assert rest[1].startswith(f"journal {tmp_path / 'journal.jsonl'}: new"), rest
        clock = httpx.get(f"{base}/sim/v1/clock", headers={"Authorization": f"Bearer {token}"},
                          timeout=10)
        assert clock.status_code == 200 and clock.json()["data"]["mode"] == "manual"
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert out.startswith("clearing-sim stopped at virtual 2026-01-01T00:00:00.000Z")
    assert (tmp_path / "journal.jsonl").stat().st_size > 0
