"""matplotlib figures of frames and metrics; each function answers a new ``Figure``.

Public names: ``attempts_histogram``, ``latency_cdf``, ``parking_by_issuer``, ``waterfall``.

- ``latency_cdf(transactions, by="mode")``: the empirical CDF of settlement latency (seconds,
  log scale) per group, with its p50, p95 and p99 in the legend.
- ``parking_by_issuer(metrics)``: the parking rate per issuer, one bar per parameter set at
  the mean over seeds, a whisker over the seeds' range, and each seed as a dot.
- ``attempts_histogram(deliveries)``: deliveries by number of attempts, stacked by outcome.
- ``waterfall(saga_steps, transaction_id, …)``: one transaction's timeline: each saga step
  that ran as a bar from when it became current to when it ended (a step never reached is
  left out), its lifecycle (received, in flight, parked with its cause, terminal), the issuer
  instruction statuses and the webhook attempts as marks on rows of their own; the title
  names its use case, mode and status.

Figures are built with the object API (``matplotlib.figure.Figure``), not ``pyplot``: no global
state, nothing shown, safe in worker processes; a notebook displays a returned figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["attempts_histogram", "latency_cdf", "parking_by_issuer", "waterfall"]

_OUTCOME_COLOURS = {"delivered": "#2a9d8f", "failed": "#e76f51", "dropped": "#8d99ae",
                    "pending": "#e9c46a"}
_STEP_COLOURS = {"done": "#2a9d8f", "cancelled": "#8d99ae", "current": "#e76f51"}
_STYLES = ("-", "--", ":", "-.")


def _figure(width: float = 7.0, height: float = 4.2) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


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


def latency_cdf(transactions: pd.DataFrame, by: str | Sequence[str] = "mode",
                title: str = "Settlement latency by mode") -> Figure:
    """Empirical CDF of ``settlement_latency_s`` of settled transactions, one line per group;
    with several keys the last picks the colour and the others the line style."""
    keys = [by] if isinstance(by, str) else list(by)
    figure, ax = _figure(8.0 if len(keys) > 1 else 7.0, 4.4)
    settled = transactions[transactions["lifecycle_status"] == "settled"]
    colours: dict[Any, int] = {}
    styles: dict[Any, int] = {}
    for values, group in settled.groupby(keys, sort=False, dropna=False):
        latency = np.sort(group["settlement_latency_s"].to_numpy(dtype=float))
        if len(latency) == 0:
            continue
        labels = values if isinstance(values, tuple) else (values,)
        colour = colours.setdefault(labels[-1], len(colours))
        style = styles.setdefault(labels[:-1], len(styles))
        share = np.arange(1, len(latency) + 1) / len(latency)
        p50, p95, p99 = np.percentile(latency, (50, 95, 99))
        ax.step(latency, share, where="post", color=f"C{colour % 10}",
                linestyle=_STYLES[style % len(_STYLES)],
                label=f"{_label(keys, values)}  (n={len(latency)}, p50 {p50:.1f} s, "
                      f"p95 {p95:.1f} s, p99 {p99:.1f} s)")
    ax.set_xscale("log")
    ax.set_xlabel("settlement latency, initiation to settled (virtual seconds, log scale)")
    ax.set_ylabel("share of settled transactions")
    ax.set_ylim(0, 1.01)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title)
    if ax.lines:
        handles, names = ax.get_legend_handles_labels()
        order = sorted(range(len(names)), key=names.__getitem__)
        ax.legend([handles[i] for i in order], [names[i] for i in order],
                  fontsize="small" if len(names) <= 4 else "x-small", loc="lower right")
    return figure


def parking_by_issuer(metrics: pd.DataFrame, by: str = "param_label",
                      title: str = "Parking rate by issuer (spread across seeds)") -> Figure:
    """Bars: mean parking rate over seeds per issuer and ``by`` group; whiskers: min–max over
    seeds; dots: the seeds. ``metrics`` is a sweep's metrics (or one run's)."""
    rows = metrics[(metrics["metric"] == "parking_rate") & metrics["issuer"].notna()
                   & metrics["cause"].isna()]
    if by not in rows.columns:
        rows = rows.assign(**{by: "run"})
    issuers = sorted(rows["issuer"].unique())
    groups = list(dict.fromkeys(rows[by]))
    figure, ax = _figure(max(6.0, 1.6 * len(issuers) * max(1, len(groups)) ** 0.5), 4.2)
    width = 0.8 / max(1, len(groups))
    for g, group in enumerate(groups):
        mine = rows[rows[by] == group]
        centres = np.arange(len(issuers)) - 0.4 + width * (g + 0.5)
        stats = [mine.loc[mine["issuer"] == issuer, "value"].to_numpy(dtype=float)
                 for issuer in issuers]
        means = [v.mean() if len(v) else np.nan for v in stats]
        low = [m - v.min() if len(v) else 0.0 for m, v in zip(means, stats, strict=True)]
        high = [v.max() - m if len(v) else 0.0 for m, v in zip(means, stats, strict=True)]
        bars = ax.bar(centres, means, width * 0.9, yerr=[low, high], capsize=3,
                      label=str(group), alpha=0.8)
        colour = bars.patches[0].get_facecolor() if bars.patches else None
        for x, values in zip(centres, stats, strict=True):
            offsets = np.linspace(-width * 0.25, width * 0.25, len(values)) if len(
                values) > 1 else np.zeros(len(values))
            ax.scatter(x + offsets, values, s=10, color="black", zorder=3, alpha=0.6,
                       edgecolors=colour)
    ax.set_xticks(np.arange(len(issuers)), issuers)
    ax.set_ylabel("share of the issuer's transactions that parked")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    if len(groups) > 1:
        ax.legend(fontsize="small")
    return figure


def attempts_histogram(deliveries: pd.DataFrame,
                       title: str = "Webhook deliveries by number of attempts") -> Figure:
    """Deliveries per number of attempts (1–7), stacked by outcome."""
    figure, ax = _figure()
    counts = deliveries.groupby(["attempts", "outcome"]).size().unstack(fill_value=0)
    attempts = np.arange(1, 8)
    counts = counts.reindex(attempts, fill_value=0)
    bottom = np.zeros(len(attempts))
    for outcome in [o for o in _OUTCOME_COLOURS if o in counts.columns]:
        values = counts[outcome].to_numpy(dtype=float)
        ax.bar(attempts, values, bottom=bottom, label=outcome, color=_OUTCOME_COLOURS[outcome])
        bottom += values
    ax.set_xticks(attempts)
    ax.set_xlabel("attempts per delivery (retries at 1 min, 5 min, 30 min, 2 h, 12 h, 24 h)")
    ax.set_ylabel("deliveries")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    return figure


def _step_spans(steps: pd.DataFrame, end_ms: int) -> list[tuple[int, str, int, int, str]]:
    """(index, name, start, end, final status) per step: from when it became current (or
    ended, if it never was) to when it ended (or ``end_ms``, if it is still current)."""
    spans = []
    for index, rows in steps.sort_values(["index", "at_ms"], kind="stable").groupby("index"):
        last = rows.iloc[-1]
        if last["status"] == "pending":
            continue  # never reached (a cancelled or stopped path's later steps)
        current = rows[rows["status"] == "current"]
        stop = int(last["at_ms"]) if last["status"] != "current" else end_ms
        begin = int(current["at_ms"].iloc[0]) if len(current) else stop
        spans.append((int(index), str(last["name"]), begin, stop, str(last["status"])))
    return spans


def _lifecycle_marks(tx: Any) -> list[tuple[str, float, str]]:
    """The transaction's public states on a ``lifecycle`` row, from its ``transactions`` row."""
    marks: list[tuple[str, float, str]] = [("lifecycle", int(tx["initiated_ms"]), "received")]
    if not pd.isna(tx["in_flight_ms"]):
        marks.append(("lifecycle", int(tx["in_flight_ms"]), "in-flight"))
    if tx["ever_parked"] and not pd.isna(tx["parked_ms"]):
        cause = "" if pd.isna(tx["park_cause"]) else f" ({tx['park_cause']})"
        marks.append(("lifecycle", int(tx["parked_ms"]), f"parked{cause}"))
    if tx["terminal"] and not pd.isna(tx["terminal_ms"]) \
            and not (tx["parked"] and tx["terminal_ms"] == tx["parked_ms"]):
        marks.append(("lifecycle", int(tx["terminal_ms"]), str(tx["lifecycle_status"])))
    return marks


