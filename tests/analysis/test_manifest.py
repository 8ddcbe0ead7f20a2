"""Issue 29 §2: every output carries its manifest (seeds, input hashes, version, digests,
record counts, the command that makes it again) in its Parquet files' metadata, its folder
(manifest.json) and the report's footer; nothing in it varies between identical runs; and
`report` refuses results whose manifests mix versions or inputs, warning on results written
before manifests existed."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from clearing_sim.analysis.cli import report, sweep, workload
from clearing_sim.analysis.manifest import (
    MANIFEST_FILE,
    read_parquet_manifest,
    write_parquet,
)
from clearing_sim.analysis.resultfiles import read_table
from clearing_sim.analysis.runs import run_folder
from clearing_sim.analysis.sweeps import _METRICS_COLUMNS, SweepResult
from tests.analysis.conftest import INPUTS

TINY_TEXT = (INPUTS / "tiny.yaml").read_text(encoding="utf-8")


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _in(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    """Run a command from ``folder`` with the tiny inputs copied there (relative paths)."""
    folder.mkdir()
    for name in ("tiny.yaml", "two_cases.yaml"):
        shutil.copy(INPUTS / name, folder / name)
    monkeypatch.chdir(folder)
    command = workload if args[0] == "workload" else sweep
    result = CliRunner().invoke(command, list(args[1:]))
    assert result.exit_code == 0, result.output


def test_a_workload_run_writes_its_manifest_everywhere_and_the_same_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _in(tmp_path / "a", monkeypatch, "workload", "tiny.yaml", "--seed", "1", "--out", "res")
    _in(tmp_path / "b", monkeypatch, "workload", "tiny.yaml", "--seed", "1", "--out", "res")
    first = _tree(tmp_path / "a" / "res")
    assert first == _tree(tmp_path / "b" / "res")  # byte for byte, in another folder
    manifest = json.loads(first[MANIFEST_FILE])
    assert manifest["kind"] == "workload" and manifest["seed"] == 1
    assert manifest["inputs"]["workload"] == {
        "file": "tiny.yaml", "sha256": hashlib.sha256(TINY_TEXT.encode()).hexdigest()}
    assert manifest["command"] == "clearing-sim workload tiny.yaml --seed 1 --out res"
    assert len(manifest["digest"]) == 64 and manifest["records"] > manifest["transactions"] > 0
    for name in (n for n in first if n.endswith(".parquet")):
        assert read_parquet_manifest(tmp_path / "a" / "res" / name) == manifest, name
    text = first[MANIFEST_FILE].decode()
    assert str(tmp_path) not in text and socket.gethostname() not in text


def test_a_sweep_writes_its_manifest_everywhere_and_the_same_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _in(tmp_path / "a", monkeypatch, "sweep", "two_cases.yaml", "--seeds", "0", "--out", "res")
    _in(tmp_path / "b", monkeypatch, "sweep", "two_cases.yaml", "--seeds", "0", "--out", "res")
    out = tmp_path / "a" / "res"
    first = _tree(out)
    assert first == _tree(tmp_path / "b" / "res")
    manifest = json.loads(first[MANIFEST_FILE])
    assert manifest["kind"] == "sweep" and manifest["seeds"] == [0]
    assert manifest["command"] == "clearing-sim sweep two_cases.yaml --seeds 0 --out res"
    assert set(manifest["inputs"]) == {"sweep", "workload"}
    assert manifest["records"] == sum(run["records"] for run in manifest["runs"])
    assert read_parquet_manifest(out / "metrics.parquet") == manifest
    assert read_parquet_manifest(out / "runs.parquet") == manifest
    for run in manifest["runs"]:
        folder = run_folder(out, run["param_id"], run["seed"])
        mine = json.loads((folder / "run.json").read_text())["manifest"]
        assert (mine["kind"], mine["digest"], mine["seed"]) == ("run", run["digest"], 0)
        assert mine["inputs"]["workload"] == manifest["inputs"]["workload"]
        assert read_parquet_manifest(folder / "transactions.parquet") == mine


@pytest.fixture()
def results(tiny_sweep: SweepResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the tiny sweep's results; its pages without figures (not the subject here,
    and the slowest part of a page)."""
    monkeypatch.setattr("clearing_sim.analysis.report.report_figures", lambda results: [])
    assert tiny_sweep.out is not None
    out = tmp_path / "results"
    shutil.copytree(tiny_sweep.out, out)
    return out


def test_the_report_footer_carries_the_manifest(results: Path) -> None:
    done = CliRunner().invoke(report, [str(results)])
    assert done.exit_code == 0, done.output
    page = (results / "report.html").read_text(encoding="utf-8")
    footer = page[page.index("<footer>"):page.index("</footer>")]
    manifest = json.loads((results / MANIFEST_FILE).read_text())
    assert manifest["inputs"]["workload"]["sha256"] in footer
    assert all(run["digest"] in footer for run in manifest["runs"])


def test_report_refuses_a_run_of_another_version(results: Path) -> None:
    run = next(results.glob("runs/*/seed-*/run.json"))
    info = json.loads(run.read_text())
    info["manifest"]["version"] = "0.0.1"
    run.write_text(json.dumps(info))
    done = CliRunner().invoke(report, [str(results)])
    assert done.exit_code == 2, done.output
    assert f"Error: {run}: made by clearing-sim 0.0.1" in done.output
    assert "mix versions" in done.output and not (results / "report.html").exists()


def test_report_refuses_metrics_of_another_sweep_file(results: Path) -> None:
    path = results / "metrics.parquet"
    manifest = read_parquet_manifest(path)
    assert manifest is not None
    manifest["inputs"]["sweep"]["sha256"] = "0" * 64
    write_parquet(read_table(path, _METRICS_COLUMNS), path, manifest)
    done = CliRunner().invoke(report, [str(results)])
    assert done.exit_code == 2, done.output
    assert f"Error: {path}: made from another sweep file" in done.output
    assert "mix inputs" in done.output


def test_report_warns_on_results_without_a_manifest_and_goes_on(results: Path) -> None:
    (results / MANIFEST_FILE).unlink()
    done = CliRunner().invoke(report, [str(results)])
    assert done.exit_code == 0, done.output
    assert "warning: " in done.output and "written before manifests existed" in done.output
    assert "None: these results were written before" in \
        (results / "report.html").read_text(encoding="utf-8")


def test_report_warns_on_runs_finished_before_manifests_existed(results: Path) -> None:
    """A sweep finished with the same version before manifests existed, then resumed: its
    old runs have none. Read with a warning, not refused (same version, nothing to compare)."""
    run = next(results.glob("runs/*/seed-*/run.json"))
    info = json.loads(run.read_text())
    del info["manifest"]
    run.write_text(json.dumps(info))
    done = CliRunner().invoke(report, [str(results)])
    assert done.exit_code == 0, done.output
    assert f"warning: 1 of the 4 runs in {results} were written before manifests" in done.output
