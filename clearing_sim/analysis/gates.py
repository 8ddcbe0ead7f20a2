"""Gates: expectations over a run's metrics, written in workload and sweep files.

Public names: ``GATE_KINDS``, ``METRIC_SHAPES``, ``Gate``, ``GateOutcome``, ``check_gates``,
``parse_gate``, ``read_gates``, ``row_name``, ``workload_names``.

A file's ``gates`` (docs/workloads.md) lists expressions under two kinds::

    gates:
      always:      # holds on every seed of a parameter set
        - parking_rate <= 0.02
        - settlement_latency_p95_s{mode=2} between 30 and 90    # a band
      sometimes:   # holds on at least one seed of a parameter set
        - parking_rate{cause=approval_sla_exceeded} > 0

An expression is ``METRIC[{DIMENSION=VALUE, ...}] OP NUMBER`` (``OP``: ``<``, ``<=``, ``>``,
``>=``, ``==``, ``!=``) or a band, ``METRIC[{...}] between LOW and HIGH`` (both ends
included). ``METRIC`` and its dimensions are a row of ``run_metrics`` (``METRIC_SHAPES``: a
dimension left out is the metric's "all" row); a metric, dimension or value that cannot be
a row is a ``Problem`` at the file's line (exit 2). An issuer is named by its key or its
participantName, a subscription by its key.

``check_gates(gates, metrics)`` reads a tidy metrics frame (one run's, or a sweep's with
``param_id``, ``param_label`` and ``seed``) and answers one ``GateOutcome`` per gate and
parameter set: each seed's figure (``None`` when the run has no such row: a latency of a mode
where nothing settled) and whether the gate holds. A run with no figure does not hold.
Gates read results only: they change no run and no digest.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
from attrs import frozen

from clearing_sim.analysis.metrics import DELIVERY_OUTCOMES, DIMENSIONS, PARK_CAUSES
from clearing_sim.domain.delivery import ATTEMPTS_MAX
from clearing_sim.scenario.errors import Problem
from clearing_sim.scenario.source import Document

__all__ = ["GATE_KINDS", "METRIC_SHAPES", "Gate", "GateOutcome", "check_gates", "parse_gate",
           "read_gates", "row_name", "workload_names"]

#: Gate kinds, as the file's keys: what each asks of a parameter set's seeds.
GATE_KINDS = {"always": "every seed", "sometimes": "at least one seed"}

_LATENCY = ("transactions", "settled_rate", "settlement_latency_p50_s",
            "settlement_latency_p95_s", "settlement_latency_p99_s", "settlement_latency_mean_s")
_DELIVERY = ("deliveries", "delivery_success_rate", "first_attempt_success_rate",
             "attempts_mean", "delivery_latency_p50_s", "delivery_latency_p95_s",
             "delivery_latency_p99_s", "duplicate_arrivals", "time_to_disable_h")
#: Every metric ``run_metrics`` answers → the sets of dimensions its rows are broken down by
#: (``()``: the row over everything). tests/analysis/test_gates.py checks it against a run.
METRIC_SHAPES: dict[str, tuple[frozenset[str], ...]] = {
    **{name: (frozenset(), frozenset({"mode"}), frozenset({"use_case", "mode"}))
       for name in _LATENCY},
    "parking_rate": tuple(frozenset(s) for s in ((), ("cause",), ("issuer",),
                                                  ("issuer", "cause"), ("mode",),
                                                  ("mode", "cause"))),
    **{name: (frozenset({"subscription"}),) for name in _DELIVERY},
    "deliveries_by_attempts": (frozenset({"subscription", "cause", "attempts"}),),
    "subscriptions_disabled": (frozenset(),),
}
_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, ">": operator.gt}
_NUMBER = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_VALUE = r'(?:"[^"\\]*"|[A-Za-z0-9_.-]+)'
_SELECTOR = rf"\s*[A-Za-z_]+\s*=\s*{_VALUE}\s*"
_GATE = re.compile(
    rf"\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*"
    rf"(?:\{{(?P<where>{_SELECTOR}(?:,{_SELECTOR})*)\}}\s*)?"
    rf"(?:(?P<op><=|>=|==|!=|<|>)\s*(?P<bound>{_NUMBER})"
    rf"|between\s+(?P<low>{_NUMBER})\s+and\s+(?P<high>{_NUMBER}))\s*")
_BARE = re.compile(r"[A-Za-z0-9_.-]+")


@frozen
class Gate:
    """One expectation: ``kind`` (a ``GATE_KINDS`` key), the text as written, and where."""

    kind: str
    text: str
    metric: str
    where: tuple[tuple[str, str | int], ...]  # dimension → value, as written
    op: str  # an ``_OPERATORS`` key, or "between"
    bounds: tuple[float, ...]  # (bound,) or (low, high)
    site: str = ""  # "path:line:col: field"

    def holds(self, figure: float | None) -> bool:
        if figure is None or math.isnan(figure):
            return False
        if self.op == "between":
            return self.bounds[0] <= figure <= self.bounds[1]
        return _OPERATORS[self.op](figure, self.bounds[0])

    @property
    def figure_name(self) -> str:
        """``metric{dim=value, ...}``: what a figure of this gate is called in messages."""
        return row_name(self.metric, self.where)


@frozen
class GateOutcome:
    """A gate on one parameter set: each seed's figure and whether the gate holds."""

    gate: Gate
    param_id: str  # "" for a single workload run
    label: str  # the parameter set's label, or the workload's name
    figures: tuple[tuple[int, float | None], ...]  # (seed, figure)

    @property
    def passed(self) -> bool:
        held = [self.gate.holds(figure) for _, figure in self.figures]
        return all(held) if self.gate.kind == "always" else any(held)

    @property
    def cell(self) -> str:
        """``parameter set LABEL (ID)``, or ``workload NAME``."""
        return f"parameter set {self.label} ({self.param_id})" if self.param_id \
            else f"workload {self.label}"

    def figure_lines(self) -> list[str]:
        return [f"seed {seed}: {self.gate.figure_name} = {_shown(figure)}"
                for seed, figure in self.figures]

    def message(self) -> str:
        """Why the gate missed (``""`` when it held): the cell, and the seeds' figures —
        for ``always`` each seed that breaks it, for ``sometimes`` every seed."""
        if self.passed:
            return ""
        head = f"gate missed: {self.gate.kind} {self.gate.text.strip()!r} ({self.gate.site})"
        if self.gate.kind == "always":
            broken = [(seed, figure) for seed, figure in self.figures
                      if not self.gate.holds(figure)]
            return "\n".join(f"{head}: {self.cell}, seed {seed}: {self.gate.figure_name} = "
                             f"{_shown(figure)}" for seed, figure in broken)
        seeds = "; ".join(self.figure_lines()) or "no runs"
        return f"{head}: {self.cell} held on no seed: {seeds}"


