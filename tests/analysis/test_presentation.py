"""Issue 29 §1: what a reader sees: human labels, one duration unit per column chosen from it,
three significant figures without exponents, rates in per cent, and a 95 % t-interval over a
parameter set's seeds ("1 seed" where there is one)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from clearing_sim.analysis.presentation import (
    duration_unit,
    format_count,
    format_duration,
    format_number,
    metric_label,
)
from clearing_sim.analysis.report_tables import interval_table
from clearing_sim.analysis.spread import T_975, t_975, t_interval, with_intervals


@pytest.mark.parametrize(("value", "shown"), [
    (5.965, "5.96"), (0.3745, "0.374"), (107, "107"), (117.1, "117"), (52_990, "53,000"),
    (9.996, "10.0"), (0.000123456, "0.000123"), (0, "0"), (float("nan"), "—")])
def test_three_significant_figures_never_an_exponent(value: float, shown: str) -> None:
    assert format_number(value) == shown


@pytest.mark.parametrize(("seconds", "unit"), [
    ([0.25, 0.4], "ms"), ([11.8, 53.2, 90.0], "s"), ([387.6, 600], "min"),
    ([52_990, 61_200], "h")])
def test_a_duration_column_takes_the_unit_of_its_typical_value(seconds: list[float],
                                                                unit: str) -> None:
    assert duration_unit(seconds)[0] == unit


def test_the_issues_p99_delivery_latency_reads_in_hours() -> None:
    """`5.299e+04` and `6.12e+04` seconds (about 14.7 h) in the old report."""
    unit = duration_unit([52_990, 61_200])
    assert [format_duration(v, unit) for v in (52_990, 61_200)] == ["14.7 h", "17.0 h"]


def test_metric_names_become_labels_and_unknown_names_stay() -> None:
    assert metric_label("first_attempt_success_rate") == "First-attempt success rate"
    assert metric_label("no_such_metric") == "no_such_metric"


def test_t_table_holds_the_nist_values_and_never_narrows_between_rows() -> None:
    """NIST/SEMATECH e-Handbook §1.3.6.7.2, column 0.975."""
    assert (T_975[1], T_975[2], T_975[10], T_975[30]) == (12.706, 4.303, 2.228, 2.042)
    assert t_975(35) == T_975[30] and t_975(59) == T_975[40] and t_975(101) == 1.960
    assert all(t_975(df) >= t_975(df + 1) for df in range(1, 200))


def test_t_interval_of_three_seeds_and_of_one() -> None:
    mean, half = t_interval([1.0, 2.0, 3.0])  # s = 1, n = 3
    assert mean == 2.0 and half == pytest.approx(4.303 / math.sqrt(3))
    assert t_interval([5.0]) == (5.0, None)


def _summary(values: dict[str, list[float]], metric: str) -> pd.DataFrame:
    rows = []
    for label, seeds in values.items():
        series = pd.Series(seeds, dtype=float)
        rows.append({"param_id": label, "param_label": label, "metric": metric,
                     "use_case": None, "mode": pd.NA, "issuer": None, "cause": None,
                     "subscription": "treasury", "attempts": pd.NA, "seeds": len(seeds),
                     "mean": series.mean(), "std": series.std(), "min": series.min(),
                     "max": series.max()})
    return pd.DataFrame(rows)


def test_interval_table_cells_in_human_units_with_intervals_or_one_seed() -> None:
    summary = _summary({"three": [52_990.0, 61_200.0, 57_000.0], "one": [55_000.0]},
                       "delivery_latency_p99_s")
    table = interval_table(summary, ["delivery_latency_p99_s"], ["subscription"])
    assert list(table.columns) == ["Parameter set", "Subscription", "Seeds",
                                   "Delivery latency p99 (h)"]
    three, one = table["Delivery latency p99 (h)"]
    mean, half = t_interval([52_990.0, 61_200.0, 57_000.0])
    assert three == (f"{format_number(mean / 3600)} [{format_number((mean - half) / 3600)}, "
                     f"{format_number((mean + half) / 3600)}]")
    assert one == "15.3 (1 seed)"


def test_interval_table_shows_rates_in_per_cent_clipped_to_0_100() -> None:
    summary = _summary({"a": [0.0, 0.02, 0.0]}, "first_attempt_success_rate")
    (cell,) = interval_table(summary, ["first_attempt_success_rate"],
                             ["subscription"])["First-attempt success rate (%)"]
    assert cell.startswith("0.667 [0, ") and "e" not in cell


def test_with_intervals_matches_t_interval() -> None:
    summary = _summary({"a": [1.0, 2.0, 3.0], "b": [4.0]}, "attempts_mean")
    spread = with_intervals(summary)
    assert spread["ci_high"].iloc[0] == pytest.approx(2 + 4.303 / math.sqrt(3))
    assert math.isnan(spread["ci_low"].iloc[1])
    assert format_count(3.0) == "3" and format_count(1234.0) == "1,234"
