"""Install what each user needs (issue 19): the core install runs scenario files and the HTTP
shim without pandas, matplotlib, pyarrow or Dask; a command that needs an extra says which
one, never a traceback. Proved in a fresh interpreter where those packages cannot be
imported (an import hook refuses them, as a core install lacks them); ``pyproject.toml``'s
extras are checked to bring what ``clearing_sim.commands.extras`` asks for."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from clearing_sim.commands.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "numpy", "matplotlib", "pyarrow", "dask", "distributed", "nbclient",
         "nbformat", "nbconvert", "ipykernel")

_WITHOUT_EXTRAS = f"""
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Refuse())
"""


def _core(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WITHOUT_EXTRAS + code], capture_output=True,
                          text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})


def _cli(*args: str) -> str:
    return ("from clearing_sim.cli import main\n"
            f"main({list(args)!r}, prog_name='clearing-sim')\n")


def test_the_core_install_runs_the_scenario_library() -> None:
    done = _core(_cli("run", "scenarios/"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 failed" in done.stdout and "Traceback" not in done.stderr


def test_the_core_install_serves_the_shim() -> None:
    done = _core("""
import asyncio, httpx
from clearing_sim.http import ServeOptions, create_app
async def main():
    app = create_app(ServeOptions(operator_token="core-token"))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://t") as http:
        clock = await http.get("/sim/v1/clock", headers={"Authorization": "Bearer core-token"})
        doc = await http.get("/openapi.json")
        print(clock.status_code, doc.status_code)
asyncio.run(main())
assert not [m for m in sys.modules if m.split(".")[0] in ("pandas", "matplotlib", "dask")]
""")
    assert done.returncode == 0 and done.stdout.split() == ["200", "200"], done.stderr


def test_a_command_that_needs_an_extra_names_it() -> None:
    listed = _core(_cli("--help"))
    assert listed.returncode == 0, listed.stderr
    assert "workload" in listed.stdout and "needs the 'analysis' extra" in listed.stdout
    done = _core(_cli("workload", "notebooks/inputs/mixed.yaml", "--seed", "1"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "needs the 'analysis' extra" in done.stderr
    assert "pip install 'clearing-sim[analysis]'" in done.stderr
    assert "Traceback" not in done.stderr
    imported = _core("import clearing_sim.analysis")
    assert "MissingExtra" in imported.stderr and "'analysis' extra" in imported.stderr


def test_a_dask_sweep_without_the_sweeps_extra_names_it() -> None:
    done = _core("""
from clearing_sim.commands.extras import MissingExtra, require
try:
    require("sweeps", "a sweep on a Dask cluster (--dask)")
except MissingExtra as error:
    print(error)
""")
    assert "needs the 'sweeps' extra" in done.stdout, done.stderr


def test_the_extras_bring_what_the_code_asks_for() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"]).lower()
    assert not any(name in core for name in ("pandas", "matplotlib", "pyarrow", "dask"))
    extras = project["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    text = {name: " ".join(deps).lower() for name, deps in extras.items()}
    assert all(p in text["analysis"] for p in ("pandas", "matplotlib", "pyarrow"))
    assert "dask[distributed]" in text["sweeps"] and "jupyter" in text["notebooks"]
    assert "nbconvert" in text["notebooks"]
    assert "clearing-sim[analysis,sweeps,notebooks]" in text["dev"]
