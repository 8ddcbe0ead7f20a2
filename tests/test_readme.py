"""The README's Python examples run and print what their comments say (STYLE: examples are
tests)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_python_block_of_the_readme_runs_and_prints_its_promise() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), {})
        promised = re.findall(r"print\(.*?#\s*(.+)$", block, re.M)
        if promised:
            assert out.getvalue().splitlines()[-len(promised):] == promised


def test_the_readme_fixture_example_is_the_test_file_ci_runs() -> None:
    """Issue 27 §3: the README's pytest example runs in CI, as
    tests/test_readme_fixture_example.py; this keeps the two the same code."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
              if "def test_a_redeem_armed_to_fail_parks(clearing_sim)" in b]
    assert len(blocks) == 1
    example = (README.parent / "tests" / "test_readme_fixture_example.py").read_text()
    assert example.endswith(blocks[0]) and blocks[0].startswith("# test_redeem.py")


# issue 19: what a new user meets, in order ------------------------------------------------
ROOT = README.parent


def test_set_up_starts_with_a_virtual_environment_then_the_two_commands() -> None:
    text = README.read_text()
    setup = text[text.index("## Set-up"):text.index("## Scenario files")]
    venv = setup.index("python3 -m venv .venv && . .venv/bin/activate")
    assert "PEP 668" in setup
    assert venv < setup.index('python -m pip install -e ".[dev]" && clearing-sim run scenarios/')
    assert venv < setup.index('python -m pip install -e ".[dev]" && python -m pytest')


def test_shell_completion_is_documented_and_works() -> None:
    import os
    import subprocess
    import sys

    assert 'eval "$(_CLEARING_SIM_COMPLETE=bash_source clearing-sim)"' in README.read_text()
    done = subprocess.run(
        [sys.executable, "-c", "from clearing_sim.cli import main; main(prog_name='clearing-sim')"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "_CLEARING_SIM_COMPLETE": "bash_source"})
    assert done.returncode == 0 and "complete -o nosort -F" in done.stdout, done.stderr


def test_every_file_a_commands_help_names_exists() -> None:
    from click.testing import CliRunner

    from clearing_sim.cli import main

    named: set[str] = set()
    for command in ("demo", "validate", "run", "timeline", "serve", "workload", "sweep"):
        text = CliRunner().invoke(main, [command, "--help"]).output
        named |= set(re.findall(r"(?:scenarios|notebooks/inputs|reports/\w+)/[\w./-]+\.ya?ml",
                                text))
    assert "scenarios/silence-parks-exactly-at-sla.yaml" in named
    assert [path for path in sorted(named) if not (ROOT / path).is_file()] == []


def test_the_notebooks_commands_name_the_folders_the_notebooks_read() -> None:
    import json

    for name in ("latency_and_parking", "webhook_reliability"):
        cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]
        text = "".join("".join(c["source"]) for c in cells)
        results = re.search(r'"CLEARING_SIM_RESULTS", "([^"]+)"', text)
        assert results is not None
        outs = re.findall(r"--out (\S+)", text) + re.findall(r"clearing-sim report (\S+)", text)
        assert outs and set(outs) == {results.group(1)}, (name, outs)


def test_the_readme_executes_notebooks_into_an_ignored_folder_not_in_place() -> None:
    """Issue 29 §2: `nbconvert --execute --inplace` dirtied a tracked notebook with its
    outputs; the executed copy goes to a folder git ignores."""
    commands = [line for line in README.read_text().splitlines() if "nbconvert --" in line]
    assert commands and all("--inplace" not in line for line in commands), commands
    ignored = {line.strip().rstrip("/") for line in (ROOT / ".gitignore").read_text().splitlines()}
    for line in commands:
        folder = re.search(r"--output-dir (\S+)", line)
        assert folder is not None, line
        assert folder.group(1).split("/")[0] in ignored, line
