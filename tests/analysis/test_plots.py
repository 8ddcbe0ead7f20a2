"""Figures: each function answers a Figure with what it promises, from frames or metrics."""

from __future__ import annotations

from matplotlib.figure import Figure

from clearing_sim.analysis import plots
from clearing_sim.analysis.runs import WorkloadRun
from clearing_sim.analysis.sweeps import SweepResult


def test_latency_cdf_has_one_line_per_mode(tiny_run: WorkloadRun) -> None:
    figure = plots.latency_cdf(tiny_run.transactions)
    (ax,) = figure.axes
    assert isinstance(figure, Figure) and len(ax.lines) == 2
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels[0].startswith("Mode 1  (n=") and "p99" in labels[0]
    assert ax.lines[0].get_ydata()[-1] == 1.0  # a CDF ends at 1


def test_parking_by_issuer_shows_each_seed(tiny_sweep: SweepResult) -> None:
    figure = plots.parking_by_issuer(tiny_sweep.metrics)
    (ax,) = figure.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Ether Pound", "Stellar Sterling"]
    assert len(ax.patches) == 2 * 2  # issuers × parameter sets
    assert sum(len(c.get_offsets()) for c in ax.collections if hasattr(c, "get_offsets")) \
        >= 2 * 2 * 2  # a dot per issuer, parameter set and seed


def test_attempts_histogram_counts_every_delivery(tiny_run: WorkloadRun) -> None:
    figure = plots.attempts_histogram(tiny_run.frames.deliveries)
    (ax,) = figure.axes
    assert sum(p.get_height() for p in ax.patches) == len(tiny_run.frames.deliveries)


def test_waterfall_of_a_parked_transaction(tiny_run: WorkloadRun) -> None:
    frames = tiny_run.frames
    tx = frames.transactions
    parked = tx[tx["ever_parked"]]["transaction_id"].iloc[0]
    figure = plots.waterfall(frames.saga_steps, parked, frames.instructions, frames.attempts,
                             frames.deliveries, tx)
    (ax,) = figure.axes
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows[:5] == ["Received", "Validated", "Lock", "Earmarked", "Burning"]
    assert "issuer burn (Ether Pound)" in rows and "webhook treasury" in rows
    assert rows[5] == "lifecycle"  # the Settled step never ran: no bar for it
    row = tx[tx["transaction_id"] == parked].iloc[0]
    notes = [t.get_text() for t in ax.texts]
    assert f"parked ({row['park_cause']})" in notes and "in-flight" in notes
    assert ax.get_title().endswith(f"Mode {row['mode']} · failed, parked")
