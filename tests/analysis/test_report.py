"""The HTML report: self-contained, key tables, figures, and the facts that replay it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clearing_sim.analysis import write_report
from clearing_sim.analysis.report import read_replay
from clearing_sim.analysis.sweeps import SweepResult


def test_the_report_is_self_contained_and_replayable(tiny_sweep: SweepResult, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert tiny_sweep.out is not None
    monkeypatch.chdir(tmp_path)
    path = write_report(tiny_sweep.out)
    assert path == Path("reports") / "two-cases.html"  # the default: under reports/
    page = path.read_text(encoding="utf-8")
    assert len(re.findall(r'<img alt="" src="data:image/png;base64,', page)) == 4
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


def test_a_page_without_replay_facts_is_refused() -> None:
    with pytest.raises(ValueError, match="no clearing-sim replay block"):
        read_replay("<html></html>")
