"""Issue 29 §1: every figure of a report reads whole: after drawing, each legend, title,
axis (tick labels and axis label) lies inside the figure's box (matplotlib's renderer
extents), for the committed baseline's sweep and for a sweep of nine latency series. The
browser cannot see this (the figures are PNGs inside the page); the renderer can."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from clearing_sim.analysis import load_sweep, plots, sweep
from clearing_sim.analysis.report import report_figures
from clearing_sim.analysis.sweeps import SweepResult
from tests.analysis.conftest import INPUTS

ROOT = Path(__file__).resolve().parents[2]


def _parts(figure: Figure) -> list[tuple[str, Artist]]:
    """The figure's legends, titles and axes (each axis: its tick labels and its label)."""
    parts: list[tuple[str, Artist]] = [("legend", legend) for legend in figure.legends]
    for name in ("_suptitle", "_supxlabel", "_supylabel"):
        text = getattr(figure, name, None)
        if text is not None and text.get_text():
            parts.append((name.strip("_"), text))
    for ax in (ax for ax in figure.axes if ax.get_visible()):
        name = ax.get_title() or figure.get_suptitle() or "axes"
        if ax.get_legend() is not None:
            parts.append((f"legend of {name}", ax.get_legend()))
        for where in ("center", "left", "right"):
            if ax.get_title(where):
                parts.append((f"title {ax.get_title(where)!r}", ax.title if where == "center"
                              else getattr(ax, f"_{where}_title")))
        parts += [(f"x axis of {name}", ax.xaxis), (f"y axis of {name}", ax.yaxis)]
    return parts


def outside(figure: Figure) -> list[str]:
    """What of ``figure`` reaches beyond its box, once drawn (a pixel of slack)."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    box = figure.bbox
    found = []
    for name, artist in _parts(figure):
        extent = artist.get_tightbbox(renderer) if hasattr(artist, "axes") and \
            name.startswith(("x axis", "y axis")) else artist.get_window_extent(renderer)
        if extent is None or extent.width == 0:
            continue
        if extent.x0 < box.x0 - 1 or extent.y0 < box.y0 - 1 or extent.x1 > box.x1 + 1 \
                or extent.y1 > box.y1 + 1:
            found.append(f"{name}: {extent.bounds} beyond {box.bounds}")
    return found


@pytest.fixture(scope="module")
def baseline() -> SweepResult:
    """The committed baseline's sweep, one seed, in memory (a few seconds)."""
    return sweep(load_sweep(ROOT / "reports" / "baseline" / "sweep.yaml", "0"))


@pytest.fixture(scope="module")
def nine_series() -> SweepResult:
    return sweep(INPUTS / "nine_series.yaml")


@pytest.mark.parametrize("results", ["baseline", "nine_series"])
def test_every_legend_title_and_tick_label_lies_inside_its_figure(
        results: str, request: pytest.FixtureRequest) -> None:
    figures = report_figures(request.getfixturevalue(results))
    assert len(figures) >= 4
    for caption, figure in figures:
        assert outside(figure) == [], caption


def test_the_nine_series_sweep_draws_nine_latency_curves(nine_series: SweepResult) -> None:
    figure = plots.latency_cdf(nine_series.frames("transactions"), by=["param_label", "mode"])
    assert len(figure.axes[0].lines) == 9 and len(figure.legends[0].get_texts()) == 9


def test_the_check_sees_a_legend_wider_than_its_figure() -> None:
    """The check itself fails on a broken figure: a legend wider than the figure."""
    figure = Figure(figsize=(3, 2), layout="constrained")
    ax = figure.add_subplot()
    ax.plot([0, 1], [0, 1], label="a label far too long for a figure three inches wide " * 2)
    figure.legend(loc="outside lower center")
    assert [line for line in outside(figure) if line.startswith("legend")]
