"""One transaction's timeline as a figure (``plots.waterfall``).

Public names: ``waterfall``.

``waterfall(saga_steps, transaction_id, …)``: each saga step that ran as a bar from when it
became current to when it ended (a step never reached is left out), its lifecycle (received,
in flight, parked with its cause, terminal), the issuer instruction statuses and the webhook
attempts as marks on rows of their own, coloured by what they mean (a legend below), their
labels stacked so that none overlaps; the title names its use case, mode and status.
"""

from __future__ import annotations

from typing import Any

import pandas as pd  # type: ignore[import-untyped]
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from clearing_sim.analysis.figurekit import new_figure

__all__ = ["waterfall"]

_STEP_COLOURS = {"done": "#2a9d8f", "cancelled": "#8d99ae", "current": "#e76f51"}


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


Mark = tuple[str, float, str, str]  # (row, at ms, label, kind: progress | success | problem)

_MARK_COLOURS = {"progress": "#264653", "success": "#2a9d8f", "problem": "#e76f51"}
_MARK_MEANING = {"progress": "a step forward", "success": "settled, completed, delivered",
                 "problem": "parked, failed, rejected, not delivered"}
_STEP_MEANING = {"done": "saga step done", "current": "saga step current when it stopped",
                 "cancelled": "saga step cancelled"}
_GOOD = ("settled", "COMPLETED", "CONFIRMED")
_BAD = ("parked", "failed", "cancelled", "FAILED", "REJECTED", "EXPIRED", "CANCELLED")


def _kind(status: str) -> str:
    if status.startswith(_GOOD):
        return "success"
    return "problem" if status.startswith(_BAD) else "progress"


def _lifecycle_marks(tx: Any) -> list[Mark]:
    """The transaction's public states on a ``lifecycle`` row, from its ``transactions`` row."""
    marks: list[Mark] = [("lifecycle", int(tx["initiated_ms"]), "received", "progress")]
    if not pd.isna(tx["in_flight_ms"]):
        marks.append(("lifecycle", int(tx["in_flight_ms"]), "in-flight", "progress"))
    if tx["ever_parked"] and not pd.isna(tx["parked_ms"]):
        cause = "" if pd.isna(tx["park_cause"]) else f" ({tx['park_cause']})"
        marks.append(("lifecycle", int(tx["parked_ms"]), f"parked{cause}", "problem"))
    if tx["terminal"] and not pd.isna(tx["terminal_ms"]) \
            and not (tx["parked"] and tx["terminal_ms"] == tx["parked_ms"]):
        status = str(tx["lifecycle_status"])
        marks.append(("lifecycle", int(tx["terminal_ms"]), status, _kind(status)))
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


def _issuer_marks(instructions: pd.DataFrame, transaction_id: str) -> list[Mark]:
    marks: list[Mark] = []
    for row in instructions[instructions["transaction_id"] == transaction_id].itertuples():
        for column, name in (("received_ms", "RECEIVED"),
                             ("pending_approval_ms", "PENDING_APPROVAL"),
                             ("approved_ms", "APPROVED"), ("executing_ms", "EXECUTING"),
                             ("final_ms", str(row.final_status))):
            at = getattr(row, column)
            if not pd.isna(at):
                kind = "progress" if column != "final_ms" else _kind(name)
                marks.append((f"issuer {row.leg} ({row.issuer})", int(at), name, kind))
    return marks


def _webhook_marks(attempts: pd.DataFrame, deliveries: pd.DataFrame,
                   transaction_id: str) -> list[Mark]:
    events = deliveries.loc[deliveries["transaction_id"] == transaction_id,
                            ["event_id", "event_type"]]
    return [(f"webhook {row.subscription}", int(row.sent_ms),
             f"{row.event_type.split('.')[-1]}, attempt {row.attempt}: {row.outcome}",
             "success" if row.outcome == "success" else "problem")
            for row in attempts.merge(events, on="event_id").itertuples()]


_LABEL_PT = 7.5  # the labels' font size, points
_LEVEL_PT = 10.0  # one level of labels above or below a row


