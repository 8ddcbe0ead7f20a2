"""What every figure of ``plots`` shares: a new figure, a width that holds its legends, and a
log axis of durations labelled in human units.

Public names: ``fit_legends``, ``human_duration_axis``, ``new_figure``.
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

__all__ = ["fit_legends", "human_duration_axis", "new_figure"]

#: Ticks of a log axis of durations (seconds) and how they read.
_DURATION_TICKS = ((0.001, "1 ms"), (0.01, "10 ms"), (0.1, "100 ms"), (1, "1 s"),
                   (10, "10 s"), (60, "1 min"), (600, "10 min"), (3600, "1 h"),
                   (6 * 3600, "6 h"), (86_400, "1 d"), (7 * 86_400, "7 d"))
_MARGIN_IN = 0.25  # room either side of a legend, inches


def new_figure(width: float = 7.0, height: float = 4.2) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


def fit_legends(figure: Figure) -> Figure:
    """Widen ``figure`` until each of its legends fits inside it (constrained layout places a
    legend outside the axes but cannot make a figure wider than the legend is): after this,
    no legend entry is clipped, whatever the number of series or the length of their labels."""
    FigureCanvasAgg(figure)
    for _ in range(3):  # a wider figure reflows the legend; converge in a step or two
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
        legends = [*figure.legends, *(legend for legend in (ax.get_legend() for ax in
                                                            figure.axes) if legend is not None)]
        widest = max((legend.get_window_extent(renderer).width for legend in legends),
                     default=0.0) / figure.dpi
        width, height = figure.get_size_inches()
        if widest + 2 * _MARGIN_IN <= width:
            break
        figure.set_size_inches(widest + 2 * _MARGIN_IN, height)
    return figure


def human_duration_axis(ax: Axes, which: str = "x") -> None:
    """A log axis of seconds ticked at human durations (1 s, 1 min, 10 min, 1 h, …)."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(FixedLocator([at for at, _ in _DURATION_TICKS]))
    names = dict(_DURATION_TICKS)
    axis.set_major_formatter(FuncFormatter(lambda value, _: names.get(value, "")))
    axis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    axis.set_minor_formatter(NullFormatter())
