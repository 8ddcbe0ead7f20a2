"""Helpers for the analysis tests: write a variant of the tiny workload, collect problems,
take a snapshot of a folder."""

from __future__ import annotations

from pathlib import Path

from clearing_sim.analysis import load_workload
from clearing_sim.analysis.sweepfile import load_sweep
from clearing_sim.scenario.errors import ScenarioInvalid

TINY_TEXT = (Path(__file__).resolve().parent / "inputs" / "tiny.yaml").read_text()


def workload_problems(path: Path) -> list[str]:
    """The rendered problems of a workload file (empty when it loads)."""
    try:
        load_workload(path)
    except ScenarioInvalid as error:
        return error.lines()
    return []


def sweep_problems(path: Path) -> list[str]:
    try:
        load_sweep(path)
    except ScenarioInvalid as error:
        return error.lines()
    return []


def variant(tmp: Path, old: str, new: str, name: str = "w.yaml") -> Path:
    """The tiny workload with ``old`` replaced by ``new`` (which must occur), in ``tmp``."""
    assert old in TINY_TEXT, old
    target = tmp / name
    target.write_text(TINY_TEXT.replace(old, new, 1), encoding="utf-8")
    return target


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``folder``, by relative path."""
    return {path.relative_to(folder).as_posix(): path.read_bytes() if path.is_file() else None
            for path in sorted(folder.rglob("*"))}
