"""The notebooks run in CI on small inputs (nbclient), and are committed without outputs."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from tests.analysis.conftest import INPUTS

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SMALL = {"latency_and_parking.ipynb": INPUTS / "two_cases.yaml",
         "webhook_reliability.ipynb": INPUTS / "webhook_sweep.yaml",
         "rtgs_hours.ipynb": NOTEBOOKS / "inputs" / "rtgs_hours_sweep.yaml"}


def test_the_notebooks_are_the_ones_tested() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(SMALL)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_committed_notebooks_have_no_outputs(name: str) -> None:
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(book)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (name, cell.id)
        assert not cell.metadata.get("execution"), (name, cell.id)


async def _execute(name: str, results: Path) -> nbformat.NotebookNode:
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    env = {"CLEARING_SIM_SWEEP": str(SMALL[name]), "CLEARING_SIM_SEEDS": "0",
           "CLEARING_SIM_RESULTS": str(results), "CLEARING_SIM_WORKERS": "1"}
    client = NotebookClient(book, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    await client.async_execute(env={**os.environ, **env})
    return book


def test_both_notebooks_run_on_small_inputs(tmp_path: Path) -> None:
    """Each notebook in its own kernel, both at once (kernels start in parallel)."""
    async def both() -> list[nbformat.NotebookNode]:
        return list(await asyncio.gather(*(_execute(name, tmp_path / name) for name in SMALL)))

    for name, book in zip(SMALL, asyncio.run(both()), strict=True):
        outputs = [o for cell in book.cells if cell.cell_type == "code" for o in cell.outputs]
        assert not [o for o in outputs if o.output_type == "error"], name
        assert any("image/png" in o.get("data", {}) for o in outputs), name  # plots rendered
        assert (tmp_path / name / "metrics.parquet").is_file()


@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_notebook_opened_in_notebooks_records_commands_from_the_clone_root(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29 §2: run from notebooks/ (where Jupyter starts it), the notebook recorded
    `clearing-sim sweep inputs/…`, which fails from the clone's root where the README runs
    everything; its inputs cell now moves to the root, so the recorded command works there."""
    from clearing_sim.analysis import load_sweep
    from clearing_sim.analysis.sweeps import SweepResult

    for variable in ("CLEARING_SIM_SWEEP", "CLEARING_SIM_SEEDS", "CLEARING_SIM_RESULTS"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(NOTEBOOKS)
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    inputs = next(c.source for c in book.cells if "CLEARING_SIM_SWEEP" in c.source)
    names: dict[str, object] = {}
    exec(inputs.replace("%matplotlib inline", ""), names)
    plan = load_sweep(str(names["SWEEP"]))
    meta = {"sweepFile": plan.path, "out": str(names["RESULTS"])}
    command = SweepResult(meta, pd.DataFrame(), pd.DataFrame({"seed": [0]})).command
    words = command.split()
    assert (NOTEBOOKS.parent / words[2]).is_file(), command
    assert words[words.index("--out") + 1].startswith("notebooks/results/"), command
