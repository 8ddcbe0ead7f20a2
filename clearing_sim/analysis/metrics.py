"""Metrics of a run as one tidy frame, and their spread across seeds.

Public names: ``DELIVERY_OUTCOMES``, ``DIMENSIONS``, ``METRIC_COLUMNS``, ``PARK_CAUSES``,
``across_seeds``, ``delivery_attempts``, ``latency_percentiles``, ``parking_rates``,
``run_metrics``.

``run_metrics(frames)`` answers one row per (metric, group): ``metric``, the dimensions
``use_case``, ``mode``, ``issuer``, ``cause``, ``subscription``, ``attempts`` (missing where
a metric is not broken down by that dimension: a missing ``mode`` is "all modes"), ``value``
and ``n``, the number of observations behind the value. The metrics (definitions in
``docs/analysis.md``):

- ``transactions``, ``settled_rate``, ``settlement_latency_{p50,p95,p99,mean}_s`` by use case
  and mode, by mode, and overall (latency: settled transactions, initiation to settlement);
- ``parking_rate`` by issuer, issuer and cause, mode, mode and cause, cause, and overall: the
  share of transactions that parked, attributed to the issuer (and mode) of the leg that
  parked, out of the transactions that list that issuer (or a leg in that mode);
- ``deliveries``, ``delivery_success_rate``, ``first_attempt_success_rate``,
  ``attempts_mean``, ``delivery_latency_{p50,p95,p99}_s``, ``duplicate_arrivals`` by
  subscription; ``deliveries_by_attempts`` by subscription, outcome (``cause``) and number
  of attempts;

Every ``PARK_CAUSES`` cause and every (outcome, attempts) cell gets a row, 0 when unseen, so a
mean over seeds is not biased by missing zeros; other groups appear only when observed.
- ``subscriptions_disabled`` overall and ``time_to_disable_h`` per disabled subscription
  (from the first failure of the streak to the disable).

The helpers (``latency_percentiles``, ``parking_rates``, ``delivery_attempts``) work on frames
concatenated over many runs too; ``across_seeds`` summarises a sweep's metrics per parameter
set: mean, standard deviation, quantiles, min, max over seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]

from clearing_sim.analysis.frames import Frames

__all__ = ["DELIVERY_OUTCOMES", "DIMENSIONS", "METRIC_COLUMNS", "PARK_CAUSES", "across_seeds",
           "delivery_attempts", "latency_percentiles", "parking_rates", "run_metrics"]

DIMENSIONS: tuple[tuple[str, str], ...] = (
    ("use_case", "str"), ("mode", "Int8"), ("issuer", "str"), ("cause", "str"),
    ("subscription", "str"), ("attempts", "Int8"))
METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("metric", "str"), *DIMENSIONS, ("value", "float64"), ("n", "int64"))
_PERCENTILES = (50, 95, 99)
#: The causes a transaction parks with (docs/semantics.md); each gets a row, 0 if unseen.
PARK_CAUSES = ("approval_sla_exceeded", "issuer_failed", "unwind_failed")
#: Delivery outcomes; ``deliveries_by_attempts`` has a row for each with 1 to 7 attempts.
DELIVERY_OUTCOMES = ("delivered", "failed", "dropped", "pending")

Row = dict[str, Any]
#: The columns each part of ``run_metrics`` reads (grouping copies every column of a group).
_LATENCY_COLUMNS = ("use_case", "mode", "lifecycle_status", "settlement_latency_s")
_PARKING_COLUMNS = ("transaction_id", "source_issuer", "mode", "target_issuer", "mint_mode",
                    "ever_parked", "park_issuer", "park_mode", "park_cause")
_DELIVERY_COLUMNS = ("subscription", "subscription_id", "outcome", "attempts", "created_ms",
                     "delivered_ms", "duplicates")


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def _key(value: Any) -> Any:
    if _missing(value):
        return None
    return value.item() if isinstance(value, np.generic) else value


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> Iterable[tuple[dict[str, Any],
                                                                      pd.DataFrame]]:
    """(group labels, rows) per group, missing labels included, in sorted order."""
    if not by:
        yield {}, frame
        return
    for labels, rows in frame.groupby(list(by), dropna=False, sort=True, observed=True):
        values = labels if isinstance(labels, tuple) else (labels,)
        yield {name: _key(v) for name, v in zip(by, values, strict=True)}, rows


def _latency_rows(tx: pd.DataFrame) -> list[Row]:
    rows: list[Row] = []
    for by in (("use_case", "mode"), ("mode",), ()):
        for labels, group in _groups(tx, by):
            settled = group["lifecycle_status"] == "settled"
            rows.append({"metric": "transactions", **labels, "value": float(len(group)),
                         "n": len(group)})
            rows.append({"metric": "settled_rate", **labels,
                         "value": float(settled.mean()) if len(group) else np.nan,
                         "n": len(group)})
            latency = group.loc[settled, "settlement_latency_s"].to_numpy(dtype=float)
            if len(latency) == 0:
                continue
            for q in _PERCENTILES:
                rows.append({"metric": f"settlement_latency_p{q}_s", **labels,
                             "value": float(np.percentile(latency, q)), "n": len(latency)})
            rows.append({"metric": "settlement_latency_mean_s", **labels,
                         "value": float(latency.mean()), "n": len(latency)})
    return rows


def _legs(tx: pd.DataFrame) -> pd.DataFrame:
    """One row per (transaction, issuer it lists), with that leg's mode. A transaction is
    its ``row`` in ``tx``, not its id: a sweep's frames joined across runs of one seed list
    the same ids once per run, and each is a transaction of its own."""
    tx = tx.assign(row=np.arange(len(tx)))
    burn = pd.DataFrame({"row": tx["row"], "issuer": tx["source_issuer"], "mode": tx["mode"]})
    mint = tx[tx["target_issuer"].notna()]
    mint = pd.DataFrame({"row": mint["row"], "issuer": mint["target_issuer"],
                         "mode": mint["mint_mode"]})
    return pd.concat([burn, mint], ignore_index=True)


def parking_rates(transactions: pd.DataFrame, by: str = "issuer",
                  causes: bool = False) -> pd.DataFrame:
    """Share of transactions that parked at each ``issuer`` (or ``mode``), optionally per
    cause: columns ``by``, [``cause``], ``parked``, ``transactions``, ``parking_rate``."""
    assert by in ("issuer", "mode"), by
    legs = _legs(transactions)
    denominators = legs.drop_duplicates(["row", by]).groupby(
        by, dropna=True, observed=True).size()
    parked = transactions[transactions["ever_parked"]]
    column = "park_issuer" if by == "issuer" else "park_mode"
    keys = [column, "park_cause"] if causes else [column]
    counts = parked.groupby(keys, dropna=True, observed=True).size()
    rows = []
    known = sorted({*PARK_CAUSES, *parked["park_cause"].dropna()})
    for key in denominators.index:
        for cause in known if causes else [None]:
            n_parked = int(counts.get((key, cause) if causes else key, 0))
            row = {by: key, "parked": n_parked, "transactions": int(denominators[key]),
                   "parking_rate": n_parked / int(denominators[key])}
            if causes:
                row["cause"] = cause
            rows.append(row)
    columns = [by, *(["cause"] if causes else []), "parked", "transactions", "parking_rate"]
    return pd.DataFrame(rows, columns=columns)


def _parking_rows(tx: pd.DataFrame) -> list[Row]:
    rows: list[Row] = []
    for by in ("issuer", "mode"):
        for causes in (False, True):
            table = parking_rates(tx, by, causes)
            for record in table.to_dict("records"):
                rows.append({"metric": "parking_rate", by: _key(record[by]),
                             "cause": record.get("cause"), "value": record["parking_rate"],
                             "n": record["transactions"]})
    total = len(tx)
    if total:
        parked = tx[tx["ever_parked"]]
        rows.append({"metric": "parking_rate", "value": len(parked) / total, "n": total})
        counts = parked.groupby("park_cause", observed=True).size()
        for cause in sorted({*PARK_CAUSES, *counts.index}):
            rows.append({"metric": "parking_rate", "cause": cause,
                         "value": int(counts.get(cause, 0)) / total, "n": total})
    return rows


def delivery_attempts(deliveries: pd.DataFrame) -> pd.DataFrame:
    """Deliveries by number of attempts and outcome: ``attempts``, ``outcome``, ``deliveries``."""
    counts = deliveries.groupby(["attempts", "outcome"], sort=True).size()
    return counts.rename("deliveries").reset_index()


def _delivery_rows(dl: pd.DataFrame, subs: pd.DataFrame) -> list[Row]:
    # (imported here: the domain's modules bring attrs, which the transactions' metrics and
    # reading a log do not need)
    from clearing_sim.domain.delivery import ATTEMPTS_MAX

    rows: list[Row] = []
    dl = dl.assign(subscription=dl["subscription"].fillna(dl["subscription_id"]))
    for labels, group in _groups(dl, ("subscription",)):
        finished = group[group["outcome"] != "pending"]
        delivered = group[group["outcome"] == "delivered"]
        n_finished = len(finished)
        rows.append({"metric": "deliveries", **labels, "value": float(len(group)),
                     "n": len(group)})
        if n_finished:
            rows.append({"metric": "delivery_success_rate", **labels,
                         "value": len(delivered) / n_finished, "n": n_finished})
            first = int(((finished["outcome"] == "delivered")
                         & (finished["attempts"] == 1)).sum())
            rows.append({"metric": "first_attempt_success_rate", **labels,
                         "value": first / n_finished, "n": n_finished})
            rows.append({"metric": "attempts_mean", **labels,
                         "value": float(finished["attempts"].astype(float).mean()),
                         "n": n_finished})
        seconds = ((delivered["delivered_ms"] - delivered["created_ms"]) / 1000).to_numpy(
            dtype=float)
        for q in _PERCENTILES if len(seconds) else ():
            rows.append({"metric": f"delivery_latency_p{q}_s", **labels,
                         "value": float(np.percentile(seconds, q)), "n": len(seconds)})
        rows.append({"metric": "duplicate_arrivals", **labels,
                     "value": float(group["duplicates"].sum()), "n": len(group)})
        counts = group.groupby(["attempts", "outcome"]).size()
        for outcome in DELIVERY_OUTCOMES:
            for attempts in range(1, ATTEMPTS_MAX + 1):
                rows.append({"metric": "deliveries_by_attempts", **labels, "cause": outcome,
                             "attempts": attempts,
                             "value": float(counts.get((attempts, outcome), 0)),
                             "n": len(group)})
    disabled = subs[subs["disabled_ms"].notna()]
    rows.append({"metric": "subscriptions_disabled", "value": float(len(disabled)),
                 "n": len(subs)})
    for record in disabled.to_dict("records"):
        name = record["subscription"]
        rows.append({"metric": "time_to_disable_h",
                     "subscription": record["subscription_id"] if _missing(name) else name,
                     "value": float(record["time_to_disable_h"]), "n": 1})
    return rows


def _frame(rows: list[Row]) -> pd.DataFrame:
    columns = {}
    for name, dtype in METRIC_COLUMNS:
        columns[name] = pd.Series([row.get(name) for row in rows], dtype=dtype)
    return pd.DataFrame(columns)


def run_metrics(frames: Frames) -> pd.DataFrame:
    """Every metric of one run, one row per (metric, group); columns ``METRIC_COLUMNS``."""
    rows: list[Row] = []
    if "transactions" in frames:  # (each with only the columns it reads: a group is a copy)
        tx = frames.transactions
        rows += _latency_rows(tx[list(_LATENCY_COLUMNS)])
        rows += _parking_rows(tx[list(_PARKING_COLUMNS)])
    if "deliveries" in frames and "subscriptions" in frames:
        rows += _delivery_rows(frames.deliveries[list(_DELIVERY_COLUMNS)],
                               frames.subscriptions)
    return _frame(rows)


def latency_percentiles(transactions: pd.DataFrame, by: Sequence[str] = ("mode",),
                        q: Sequence[float] = _PERCENTILES) -> pd.DataFrame:
    """Settlement latency percentiles (seconds) of settled transactions, pooled, per group:
    columns ``by``, ``settled``, ``p<q>_s``..."""
    settled = transactions[transactions["lifecycle_status"] == "settled"]
    rows = []
    for labels, group in _groups(settled, by):
        latency = group["settlement_latency_s"].to_numpy(dtype=float)
        row: Row = {**labels, "settled": len(latency)}
        for p in q:
            row[f"p{p:g}_s"] = float(np.percentile(latency, p)) if len(latency) else np.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "settled", *(f"p{p:g}_s" for p in q)])


def across_seeds(metrics: pd.DataFrame, metric: str | None = None,
                 params: Sequence[str] = ()) -> pd.DataFrame:
    """A sweep's metrics summarised over seeds, per parameter set and group.

    ``params`` are the parameter columns to keep apart (default: ``param_id`` when present).
    Columns: those, ``metric``, the dimensions, then ``seeds``, ``mean``, ``std``, ``min``,
    ``q05``, ``median``, ``q95``, ``max``. Rows come in the order the groups first appear in
    ``metrics``: parameter sets as the sweep lists them, metrics as ``run_metrics`` lists them."""
    frame = metrics if metric is None else metrics[metrics["metric"] == metric]
    keep = list(params) or (["param_id"] if "param_id" in frame.columns else [])
    keys = [*keep, "metric", *(name for name, _ in DIMENSIONS)]
    grouped = frame.groupby(keys, dropna=False, sort=False)["value"]
    # one aggregation, so the quantiles line up with their groups even where a key is missing
    # (a quantile frame joined on such keys by index would match nothing)
    summary = grouped.agg(seeds="count", mean="mean", std="std", min="min",
                          q05=lambda v: v.quantile(0.05), median="median",
                          q95=lambda v: v.quantile(0.95), max="max")
    return summary.reset_index()