def _shown(figure: float | None) -> str:
    if figure is None or math.isnan(figure):
        return "no figure (the run has no such row)"
    return f"{figure:.6g}"


def row_name(metric: str, where: Iterable[tuple[str, str | int]]) -> str:
    """``metric{dimension=value, ...}`` as a gate writes it (a value that is not one word in
    double quotes); just ``metric`` for its "all" row."""
    parts = [f"{d}={v}" if _BARE.fullmatch(str(v)) else f'{d}="{v}"' for d, v in where]
    return metric + ("{" + ", ".join(parts) + "}" if parts else "")


# reading -----------------------------------------------------------------------------------
def _dimension_value(metric: str, dimension: str, raw: str,
                     names: Mapping[str, Mapping[str, str]] | None
                     ) -> tuple[str | int | None, str]:
    """The value a ``run_metrics`` row holds for ``raw``, or ``None`` and why not."""
    text = raw[1:-1] if raw.startswith('"') else raw
    if names is None and dimension in ("issuer", "subscription"):
        return text, ""
    if dimension in ("mode", "attempts"):
        top = 3 if dimension == "mode" else ATTEMPTS_MAX
        if text.isdigit() and 1 <= int(text) <= top:
            return int(text), ""
        return None, f"expected {dimension} to be a whole number from 1 to {top}"
    if dimension == "use_case":
        choices: Iterable[str] = ("redeem", "swap")
    elif dimension == "cause":  # a delivery's outcome, or why a transaction parked
        choices = DELIVERY_OUTCOMES if metric == "deliveries_by_attempts" else PARK_CAUSES
    else:
        known = (names or {}).get(dimension, {})
        if text in known:
            return known[text], ""
        choices = sorted(dict.fromkeys(known))
    if text in choices:
        return text, ""
    listed = ", ".join(choices) or "none in this file"
    return None, f"{text!r} is not a {dimension} here; expected one of: {listed}"


def parse_gate(kind: str, text: str, names: Mapping[str, Mapping[str, str]] | None = None,
               site: str = "") -> Gate:
    """A gate from its text; ``ValueError`` saying what is wrong. ``names`` maps ``issuer``
    and ``subscription`` to {name as written → name in the metrics} (none: any is taken)."""
    assert kind in GATE_KINDS, kind
    found = _GATE.fullmatch(text)
    if found is None:
        raise ValueError("expected METRIC OP NUMBER (OP: <, <=, >, >=, ==, !=) or METRIC "
                         "between LOW and HIGH, with optional {dimension=value, ...} after "
                         f"METRIC; got {text[:80]!r}")
    metric = found["metric"]
    if metric not in METRIC_SHAPES:
        close = difflib.get_close_matches(metric, list(METRIC_SHAPES), n=2)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise ValueError(f"unknown metric {metric!r}{hint}; expected one of: "
                         f"{', '.join(METRIC_SHAPES)}")
    where: dict[str, str | int] = {}
    for selector in found["where"].split(",") if found["where"] else ():
        dimension, _, raw = (part.strip() for part in selector.partition("="))
        if dimension not in dict(DIMENSIONS):
            raise ValueError(f"unknown dimension {dimension!r}; expected one of: "
                             f"{', '.join(d for d, _ in DIMENSIONS)}")
        if dimension in where:
            raise ValueError(f"{dimension} is given twice; expected each dimension once")
        value, why = _dimension_value(metric, dimension, raw, names)
        if value is None:
            raise ValueError(why)
        where[dimension] = value
    if frozenset(where) not in METRIC_SHAPES[metric]:
        shapes = " or ".join("{" + ", ".join(sorted(s)) + "}" if s else "none"
                             for s in METRIC_SHAPES[metric])
        raise ValueError(f"{metric} has no row by {{{', '.join(sorted(where))}}}; expected "
                         f"dimensions: {shapes}")
    texts = [found["bound"]] if found["op"] else [found["low"], found["high"]]
    bounds = [float(t) for t in texts]
    if not all(math.isfinite(b) for b in bounds):  # 1e999 reads as inf
        raise ValueError(f"expected finite numbers as bounds, got {' and '.join(texts)}")
    if bounds != sorted(bounds):
        raise ValueError(f"expected the lower bound first: {texts[0]} is above {texts[1]}")
    return Gate(kind, text, metric, tuple(where.items()), found["op"] or "between",
                tuple(bounds), site)