def _title(tx: Any) -> str:
    parts = [f"Transaction {tx['transaction_id']}"]
    if not pd.isna(tx["use_case"]):
        parts.append(str(tx["use_case"]))
    if not pd.isna(tx["mode"]):
        mint = "" if pd.isna(tx["mint_mode"]) else f" → Mode {tx['mint_mode']}"
        parts.append(f"Mode {tx['mode']}{mint}")
    status = str(tx["lifecycle_status"])
    parts.append(f"{status}, parked" if tx["parked"] else status)
    return " · ".join(parts)


def waterfall(saga_steps: pd.DataFrame, transaction_id: str,
              instructions: pd.DataFrame | None = None,
              attempts: pd.DataFrame | None = None,
              deliveries: pd.DataFrame | None = None,
              transactions: pd.DataFrame | None = None) -> Figure:
    """One transaction's timeline, in virtual seconds from its initiation (a symmetric log
    scale when it spans more than ten minutes, so seconds and hours both show). A step still
    current ends where the transaction stopped (its terminal time, from ``transactions``)."""
    steps = saga_steps[saga_steps["transaction_id"] == transaction_id]
    assert len(steps), f"no saga steps for transaction {transaction_id}"
    start = int(steps["at_ms"].min())
    marks: list[tuple[str, float, str]] = []
    if instructions is not None:
        for row in instructions[instructions["transaction_id"] == transaction_id].itertuples():
            for column, name in (("received_ms", "RECEIVED"),
                                 ("pending_approval_ms", "PENDING_APPROVAL"),
                                 ("approved_ms", "APPROVED"), ("executing_ms", "EXECUTING"),
                                 ("final_ms", str(row.final_status))):
                at = getattr(row, column)
                if not pd.isna(at):
                    marks.append((f"issuer {row.leg} ({row.issuer})", int(at), name))
    if attempts is not None and deliveries is not None:
        events = deliveries.loc[deliveries["transaction_id"] == transaction_id,
                                ["event_id", "event_type"]]
        mine = attempts.merge(events, on="event_id")
        for row in mine.itertuples():
            marks.append((f"webhook {row.subscription}", int(row.sent_ms),
                          f"{row.event_type.split('.')[-1]} #{row.attempt} {row.outcome}"))
    end = max([int(steps["at_ms"].max()), *(int(m[1]) for m in marks if
                                             m[0].startswith("issuer"))])
    title = f"Transaction {transaction_id}"
    if transactions is not None:
        found = transactions[transactions["transaction_id"] == transaction_id]
        if len(found):
            tx = found.iloc[0]
            marks[:0] = _lifecycle_marks(tx)
            title = _title(tx)
            if not pd.isna(tx["terminal_ms"]):
                end = int(tx["terminal_ms"])
    spans = _step_spans(steps, end)
    rows = [name for _, name, *_ in spans]
    rows += list(dict.fromkeys(m[0] for m in marks))
    figure, ax = _figure(8.0, 0.45 * len(rows) + 1.6)
    for index, _name, begin, stop, status in spans:
        ax.barh(index, max((stop - begin) / 1000, 0.02), left=(begin - start) / 1000,
                color=_STEP_COLOURS.get(status, "#264653"), height=0.6)
        ax.text((stop - start) / 1000, index, f"  {(stop - begin) / 1000:.2f} s  {status}",
                va="center", fontsize="x-small")
    for n, (label, at, text) in enumerate(marks):
        y = rows.index(label)
        ax.plot((at - start) / 1000, y, marker="|", markersize=12, color="#264653")
        ax.annotate(text, ((at - start) / 1000, y), xytext=(2, 7 if n % 2 else -11),
                    textcoords="offset points", fontsize="xx-small")
    ax.set_yticks(range(len(rows)), rows)
    ax.invert_yaxis()
    last = max([end, *(int(m[1]) for m in marks)])
    if last - start > 600_000:
        ax.set_xscale("symlog", linthresh=10)
    ax.set_xlabel("virtual seconds since initiation")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, axis="x", alpha=0.3)
    return figure
