"""Figures: each function answers a Figure with what it promises, from frames or metrics."""

from __future__ import annotations

from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from clearing_sim.analysis import plots
from clearing_sim.analysis.runs import WorkloadRun
from clearing_sim.analysis.sweeps import SweepResult


def test_latency_cdf_has_one_line_per_mode(tiny_run: WorkloadRun) -> None:
    figure = plots.latency_cdf(tiny_run.transactions)
    (ax,) = figure.axes
    assert isinstance(figure, Figure) and len(ax.lines) == 2
    (legend,) = figure.legends  # the figure's, below the axes: off the curves
    labels = [text.get_text() for text in legend.get_texts()]
    assert labels[0].startswith("Mode 1: n=") and "p99" in labels[0]
    assert ax.lines[0].get_ydata()[-1] == 1.0  # a CDF ends at 1
    assert ax.yaxis.get_major_formatter().format_data(0.5) == "50%"


def test_latency_cdf_legend_is_below_the_axes_in_case_order(tiny_sweep: SweepResult) -> None:
    tx = tiny_sweep.frames("transactions")
    order = list(reversed(tiny_sweep.params["param_label"]))  # not alphabetical
    figure = plots.latency_cdf(tx, by=["param_label", "mode"], order=order)
    FigureCanvasAgg(figure).draw()  # lay it out
    (ax,) = figure.axes
    (legend,) = figure.legends
    labels = [text.get_text() for text in legend.get_texts()]
    cases = list(dict.fromkeys(label.split(",")[0] for label in labels))
    assert cases == [c for c in order if any(c == x for x in cases)]
    assert legend.get_window_extent().y1 < ax.get_window_extent().y0  # below, not on, the axes


def test_attempts_histograms_has_one_panel_per_case_in_order(tiny_sweep: SweepResult) -> None:
    deliveries = tiny_sweep.frames("deliveries")
    order = list(tiny_sweep.params["param_label"])
    figure = plots.attempts_histograms(deliveries, order=order)
    visible = [ax for ax in figure.axes if ax.get_visible()]
    assert [ax.get_title().split(" (n=")[0] for ax in visible] == order
    for ax, case in zip(visible, order, strict=True):
        assert sum(p.get_height() for p in ax.patches) == \
            (deliveries["param_label"] == case).sum()


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
    (legend,) = figure.legends  # what the colours mean
    meanings = [t.get_text() for t in legend.get_texts()]
    assert "saga step done" in meanings and "parked, failed, rejected, not delivered" in meanings


def test_waterfall_labels_do_not_overlap(tiny_run: WorkloadRun) -> None:
    frames = tiny_run.frames
    tx = frames.transactions
    figure = plots.waterfall(frames.saga_steps, _busiest(frames.attempts, frames.deliveries),
                             frames.instructions, frames.attempts, frames.deliveries, tx)
    figure.canvas.draw()  # type: ignore[no-untyped-call]
    (ax,) = figure.axes
    boxes = [t.get_window_extent() for t in ax.texts]
    assert len(boxes) > 8
    overlapping = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                   if a.overlaps(b)]
    assert overlapping == []
    assert all(t.get_fontsize() >= 7 for t in ax.texts)  # readable


def _busiest(attempts: Any, deliveries: Any) -> str:
    """The transaction with the most webhook attempts: the most crowded timeline."""
    merged = attempts.merge(deliveries[["event_id", "transaction_id"]], on="event_id")
    return str(merged["transaction_id"].value_counts().index[0])