def workload_names(data: Any) -> dict[str, dict[str, str]]:
    """{"issuer": {key or name → name}, "subscription": {key → key}} of a workload's data."""
    issuers: dict[str, str] = {}
    for key, spec in (data.get("issuers") or {}).items() if isinstance(data, dict) else ():
        name = spec.get("name", key) if isinstance(spec, dict) else key
        issuers[key] = issuers[str(name)] = str(name)
    webhooks = data.get("webhooks") or {} if isinstance(data, dict) else {}
    return {"issuer": issuers, "subscription": {key: key for key in webhooks}}


def read_gates(document: Document, names: Mapping[str, Mapping[str, str]]
               ) -> tuple[tuple[Gate, ...], list[Problem]]:
    """The gates of a file (its ``gates`` key, already checked by its schema) and a problem
    at the line of each expression that cannot be read."""
    gates: list[Gate] = []
    problems: list[Problem] = []
    raw = document.data.get("gates") if isinstance(document.data, dict) else None
    if not isinstance(raw, dict):
        return (), problems
    for kind in GATE_KINDS:
        texts = raw.get(kind)
        for i, text in enumerate(texts if isinstance(texts, list) else ()):
            path = ("gates", kind, i)
            if not isinstance(text, str):
                continue  # the schema said so
            where = document.locate(path)
            site = f"{document.path}:{where.line}:{where.column}: gates.{kind}[{i}]"
            try:
                gates.append(parse_gate(kind, text, names, site))
            except ValueError as error:
                problems.append(document.problem_at(path, str(error)))
    return tuple(gates), problems


# checking ----------------------------------------------------------------------------------
def _label(value: Any) -> Any:
    """A dimension's cell as a gate writes it: ``None`` when missing, a Python int or str."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def _figures(gates: Sequence[Gate], metrics: pd.DataFrame
             ) -> dict[tuple[Any, ...], float]:
    """(param_id, seed, metric, each dimension's label) → value, for the gates' metrics: one
    pass over the rows, whatever the number of gates."""
    wanted = metrics[metrics["metric"].isin({gate.metric for gate in gates})]
    columns = ["param_id", "seed", "metric", *(d for d, _ in DIMENSIONS), "value"]
    return {(str(row[0]), int(row[1]), row[2], *(_label(v) for v in row[3:-1])): float(row[-1])
            for row in wanted[columns].itertuples(index=False, name=None)}


def check_gates(gates: Sequence[Gate], metrics: pd.DataFrame, seeds: Sequence[int] = (),
                label: str = "") -> list[GateOutcome]:
    """Each gate on each parameter set of ``metrics``, gates first, parameter sets in the
    order they appear. A sweep's ``metrics`` carry ``param_id``, ``param_label`` and ``seed``;
    one run's carry none of them: give its ``seeds`` (one) and ``label`` (the workload's
    name). Every seed of a parameter set is listed, with ``None`` where it has no figure."""
    if "param_id" in metrics.columns:
        cells = list(dict.fromkeys(zip(metrics["param_id"], metrics["param_label"],
                                       strict=True)))
        cell_seeds = {pid: list(dict.fromkeys(int(s) for s in metrics.loc[
            metrics["param_id"] == pid, "seed"])) for pid, _ in cells}
    else:
        assert len(seeds) == 1, "one run's metrics: give its seed"
        metrics = metrics.assign(param_id="", seed=seeds[0])
        cells, cell_seeds = [("", label)], {"": list(seeds)}
    found = _figures(gates, metrics)
    outcomes = []
    for gate in gates:
        chosen = dict(gate.where)
        row = (gate.metric, *(chosen.get(d) for d, _ in DIMENSIONS))
        for param_id, param_label in cells:
            figures = tuple((seed, found.get((param_id, seed, *row)))
                            for seed in cell_seeds[param_id])
            outcomes.append(GateOutcome(gate, param_id, str(param_label), figures))
    return outcomes
