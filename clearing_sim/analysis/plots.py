"""matplotlib figures of frames and metrics; each function answers a new ``Figure``.

Public names: ``attempts_histogram``, ``attempts_histograms``, ``latency_cdf``,
``latency_spread``, ``parking_by_issuer``, ``waterfall``.

- ``latency_cdf(transactions, by="mode", order=cases)``: the empirical CDF of settlement
  latency (log scale, ticked in human durations) per group, with its n, p50, p95 and p99 in a
  legend below the axes, one entry a line, in the sweep's case order.
- ``latency_spread(metrics)``: a settlement latency percentile per parameter set and mode:
  the mean over the set's seeds with its 95 % t-interval (``spread``), "1 seed" where a set
  has one.
- ``parking_by_issuer(metrics)``: the parking rate per issuer, one bar per parameter set at
  the mean over seeds, a whisker over its 95 % t-interval, and each seed as a dot.
- ``attempts_histogram(deliveries)``: deliveries by number of attempts, stacked by outcome;
  ``attempts_histograms(deliveries, order=cases)`` the same, one panel per case.
- ``waterfall(saga_steps, transaction_id, …)``: one transaction's timeline (``waterfall``).

Every figure has a title and axis labels with their units, and is as wide as its legends
(``figurekit.fit_legends``): no legend, title or tick label reaches outside it
(tests/analysis/test_figure_extents.py). Figures are built with the object API
(``matplotlib.figure.Figure``), not ``pyplot``: no global state, nothing shown, safe in
worker processes; a notebook displays a returned figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

from clearing_sim.analysis.figurekit import fit_legends, human_duration_axis, new_figure
from clearing_sim.analysis.metrics import across_seeds
from clearing_sim.analysis.presentation import duration_unit, format_duration, metric_label
from clearing_sim.analysis.spread import with_intervals
from clearing_sim.analysis.waterfall import waterfall

__all__ = ["attempts_histogram", "attempts_histograms", "latency_cdf", "latency_spread",
           "parking_by_issuer", "waterfall"]

_OUTCOME_COLOURS = {"delivered": "#2a9d8f", "failed": "#e76f51", "dropped": "#8d99ae",
                    "pending": "#e9c46a"}
_STYLES = ("-", "--", ":", "-.")


def _label(names: Sequence[str], values: Any) -> str:
    values = values if isinstance(values, tuple) else (values,)
    parts = []
    for name, value in zip(names, values, strict=True):
        if pd.isna(value):
            parts.append(f"{name}: all")
        elif name == "mode":
            parts.append(f"Mode {int(value)}")
        else:
            parts.append(str(value))
    return ", ".join(parts)


def _group_key(keys: Sequence[str], order: Sequence[Any] | None) -> Any:
    """Sort groups by the first key in ``order`` (the sweep's case order), then by value."""
    rank = {value: n for n, value in enumerate(order or ())}

    def key(item: tuple[Any, Any]) -> tuple[Any, ...]:
        values = item[0] if isinstance(item[0], tuple) else (item[0],)
        first = rank.get(values[0], len(rank)) if len(keys) > 1 or order else 0
        rest = tuple((pd.isna(v), "" if pd.isna(v) else v) for v in values)
        return (first, *rest)

    return key


def latency_cdf(transactions: pd.DataFrame, by: str | Sequence[str] = "mode",
                title: str = "Settlement latency by mode",
                order: Sequence[Any] | None = None) -> Figure:
    """Empirical CDF of ``settlement_latency_s`` of settled transactions, one line per group;
    with several keys the last picks the colour and the others the line style. The legend
    sits below the axes, off the curves, one entry a line, in ``order`` of the first key (a
    sweep's case order; default: sorted), then by mode; the figure is as wide as it."""
    keys = [by] if isinstance(by, str) else list(by)
    settled = transactions[transactions["lifecycle_status"] == "settled"]
    groups = sorted(((values, group) for values, group in
                     settled.groupby(keys, sort=False, dropna=False, observed=True)),
                    key=_group_key(keys, order))
    figure, ax = new_figure(8.0, 4.4 + 0.22 * len(groups))
    colours: dict[Any, int] = {}
    styles: dict[Any, int] = {}
    for values, group in groups:
        latency = np.sort(group["settlement_latency_s"].to_numpy(dtype=float))
        if len(latency) == 0:
            continue
        labels = values if isinstance(values, tuple) else (values,)
        colour = colours.setdefault(labels[-1], len(colours))
        style = styles.setdefault(labels[:-1], len(styles))
        share = np.arange(1, len(latency) + 1) / len(latency)
        quantiles = np.percentile(latency, (50, 95, 99))
        unit = duration_unit(quantiles)
        p50, p95, p99 = (format_duration(q, unit) for q in quantiles)
        ax.step(latency, share, where="post", color=f"C{colour % 10}",
                linestyle=_STYLES[style % len(_STYLES)],
                label=f"{_label(keys, values)}: n={len(latency):,}, p50 {p50}, p95 {p95}, "
                      f"p99 {p99}")
    ax.set_xscale("log")
    human_duration_axis(ax)
    ax.set_xlabel("settlement latency, initiation to settled (virtual time, log scale)")
    ax.set_ylabel("share of settled transactions (%)")
    ax.set_ylim(0, 1.01)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title)
    if ax.lines:
        figure.legend(loc="outside lower center", fontsize="small", ncols=1)
    return fit_legends(figure)