def _label_levels(figure: Figure, ax: Axes, marks: list[Mark], rows: list[str],
                  start: int) -> list[tuple[int, bool]]:
    """Per mark: its level (0 just above the row, 1 just below, 2 above that …) so that no two
    labels of a row overlap, and whether it reads leftwards (near the right edge)."""
    FigureCanvasAgg(figure)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    right = ax.transAxes.transform((1.0, 0.0))[0]
    taken: dict[tuple[str, int], list[tuple[float, float]]] = {}
    placed: list[tuple[int, bool]] = [(0, False)] * len(marks)
    pad = 4.0 * figure.dpi / 72
    for n in sorted(range(len(marks)), key=lambda i: (rows.index(marks[i][0]), marks[i][1])):
        row, at, text, _ = marks[n]
        x = float(ax.transData.transform(((at - start) / 1000, 0.0))[0])
        probe = ax.text(0, 0, text, fontsize=_LABEL_PT)
        width = probe.get_window_extent(renderer).width + pad
        probe.remove()
        leftwards = x + width > right
        span = (x - width, x) if leftwards else (x, x + width)
        level = 0
        while any(a < span[1] and span[0] < b for a, b in taken.get((row, level), [])):
            level += 1
        taken.setdefault((row, level), []).append(span)
        placed[n] = (level, leftwards)
    return placed


def _draw_marks(figure: Figure, ax: Axes, marks: list[Mark], rows: list[str],
                start: int) -> int:
    """Each mark as a coloured tick with its label at a level that overlaps no other label of
    its row; answers the most levels a row needed."""
    levels = _label_levels(figure, ax, marks, rows, start)
    for (label, at, text, kind), (level, leftwards) in zip(marks, levels, strict=True):
        x, y = (at - start) / 1000, rows.index(label)
        colour = _MARK_COLOURS[kind]
        ax.plot(x, y, marker="|", markersize=11, markeredgewidth=2, color=colour)
        above = level % 2 == 0
        offset = (3 + _LEVEL_PT * (level // 2)) * (1 if above else -1)
        ax.annotate(text, (x, y), xytext=(-2 if leftwards else 2, offset),
                    textcoords="offset points", fontsize=_LABEL_PT, color=colour,
                    ha="right" if leftwards else "left", va="bottom" if above else "top")
    return 1 + max((level for level, _ in levels), default=0)


def _legend(figure: Figure, statuses: set[str], kinds: set[str]) -> None:
    handles: list[Any] = [Patch(color=_STEP_COLOURS.get(status, "#264653"), label=meaning)
                          for status, meaning in _STEP_MEANING.items() if status in statuses]
    handles += [Line2D([], [], color=_MARK_COLOURS[kind], marker="|", linestyle="",
                       markersize=11, markeredgewidth=2, label=meaning)
                for kind, meaning in _MARK_MEANING.items() if kind in kinds]
    figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize="small")


def waterfall(saga_steps: pd.DataFrame, transaction_id: str,
              instructions: pd.DataFrame | None = None,
              attempts: pd.DataFrame | None = None,
              deliveries: pd.DataFrame | None = None,
              transactions: pd.DataFrame | None = None) -> Figure:
    """One transaction's timeline, in virtual seconds from its initiation (a symmetric log
    scale when it spans more than ten minutes, so seconds and hours both show). A step still
    current ends where the transaction stopped (its terminal time, from ``transactions``).
    Marks are coloured by what they mean (a legend below says so); their labels are stacked
    above and below their row so that none overlaps another."""
    steps = saga_steps[saga_steps["transaction_id"] == transaction_id]
    assert len(steps), f"no saga steps for transaction {transaction_id}"
    start = int(steps["at_ms"].min())
    marks: list[Mark] = []
    if instructions is not None:
        marks += _issuer_marks(instructions, transaction_id)
    if attempts is not None and deliveries is not None:
        marks += _webhook_marks(attempts, deliveries, transaction_id)
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
    figure, ax = new_figure(9.0, 0.5 * len(rows) + 2.2)
    for index, _name, begin, stop, status in spans:
        ax.barh(index, max((stop - begin) / 1000, 0.02), left=(begin - start) / 1000,
                color=_STEP_COLOURS.get(status, "#264653"), height=0.5)
        ax.text((stop - start) / 1000, index, f"  {(stop - begin) / 1000:.2f} s",
                va="center", fontsize=_LABEL_PT)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(len(rows) - 0.4, -0.6)
    last = max([end, *(int(m[1]) for m in marks)])
    if last - start > 600_000:
        ax.set_xscale("symlog", linthresh=10)
    ax.set_xlim(0, (last - start) / 1000 * 1.12 + 0.5)  # room for the last mark
    ax.set_xlabel("virtual seconds since initiation")
    ax.set_ylabel("saga steps, then events by source")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, axis="x", alpha=0.3)
    _legend(figure, {status for *_, status in spans}, {m[3] for m in marks})
    levels = _draw_marks(figure, ax, marks, rows, start)
    row_pt = max(0.5 * 72, (levels + 1) * _LEVEL_PT + 8)
    figure.set_size_inches(9.0, row_pt / 72 * len(rows) + 2.2)
    return figure
