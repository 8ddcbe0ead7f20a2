"""The report's tables: each figure as a reader reads it, per parameter set, over its seeds.

Public names: ``INTERVAL_NOTE``, ``interval_table``, ``params_table``, ``runs_table``.

``interval_table(summary, metrics, dims)`` has one row per parameter set and group of
``dims`` and one column per metric, named by its label and unit (``presentation``): each cell
is the mean over the set's seeds and, in brackets, its 95 % t-interval (``spread``), or
"(1 seed)" where the set has one seed. A duration column takes one unit for all its cells
(chosen from its means), a rate column is in per cent, every value has three significant
figures. The bounds of an interval are clipped to what the metric can be (no rate below 0 %
or above 100 %, no negative duration or count). Column names and cells are text: these
frames are for the page only; the Parquet files keep the raw names and values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pandas as pd  # type: ignore[import-untyped]

from clearing_sim.analysis.metrics import DIMENSIONS
from clearing_sim.analysis.presentation import (
    column_label,
    duration_unit,
    format_count,
    format_number,
    metric_label,
    metric_unit,
    to_seconds,
)
from clearing_sim.analysis.spread import with_intervals

__all__ = ["INTERVAL_NOTE", "interval_table", "params_table", "runs_table"]

INTERVAL_NOTE = ("Each figure is the mean over a parameter set's seeds, with its 95 % "
                 "Student-t interval over those seeds in brackets; a set run with one seed "
                 "says “(1 seed)” instead.")


def _rows(summary: pd.DataFrame, metric: str, dims: Sequence[str]) -> pd.DataFrame:
    """The summary rows of ``metric`` broken down by exactly ``dims``."""
    rows = summary[summary["metric"] == metric].dropna(subset=list(dims))
    for dim, _ in DIMENSIONS:
        if dim not in dims:
            rows = rows[rows[dim].isna()]
    return rows


def _scale(metric: str, means: pd.Series) -> tuple[str, float, float | None]:
    """(column header, factor from the metric's values to the shown ones, upper bound)."""
    label, kind = metric_label(metric), metric_unit(metric)
    if kind == "duration":
        seconds = to_seconds(metric)
        unit, per_unit = duration_unit(means.to_numpy(dtype=float) * seconds)
        return f"{label} ({unit})", seconds / per_unit, None
    if kind == "rate":
        return f"{label} (%)", 100.0, 100.0
    return label, 1.0, None


def _cell(mean: float, low: float, high: float, seeds: int,
          shown: Callable[[float], str]) -> str:
    if seeds <= 1 or math.isnan(low):
        return f"{shown(mean)} (1 seed)" if seeds == 1 else shown(mean)
    return f"{shown(mean)} [{shown(low)}, {shown(high)}]"


def interval_table(summary: pd.DataFrame, metrics: Sequence[str],
                   dims: Sequence[str] = ()) -> pd.DataFrame:
    """See the module docstring; ``summary`` is ``across_seeds(metrics, params=[param_id,
    param_label])``."""
    keys = ["param_label", *dims]
    table: pd.DataFrame | None = None
    for metric in metrics:
        rows = with_intervals(_rows(summary, metric, dims))
        header, factor, top = _scale(metric, rows["mean"])
        shown = format_count if metric_unit(metric) == "count" else format_number
        mean = rows["mean"] * factor
        low = (rows["ci_low"] * factor).clip(lower=0)
        high = (rows["ci_high"] * factor).clip(upper=top)
        cells = [_cell(m, lo, hi, int(n), shown) for m, lo, hi, n in
                 zip(mean, low, high, rows["seeds"], strict=True)]
        part = rows[keys].assign(**{"seeds": rows["seeds"].astype("int64"), header: cells})
        if table is None:
            table = part
        else:
            table = table.merge(part.drop(columns="seeds"), on=keys, how="outer", sort=False)
    if table is None:
        return pd.DataFrame()
    for dim in dims:
        if dim in ("mode", "attempts"):
            table[dim] = table[dim].astype("Int64")
    return table.rename(columns=column_label)


def params_table(params: pd.DataFrame) -> pd.DataFrame:
    """The parameter sets, their columns named for a reader (the field paths stay)."""
    return params.rename(columns=column_label)


def runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Every run: its parameter set, seed, exact counts and digest."""
    columns = ["param_label", "param_id", "seed", "transactions", "records", "digest"]
    shown = runs[columns].assign(
        transactions=[format_count(v) for v in runs["transactions"]],
        records=[format_count(v) for v in runs["records"]])
    return shown.rename(columns=column_label)