def _seed_note(seeds: pd.Series) -> str:
    """"1 seed" / "3 seeds" / "1–3 seeds" for the sets shown."""
    low, high = int(seeds.min()), int(seeds.max())
    if low == high:
        return "1 seed: no interval" if low == 1 else f"{low} seeds each"
    return f"{low}–{high} seeds (sets of 1 seed: no interval)"


def latency_spread(metrics: pd.DataFrame, metric: str = "settlement_latency_p95_s",
                   by: str = "param_label", title: str | None = None) -> Figure:
    """``metric`` (a per-run settlement latency percentile) per ``by`` group (a sweep's
    parameter sets, in order) and mode: a point at the mean over seeds, a whisker over its
    95 % t-interval (none for a set of one seed), in one human unit for the figure."""
    rows = metrics[(metrics["metric"] == metric) & metrics["mode"].notna()
                   & metrics["use_case"].isna()]
    if by not in rows.columns:
        rows = rows.assign(**{by: "run"})
    summary = with_intervals(across_seeds(rows, params=[by]))
    groups = list(dict.fromkeys(summary[by]))
    modes = sorted(int(m) for m in summary["mode"].dropna().unique())
    unit, seconds = duration_unit(summary["mean"].to_numpy(dtype=float))
    figure, ax = new_figure(max(6.0, 1.3 * len(groups) + 2.5), 4.6)
    width = 0.8 / max(1, len(modes))
    for m, mode in enumerate(modes):
        mine = summary[summary["mode"] == mode].set_index(by).reindex(groups)
        x = np.arange(len(groups)) - 0.4 + width * (m + 0.5)
        mean = mine["mean"].to_numpy(dtype=float) / seconds
        low = np.nan_to_num(mean - mine["ci_low"].to_numpy(dtype=float) / seconds)
        high = np.nan_to_num(mine["ci_high"].to_numpy(dtype=float) / seconds - mean)
        ax.errorbar(x, mean, yerr=[np.maximum(low, 0), np.maximum(high, 0)], fmt="o",
                    capsize=4, color=f"C{(mode - 1) % 10}", label=f"Mode {mode}")
    ax.set_xticks(np.arange(len(groups)), [str(g) for g in groups],
                  rotation=20 if len(groups) > 4 else 0, ha="right" if len(groups) > 4 else
                  "center")
    ax.set_xlabel("parameter set")
    ax.set_ylabel(f"{metric_label(metric).lower()} ({unit})")
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title or f"{metric_label(metric)} per parameter set: mean over seeds, "
                          f"95 % t-interval ({_seed_note(summary['seeds'])})",
                 fontsize="medium", wrap=True)
    if modes:
        figure.legend(loc="outside lower center", fontsize="small", ncols=len(modes))
    return fit_legends(figure)


