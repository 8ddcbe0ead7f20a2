"""How the report and the figures show numbers to a reader: labels, units, significant figures.

Public names: ``DURATION_UNITS``, ``column_label``, ``duration_unit``, ``format_count``,
``format_duration``, ``format_number``, ``metric_label``, ``metric_unit``, ``to_seconds``.

The frames and the Parquet files keep their raw column and metric names and base units
(``delivery_latency_p99_s`` in seconds, rates as shares 0–1); only what a reader sees changes:

- a metric's name becomes a label (``first_attempt_success_rate`` → "First-attempt success
  rate"); a name without a label is shown as it is;
- durations are shown in one unit per column, chosen from the column's values
  (``duration_unit``): ms below a second, s below two minutes, min below two hours, h above
  (53,000 s is "14.7 h", not "5.3e+04");
- rates as percentages;
- every measured value with three significant figures, never in exponent notation
  (``format_number``: 5.97, 0.375, 107, 14,700); counts exactly (``format_count``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["DURATION_UNITS", "column_label", "duration_unit", "format_count",
           "format_duration", "format_number", "metric_label", "metric_unit", "to_seconds"]

#: (unit, seconds in one) from the smallest; a column takes the largest unit its typical value
#: reaches twice of (2 min → "min"), or "ms" below one second.
DURATION_UNITS: tuple[tuple[str, float], ...] = (("ms", 0.001), ("s", 1.0), ("min", 60.0),
                                                 ("h", 3600.0))
_BASE_UNITS = {"_ms": 0.001, "_s": 1.0, "_h": 3600.0}

_METRIC_LABELS = {
    "transactions": "Transactions",
    "settled_rate": "Settled",
    "settlement_latency_p50_s": "Settlement latency p50",
    "settlement_latency_p95_s": "Settlement latency p95",
    "settlement_latency_p99_s": "Settlement latency p99",
    "settlement_latency_mean_s": "Settlement latency, mean",
    "parking_rate": "Parking rate",
    "deliveries": "Deliveries",
    "delivery_success_rate": "Delivery success rate",
    "first_attempt_success_rate": "First-attempt success rate",
    "attempts_mean": "Attempts per delivery, mean",
    "delivery_latency_p50_s": "Delivery latency p50",
    "delivery_latency_p95_s": "Delivery latency p95",
    "delivery_latency_p99_s": "Delivery latency p99",
    "duplicate_arrivals": "Duplicate arrivals",
    "deliveries_by_attempts": "Deliveries by attempts",
    "subscriptions_disabled": "Subscriptions disabled",
    "time_to_disable_h": "Time to disable",
}
_COLUMN_LABELS = {
    "param_label": "Parameter set", "param_id": "Id", "case": "Case", "seed": "Seed",
    "seeds": "Seeds", "mode": "Mode", "issuer": "Issuer", "cause": "Cause",
    "subscription": "Subscription", "use_case": "Use case", "attempts": "Attempts",
    "transactions": "Transactions", "records": "Log records", "digest": "Digest",
}


def metric_label(metric: str) -> str:
    """The reader's name of a metric (its raw name if it has none)."""
    return _METRIC_LABELS.get(metric, metric)


def column_label(column: str) -> str:
    """The reader's name of a frame's column (its raw name if it has none)."""
    return _COLUMN_LABELS.get(column, column)


def metric_unit(metric: str) -> str:
    """What a metric's value is: ``duration`` (seconds once ``to_seconds`` is applied),
    ``rate`` (a share), ``count`` or ``number``."""
    if metric.endswith("_rate") or metric == "settled_rate":
        return "rate"
    if any(metric.endswith(suffix) for suffix in _BASE_UNITS):
        return "duration"
    if metric in ("transactions", "deliveries", "duplicate_arrivals",
                  "deliveries_by_attempts", "subscriptions_disabled"):
        return "count"
    return "number"


def to_seconds(metric: str) -> float:
    """Seconds in one unit of a duration metric's value (``_ms``, ``_s``, ``_h``)."""
    return next(factor for suffix, factor in _BASE_UNITS.items() if metric.endswith(suffix))


def duration_unit(seconds: Iterable[float]) -> tuple[str, float]:
    """(unit, seconds in one) for a column of durations in seconds: chosen from its median
    magnitude (NaN ignored), so every value of the column reads in one unit."""
    values = sorted(abs(v) for v in seconds if not math.isnan(v))
    typical = values[len(values) // 2] if values else 1.0
    if typical < 1.0:
        return DURATION_UNITS[0]
    chosen = DURATION_UNITS[1]
    for unit in DURATION_UNITS[2:]:
        if typical >= 2 * unit[1]:
            chosen = unit
    return chosen


def format_number(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant figures, in positional notation with thousands
    separators (5.97, 0.375, 107, 14,700); "—" for NaN."""
    if value is None or math.isnan(value):
        return "—"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = digits - 1 - magnitude
    rounded = round(value, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > magnitude:  # 9.996 → 10.0
        decimals -= 1
    return f"{rounded:,.{max(0, decimals)}f}"


def format_count(value: float) -> str:
    """A count, exact (a mean of counts over seeds gets three significant figures)."""
    if value is None or math.isnan(value):
        return "—"
    return f"{int(value):,}" if float(value).is_integer() else format_number(value)


def format_duration(seconds: float, unit: tuple[str, float] | None = None) -> str:
    """A duration with its unit: in ``unit`` (``duration_unit``), or its own best unit."""
    unit = unit or duration_unit([seconds])
    return f"{format_number(seconds / unit[1])} {unit[0]}"
