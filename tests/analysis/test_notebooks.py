"""The notebooks run in CI on small inputs (nbclient), and are committed without outputs."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import nbformat
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
