"""The commands that need no analysis or HTTP stack start without importing it (issue: the
engine, three times faster: "``clearing-sim run scenarios/`` and ``clearing-sim --help``
start fast ... keep pandas, matplotlib, dask and pyarrow out of the paths that do not need
them").

Each case runs the command in a fresh interpreter, then lists which heavy packages were
imported. ``--help`` lists the lazy commands from ``LAZY_SUMMARIES``, which must stay equal
to the first line of each command's own help.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clearing_sim import cli

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "matplotlib", "dask", "pyarrow", "numpy", "starlette", "uvicorn",
         # imported by jsonschema for formats we never check: rfc3987_syntax 2 s, the others
         # (arrow through isoduration) a tenth of the CLI's start (issue 30)
         "rfc3987_syntax", "isoduration", "arrow", "rfc3986_validator", "webcolors",
         # issue 30, section 3: a run of valid files builds no jsonschema validator (the plain
         # check judges them); the doors' and the test kit's packages stay with their commands
         "jsonschema", "referencing", "httpx", "hypothesis", "cryptography")

PROBE = """
import json, sys
from clearing_sim.cli import main
try:
    main(sys.argv[1:], prog_name="clearing-sim")
except SystemExit:
    pass
heavy = sorted(name for name in sys.modules if name.split(".")[0] in {heavy!r})
print(json.dumps(heavy), file=sys.stderr)
"""


def _heavy_imports(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=set(HEAVY)), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    last = done.stderr.strip().splitlines()[-1]
    modules = json.loads(last)
    assert isinstance(modules, list)
    return modules


@pytest.mark.parametrize("args", [("--help",), ("run", "scenarios/"), ("validate", "scenarios/")])
def test_commands_without_analysis_or_http_import_none_of_their_packages(
        args: tuple[str, ...]) -> None:
    assert _heavy_imports(*args) == []


def test_the_probe_sees_a_heavy_import_when_a_command_needs_one() -> None:
    """The check can fail: ``workload --help`` imports the analysis stack (pandas)."""
    assert "pandas" in _heavy_imports("workload", "--help")


def test_the_probe_sees_jsonschema_when_a_file_breaks_the_schema(tmp_path: Path) -> None:
    """The check can fail: a file the plain check refuses is worded by jsonschema, imported
    then and only then (``clearing_sim.scenario.schema``)."""
    broken = tmp_path / "broken.yaml"
    broken.write_text("scenario: broken\nsteps: 3\n", encoding="utf-8")
    assert "jsonschema" in _heavy_imports("validate", str(broken))


@pytest.mark.parametrize("name", sorted(cli.LAZY_COMMANDS))
def test_each_lazy_summary_is_the_first_line_of_its_commands_help(name: str) -> None:
    command = cli.main.get_command(None, name)  # type: ignore[arg-type]
    assert command is not None and command.help is not None
    assert name in cli.LAZY_SUMMARIES, f"add the lazy command {name!r} to LAZY_SUMMARIES"
    assert command.help.strip().splitlines()[0] == cli.LAZY_SUMMARIES[name]


@pytest.mark.parametrize("name", ["rfc3987_syntax", "isoduration", "idna", "webcolors"])
def test_jsonschema_without_its_format_checkers_leaves_their_packages_importable(
        name: str) -> None:
    """``clearing_sim.scenario.jsonschema_import`` keeps the format checkers' packages
    (``rfc3987_syntax`` 2 s) out of the CLI's start, and only while jsonschema is first
    imported: anything else can still import them."""
    probe = ("import importlib.util, sys\n"
             "import clearing_sim.scenario.jsonschema_import\n"
             f"assert {name!r} not in sys.modules\n"
             f"if importlib.util.find_spec({name!r}) is not None:\n"
             f"    import {name}\n"
             f"    assert sys.modules[{name!r}] is not None\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
