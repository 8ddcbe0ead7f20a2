"""The HTML report: self-contained, key tables, figures, and the facts that replay it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from clearing_sim.analysis import load_results, sweep, write_report
from clearing_sim.analysis import sweeps as sweeps_module
from clearing_sim.analysis.report import read_replay
from clearing_sim.analysis.runs import RunOutput, RunTask, execute
from clearing_sim.analysis.sweeps import SweepResult
from tests.analysis.conftest import TWO_CASES


def test_the_report_is_self_contained_and_replayable(tiny_sweep: SweepResult, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert tiny_sweep.out is not None
    monkeypatch.chdir(tmp_path)
    path = write_report(tiny_sweep.out)
    assert path == tiny_sweep.out / "report.html"  # the default: inside the results folder
    assert not (tmp_path / "reports").exists()
    page = path.read_text(encoding="utf-8")
    assert len(re.findall(r'<img alt="" src="data:image/png;base64,', page)) == 5
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched from anywhere
    for heading in ("Replay", "Parameter sets", "Settlement latency by mode",
                    "Parking rate by issuer", "Webhook delivery", "Runs and their digests",
                    "Sweep file", "Workload file"):
        assert heading in page
    facts = read_replay(page)
    assert facts["seeds"] == [0, 1] and facts["version"] == tiny_sweep.meta["version"]
    assert {(r["param_id"], r["seed"]): r["digest"] for r in facts["runs"]} == tiny_sweep.digests
    assert facts["command"] == tiny_sweep.meta["command"]
    assert [p["label"] for p in facts["params"]] == list(tiny_sweep.params["param_label"])
    assert facts["runsPlanned"] == 4 and facts["resume"] is None
    assert "Unfinished" not in page


def test_a_page_without_replay_facts_is_refused() -> None:
    with pytest.raises(ValueError, match="no clearing-sim replay block"):
        read_replay("<html></html>")


class Interrupted(Exception):
    """Stands for Ctrl-C in the middle of a sweep."""


def test_an_interrupted_sweep_reports_only_the_runs_in_its_results(
        tiny_sweep: SweepResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeds 0-1 finished in the folder; the same sweep with seeds 0-3 is stopped after one
    new run: the report states seeds 0-1 and their runs, and how to resume the rest."""
    assert tiny_sweep.out is not None
    out = tmp_path / "grown"
    shutil.copytree(tiny_sweep.out, out)
    ran: list[tuple[str, int]] = []

    def stopping(task: RunTask) -> RunOutput:
        if ran:
            raise Interrupted
        ran.append((task.param_id, task.seed))
        return execute(task)

    monkeypatch.setattr(sweeps_module, "execute", stopping)
    with pytest.raises(Interrupted):
        sweep(TWO_CASES, [0, 1, 2, 3], out=out)
    page = write_report(out, tmp_path / "r.html").read_text(encoding="utf-8")
    facts = read_replay(page)
    assert facts["seeds"] == [0, 1]
    assert {(r["param_id"], r["seed"]) for r in facts["runs"]} == set(tiny_sweep.digests)
    assert facts["command"] == f"clearing-sim sweep {TWO_CASES} --seeds 0-1 --out {out}"
    resume = f"clearing-sim sweep {TWO_CASES} --seeds 0-3 --out {out}"
    assert facts["runsPlanned"] == 8 and facts["resume"] == resume
    assert "seeds <code>0-1</code> (2) · 2 parameter set(s) · 4 runs" in page
    assert ("did not finish: these results hold 4 of its 8 runs. Resume with: "
            f"<code>{resume}</code>") in page
    assert "0-3" not in page.split("Resume with:")[0]
    results = load_results(out)
    assert results.seeds == (0, 1) and len(results.unfinished) == 4

    monkeypatch.setattr(sweeps_module, "execute", lambda task: ran.append(
        (task.param_id, task.seed)) or execute(task))
    done = sweep(TWO_CASES, "0-3", out=out)  # resumes: the finished runs are not redone
    assert len(ran) == 1 + 3 and len(set(ran)) == 4 and not set(ran) & set(tiny_sweep.digests)
    again = load_results(out)
    assert again.seeds == (0, 1, 2, 3) and again.unfinished == () and len(again.runs) == 8
    assert again.command == resume == done.command


def test_rates_are_percentages_and_metrics_have_human_labels(tiny_sweep: SweepResult,
                                                               tmp_path: Path) -> None:
    """Rates read as people read them: 37.8 (%), not 0.378; metric names as labels
    (issue 29 §1: `first_attempt_success_rate` appeared raw)."""
    assert tiny_sweep.out is not None
    page = write_report(tiny_sweep.out, tmp_path / "r.html").read_text(encoding="utf-8")
    section = page[page.index("<h2>Parking rate by issuer"):page.index("Parking rate by cause")]
    assert "<th>Parking rate (%)</th>" in section
    rows = tiny_sweep.metrics
    rate = rows[(rows["metric"] == "delivery_success_rate") & rows["subscription"].notna()]
    assert rate["value"].max() <= 1  # the metrics stay shares; the page shows percentages
    hooks = page[page.index("<h2>Webhook delivery"):page.index("<h2>Figures")]
    assert "<th>Delivery success rate (%)</th>" in hooks
    assert "<th>First-attempt success rate (%)</th>" in hooks
    assert "first_attempt_success_rate" not in page.split("<h2>Inputs")[0]
    means = [float(v.replace(",", "")) for v in re.findall(r"<td>([0-9.,]+) \[", hooks)]
    assert any(v > 1 for v in means)  # e.g. 100 for every delivery made
    text = re.sub(r"<img[^>]*>", "", page.split("<h2>Inputs")[0])
    assert not re.search(r"\de[+-]\d", text)  # no exponents


def test_every_figure_has_a_caption_naming_its_runs(tiny_sweep: SweepResult) -> None:
    """Issue 29 §1: each figure has a title, axis labels and a caption saying what it shows
    and from which runs."""
    from clearing_sim.analysis.report import report_figures

    for caption, figure in report_figures(tiny_sweep):
        assert "run" in caption and ("seeds 0-1" in caption or "seed 0" in caption), caption
        axes = [ax for ax in figure.axes if ax.get_visible()]
        assert figure.get_suptitle() or all(ax.get_title() for ax in axes), caption
        assert all(ax.get_ylabel() for ax in axes[:1]), caption
        assert all(ax.get_xlabel() or figure.get_supxlabel() for ax in axes), caption
