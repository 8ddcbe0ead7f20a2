"""Metrics: one tidy frame per run; their values agree with the frames they come from."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from clearing_sim.analysis import (
    across_seeds,
    latency_percentiles,
    parking_rates,
    run_workload,
)
from clearing_sim.analysis.frames import SCHEMAS, Frames
from clearing_sim.analysis.metrics import DIMENSIONS, METRIC_COLUMNS, delivery_attempts, run_metrics
from clearing_sim.analysis.runs import WorkloadRun
from clearing_sim.analysis.sweeps import SweepResult
from tests.analysis.conftest import INPUTS


def _value(metrics: pd.DataFrame, metric: str, **dims: object) -> float:
    rows = metrics[metrics["metric"] == metric]
    for name, _ in METRIC_COLUMNS[1:7]:
        wanted = dims.get(name)
        rows = rows[rows[name].isna()] if wanted is None else rows[rows[name] == wanted]
    assert len(rows) == 1, (metric, dims, rows)
    return float(rows["value"].iloc[0])


def test_columns_and_dtypes(tiny_run: WorkloadRun) -> None:
    metrics = tiny_run.metrics
    assert [(c, str(t)) for c, t in metrics.dtypes.items()] == [
        (c, str(pd.Series(dtype=t).dtype)) for c, t in METRIC_COLUMNS]
    assert not metrics.duplicated([c for c, _ in METRIC_COLUMNS[:7]]).any()


def test_latency_percentiles_are_numpys_over_settled_transactions(tiny_run: WorkloadRun) -> None:
    tx, metrics = tiny_run.transactions, tiny_run.metrics
    for mode in (1, 2):
        latency = tx[(tx["mode"] == mode) & (tx["lifecycle_status"] == "settled")][
            "settlement_latency_s"]
        for q in (50, 95, 99):
            assert _value(metrics, f"settlement_latency_p{q}_s", mode=mode) == pytest.approx(
                np.percentile(latency, q))
    table = latency_percentiles(tx, by=("mode",))
    assert list(table.columns) == ["mode", "settled", "p50_s", "p95_s", "p99_s"]
    assert table["p50_s"].tolist() == pytest.approx(
        [_value(metrics, "settlement_latency_p50_s", mode=m) for m in (1, 2)])
    assert _value(metrics, "transactions") == len(tx)


def test_parking_rate_by_issuer_mode_and_cause(tiny_run: WorkloadRun) -> None:
    tx, metrics = tiny_run.transactions, tiny_run.metrics
    listing_ether = ((tx["source_issuer"] == "Ether Pound")
                     | (tx["target_issuer"] == "Ether Pound")).sum()
    parked = tx["ever_parked"].sum()
    assert parked > 0
    assert _value(metrics, "parking_rate", issuer="Ether Pound") == parked / listing_ether
    assert _value(metrics, "parking_rate", issuer="Stellar Sterling") == 0.0
    assert _value(metrics, "parking_rate") == parked / len(tx)
    by_cause = parking_rates(tx, "issuer", causes=True)
    assert by_cause["parked"].sum() == parked
    assert _value(metrics, "parking_rate", mode=2) == _value(
        metrics, "parking_rate", issuer="Ether Pound")


def test_delivery_metrics(tiny_run: WorkloadRun) -> None:
    deliveries, metrics = tiny_run.frames.deliveries, tiny_run.metrics
    counts = delivery_attempts(deliveries)
    assert counts["deliveries"].sum() == len(deliveries)
    by_attempts = metrics[metrics["metric"] == "deliveries_by_attempts"]
    assert by_attempts["value"].sum() == len(deliveries)
    finished = deliveries[deliveries["outcome"] != "pending"]
    assert _value(metrics, "attempts_mean", subscription="treasury") == pytest.approx(
        finished["attempts"].mean())
    assert 0 < _value(metrics, "delivery_success_rate", subscription="treasury") <= 1
    assert _value(metrics, "subscriptions_disabled") == 0


def test_time_to_disable_when_a_receiver_is_down_for_good() -> None:
    run = run_workload(INPUTS / "disable.yaml", seed=0)
    metrics, subs = run.metrics, run.frames.subscriptions
    assert _value(metrics, "subscriptions_disabled") == 1
    hours = _value(metrics, "time_to_disable_h", subscription="down")
    assert 72 <= hours < 74
    down = subs[subs["subscription"] == "down"].iloc[0]
    assert down["time_to_disable_h"] == hours
    assert pd.isna(subs[subs["subscription"] == "healthy"]["disabled_ms"].iloc[0])
    dropped = run.frames.deliveries.query("subscription == 'down' and outcome == 'dropped'")
    assert len(dropped) > 0


def test_across_seeds_summarises_per_parameter_set(tiny_sweep: SweepResult) -> None:
    summary = across_seeds(tiny_sweep.metrics, "parking_rate")
    assert {"param_id", "metric", "seeds", "mean", "std", "q05", "median", "q95"} <= set(
        summary.columns)
    assert set(summary["seeds"]) == {2}
    assert set(summary["param_id"]) == set(tiny_sweep.params["param_id"])


def test_across_seeds_gives_the_values_of_each_group_over_seeds() -> None:
    """Every statistic is computed within its group, dimensions left missing included."""
    values = [0.0, 0.1, 0.2, 0.3, 0.4]
    metrics = pd.DataFrame({
        "param_id": ["a"] * 5 + ["b"] * 5, "seed": list(range(5)) * 2,
        "metric": "parking_rate", "value": values + [v + 1 for v in values]})
    for name, _ in DIMENSIONS:
        metrics[name] = pd.NA
    metrics["mode"] = pd.array([2] * 10, dtype="Int8")
    summary = across_seeds(metrics, "parking_rate")
    assert list(summary["param_id"]) == ["a", "b"]
    row = summary.iloc[0]
    assert (row["seeds"], row["min"], row["median"], row["max"]) == (5, 0.0, 0.2, 0.4)
    assert row["mean"] == pytest.approx(0.2)
    assert row["q05"] == pytest.approx(0.02) and row["q95"] == pytest.approx(0.38)
    assert summary.iloc[1]["q95"] == pytest.approx(1.38)
    assert summary[["q05", "q95"]].notna().all().all()


def test_category_columns_give_the_metrics_their_str_values_give(tiny_run: WorkloadRun) -> None:
    """The transactions frame's ``category`` columns (docs/analysis.md) change no metric:
    the same frames with those columns as ``str`` give equal metrics and helper tables."""
    frames = tiny_run.frames
    tx = frames.transactions
    as_str = tx.astype({c: "str" for c, t in SCHEMAS["transactions"] if t == "category"})
    assert any(isinstance(t, pd.CategoricalDtype) for t in tx.dtypes)
    plain = Frames({**frames.tables, "transactions": as_str})
    pd.testing.assert_frame_equal(run_metrics(frames), run_metrics(plain))
    for by in ("issuer", "mode"):
        for causes in (False, True):
            pd.testing.assert_frame_equal(parking_rates(tx, by, causes),
                                          parking_rates(as_str, by, causes))
    for by in (("mode",), ("use_case", "mode"), ("use_case",)):
        pd.testing.assert_frame_equal(latency_percentiles(tx, by=by).reset_index(drop=True),
                                      latency_percentiles(as_str, by=by).reset_index(drop=True),
                                      check_dtype=False, check_index_type=False)


def test_parking_rates_count_each_row_of_runs_joined_with_the_same_ids(
        tiny_run: WorkloadRun) -> None:
    """A sweep's frames joined across runs of one seed list the same transaction ids once per
    run: each row is a transaction of its own, so the rates of a frame joined with itself
    are its own rates over twice the transactions (they used to double the parked count over
    the same denominator)."""
    tx = tiny_run.transactions
    twice = pd.concat([tx, tx], ignore_index=True)
    for by in ("issuer", "mode"):
        for causes in (False, True):
            once, doubled = parking_rates(tx, by, causes), parking_rates(twice, by, causes)
            assert doubled["parking_rate"].tolist() == once["parking_rate"].tolist()
            assert doubled["transactions"].tolist() == [2 * n for n in once["transactions"]]
            assert doubled["parked"].tolist() == [2 * n for n in once["parked"]]
