"""A parameter set's mean over its seeds with a 95 % Student-t interval.

Public names: ``T_975``, ``t_975``, ``t_interval``, ``with_intervals``.

Seeds of one parameter set are independent runs of the same model, so the mean of a metric
over ``n`` seeds has the interval ``mean ± t(0.975, n − 1) · s / √n`` (``s`` the seeds'
sample standard deviation). One seed gives no interval: the report says "1 seed".

The critical values ``t(0.975, df)`` are tabulated here (SciPy is not a dependency): df 1–30,
40, 60 and 100 from NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.2 "Critical
values of the Student's t distribution", column 0.975 (https://www.itl.nist.gov/div898/
handbook/eda/section3/eda3672.htm). A df between two rows takes the smaller row's value (a
slightly wider interval, never a narrower one); beyond 100 the normal's 1.960.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd  # type: ignore[import-untyped]

__all__ = ["T_975", "t_975", "t_interval", "with_intervals"]

#: df → t(0.975, df), NIST/SEMATECH e-Handbook §1.3.6.7.2.
T_975: dict[int, float] = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
    9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
    17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
    25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000,
    100: 1.984}
_NORMAL_975 = 1.960


def t_975(df: int) -> float:
    """``t(0.975, df)``: the tabulated row at or below ``df``; the normal's beyond 100."""
    assert df >= 1, "an interval needs two seeds or more"
    if df > 100:
        return _NORMAL_975
    return T_975[max(row for row in T_975 if row <= df)]


def t_interval(values: Sequence[float]) -> tuple[float, float | None]:
    """(mean, half-width of its 95 % t-interval); the half-width is None for one value."""
    n = len(values)
    assert n >= 1
    mean = math.fsum(values) / n
    if n == 1:
        return mean, None
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, t_975(n - 1) * math.sqrt(variance / n)


def with_intervals(summary: pd.DataFrame) -> pd.DataFrame:
    """``across_seeds``' summary with ``ci_low`` and ``ci_high``: the 95 % t-interval of each
    group's mean over its seeds (NaN for a group of one seed)."""
    seeds = summary["seeds"].astype("int64")
    factor = [t_975(n - 1) / math.sqrt(n) if n > 1 else math.nan for n in seeds]
    half = summary["std"].astype(float) * pd.Series(factor, index=summary.index)
    return summary.assign(ci_low=summary["mean"] - half, ci_high=summary["mean"] + half)
