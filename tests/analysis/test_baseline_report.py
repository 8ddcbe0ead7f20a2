"""The committed baseline report (reports/baseline.html) replays: rerunning its sweep, with the
seeds it lists, gives every run the digest the report shows; and (slow) its one command,
rerun, writes the same page byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from clearing_sim.analysis import load_sweep, sweep
from clearing_sim.analysis.report import read_replay

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "reports" / "baseline.html"


def test_regenerating_the_baseline_data_gives_the_same_digests() -> None:
    facts = read_replay(REPORT.read_text(encoding="utf-8"))
    assert facts["command"] == ("clearing-sim sweep reports/baseline/sweep.yaml --seeds 0-2 "
                                "--out reports/baseline/results")
    page = REPORT.read_text(encoding="utf-8")
    assert "clearing-sim report reports/baseline/results --out reports/baseline.html" in page
    plan = load_sweep(ROOT / facts["sweepFile"], facts["seeds"])
    assert [p.param_id for p in plan.params] == [p["param_id"] for p in facts["params"]]
    rerun = sweep(plan)  # in memory: the committed results folder is not needed
    assert rerun.digests == {(r["param_id"], r["seed"]): r["digest"] for r in facts["runs"]}


def test_every_documented_baseline_command_names_the_page_it_writes() -> None:
    """Issue 29 §2: `--report` alone now writes inside the results folder; the committed
    baseline's command names reports/baseline.html, wherever it is written down."""
    documents = ["README.md", "docs/analysis.md", "reports/README.md",
                 "reports/baseline/sweep.yaml"]
    for name in documents:
        lines = [line for line in (ROOT / name).read_text(encoding="utf-8").splitlines()
                 if "clearing-sim sweep reports/baseline/sweep.yaml" in line]
        assert lines, name
        for line in lines:
            assert line.rstrip().endswith("--report reports/baseline.html"), (name, line)


@pytest.mark.slow
def test_the_baseline_command_rewrites_the_committed_page_byte_for_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29 §2: the manifest holds nothing that varies between identical runs, so the
    committed command, run in a fresh copy of its inputs, writes the committed bytes."""
    from clearing_sim.analysis.cli import sweep as sweep_command

    inputs = tmp_path / "reports" / "baseline"
    inputs.mkdir(parents=True)
    for name in ("sweep.yaml", "workload.yaml"):
        shutil.copy(ROOT / "reports" / "baseline" / name, inputs / name)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(sweep_command, [
        "reports/baseline/sweep.yaml", "--out", "reports/baseline/results",
        "--report", "reports/baseline.html"])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "reports" / "baseline.html").read_bytes() == REPORT.read_bytes()
