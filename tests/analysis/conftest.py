"""Fixtures for the analysis tests: the tiny inputs, and one tiny sweep shared by several."""

from __future__ import annotations

from pathlib import Path

import pytest

from clearing_sim.analysis import SweepResult, run_workload, sweep
from clearing_sim.analysis.runs import WorkloadRun

INPUTS = Path(__file__).resolve().parent / "inputs"
TINY = INPUTS / "tiny.yaml"
TINY_SWEEP = INPUTS / "sweep.yaml"
TWO_CASES = INPUTS / "two_cases.yaml"


@pytest.fixture(scope="session")
def tiny_run() -> WorkloadRun:
    """The tiny workload, seed 0, every frame."""
    return run_workload(TINY, seed=0)


@pytest.fixture(scope="session")
def tiny_sweep(tmp_path_factory: pytest.TempPathFactory) -> SweepResult:
    """Two parameter sets of the tiny workload × seeds 0-1, run in this process, on disk."""
    return sweep(TWO_CASES, out=tmp_path_factory.mktemp("two-cases"))