def parking_by_issuer(metrics: pd.DataFrame, by: str = "param_label",
                      title: str = "Parking rate by issuer") -> Figure:
    """Bars: mean parking rate over seeds per issuer and ``by`` group; whiskers: its 95 %
    t-interval over the seeds (none for one seed); dots: the seeds. ``metrics`` is a sweep's
    metrics (or one run's)."""
    rows = metrics[(metrics["metric"] == "parking_rate") & metrics["issuer"].notna()
                   & metrics["cause"].isna()]
    if by not in rows.columns:
        rows = rows.assign(**{by: "run"})
    issuers = sorted(rows["issuer"].unique())
    groups = list(dict.fromkeys(rows[by]))
    summary = with_intervals(across_seeds(rows, params=[by]))
    figure, ax = new_figure(max(6.0, 1.6 * len(issuers) * max(1, len(groups)) ** 0.5), 4.4)
    width = 0.8 / max(1, len(groups))
    for g, group in enumerate(groups):
        mine = rows[rows[by] == group]
        spread = summary[summary[by] == group].set_index("issuer").reindex(issuers)
        centres = np.arange(len(issuers)) - 0.4 + width * (g + 0.5)
        means = spread["mean"].to_numpy(dtype=float)
        low = np.nan_to_num(means - spread["ci_low"].to_numpy(dtype=float).clip(0))
        high = np.nan_to_num(spread["ci_high"].to_numpy(dtype=float).clip(max=1) - means)
        bars = ax.bar(centres, means, width * 0.9, yerr=[low, high], capsize=3,
                      label=str(group), alpha=0.8)
        colour = bars.patches[0].get_facecolor() if bars.patches else None
        for x, issuer in zip(centres, issuers, strict=True):
            values = mine.loc[mine["issuer"] == issuer, "value"].to_numpy(dtype=float)
            offsets = np.linspace(-width * 0.25, width * 0.25, len(values)) if len(
                values) > 1 else np.zeros(len(values))
            ax.scatter(x + offsets, values, s=10, color="black", zorder=3, alpha=0.6,
                       edgecolors=colour)
    ax.set_xticks(np.arange(len(issuers)), issuers)
    ax.set_xlabel("issuer")
    ax.set_ylabel("the issuer's transactions that parked (%)")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(bottom=0)
    ax.set_title(f"{title}: mean over seeds, 95 % t-interval, dots the seeds "
                 f"({_seed_note(summary['seeds'])})", fontsize="medium", wrap=True)
    ax.grid(True, axis="y", alpha=0.3)
    if len(groups) > 1:
        figure.legend(loc="outside lower center", fontsize="small",
                      ncols=min(len(groups), 3))
    return fit_legends(figure)


def _attempts_bars(ax: Axes, deliveries: pd.DataFrame) -> None:
    counts = deliveries.groupby(["attempts", "outcome"]).size().unstack(fill_value=0)
    attempts = np.arange(1, 8)
    counts = counts.reindex(attempts, fill_value=0)
    bottom = np.zeros(len(attempts))
    for outcome in [o for o in _OUTCOME_COLOURS if o in counts.columns]:
        values = counts[outcome].to_numpy(dtype=float)
        ax.bar(attempts, values, bottom=bottom, label=outcome, color=_OUTCOME_COLOURS[outcome])
        bottom += values
    ax.set_xticks(attempts)
    ax.set_yscale("symlog", linthresh=10)
    ax.grid(True, axis="y", alpha=0.3)


_ATTEMPTS_AXIS = "attempts per delivery (retries at 1 min, 5 min, 30 min, 2 h, 12 h, 24 h)"


def attempts_histogram(deliveries: pd.DataFrame,
                       title: str = "Webhook deliveries by number of attempts") -> Figure:
    """Deliveries per number of attempts (1–7), stacked by outcome."""
    figure, ax = new_figure()
    _attempts_bars(ax, deliveries)
    ax.set_xlabel(_ATTEMPTS_AXIS)
    ax.set_ylabel("deliveries (symlog scale)")
    ax.set_title(title)
    ax.legend(fontsize="small")
    return fit_legends(figure)


def attempts_histograms(deliveries: pd.DataFrame, by: str = "param_label",
                        order: Sequence[Any] | None = None,
                        title: str = "Webhook deliveries by number of attempts, per case"
                        ) -> Figure:
    """``attempts_histogram`` once per ``by`` group (a sweep's cases, in ``order``), side by
    side on one y scale, all seeds of a case pooled."""
    groups = list(order) if order is not None else list(dict.fromkeys(deliveries[by]))
    groups = [g for g in groups if (deliveries[by] == g).any()] or groups[:1]
    columns = min(3, max(1, len(groups)))
    lines = -(-len(groups) // columns)
    figure = Figure(figsize=(3.6 * columns + 0.8, 3.2 * lines + 0.9), layout="constrained")
    axes = figure.subplots(lines, columns, sharey=True, squeeze=False).ravel()
    for ax, group in zip(axes, groups, strict=False):
        _attempts_bars(ax, deliveries[deliveries[by] == group])
        ax.set_title(f"{group} (n={int((deliveries[by] == group).sum())})", fontsize="medium")
    for ax in axes[len(groups):]:
        ax.set_visible(False)
    for ax in axes[::columns]:
        ax.set_ylabel("deliveries (symlog scale)")
    figure.supxlabel(_ATTEMPTS_AXIS, fontsize="small")
    figure.suptitle(title)
    handles = [Patch(color=colour, label=outcome) for outcome, colour in _OUTCOME_COLOURS.items()
               if outcome in set(deliveries["outcome"])]
    if handles:
        figure.legend(handles=handles, loc="outside upper right", fontsize="small")
    return fit_legends(figure)
