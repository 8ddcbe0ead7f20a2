"""Gates (docs/workloads.md, Gates): the expression reader, the verdicts against a model of
"every seed" / "at least one seed", and mutated figures shown breaking each kind.

Issue 29 §3: ``always`` holds on every seed of a parameter set, ``sometimes`` on at least one,
a band is ``between LOW and HIGH``; an unknown metric is refused at its line (exit 2)."""

from __future__ import annotations

import json
import math
import operator
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from clearing_sim.analysis import SweepResult, run_workload, sweep
from clearing_sim.analysis.gatecheck import sweep_gates, workload_gates
from clearing_sim.analysis.gates import (
    METRIC_SHAPES,
    Gate,
    GateOutcome,
    check_gates,
    parse_gate,
    read_gates,
    row_name,
    workload_names,
)
from clearing_sim.analysis.loader import load_workload
from clearing_sim.analysis.metrics import DELIVERY_OUTCOMES, DIMENSIONS, PARK_CAUSES
from clearing_sim.analysis.runs import WorkloadRun
from clearing_sim.analysis.sweepfile import load_sweep
from clearing_sim.domain.delivery import ATTEMPTS_MAX
from clearing_sim.scenario.errors import ScenarioError, ScenarioInvalid
from clearing_sim.scenario.source import parse_yaml
from tests.analysis.conftest import INPUTS
from tests.analysis.kit import TINY_TEXT, variant

GATES_SWEEP = INPUTS / "gates_sweep.yaml"
TINY_NAMES = workload_names({"issuers": {"etherpound": {"name": "Ether Pound"},
                                         "stellarsterling": {"name": "Stellar Sterling"}},
                             "webhooks": {"treasury": {}}})


@pytest.fixture(scope="module")
def gates_sweep(tmp_path_factory: pytest.TempPathFactory) -> SweepResult:
    """The tiny workload, Ether Pound never silent (quiet) and silent half the time, seeds
    0-1, on disk."""
    return sweep(GATES_SWEEP, out=tmp_path_factory.mktemp("gates-sweep"))


def _shape(row: object) -> tuple[str, frozenset[str]]:
    return row.metric, frozenset(d for d, _ in DIMENSIONS  # type: ignore[attr-defined]
                                 if not pd.isna(getattr(row, d)))


def test_metric_shapes_are_exactly_the_rows_run_metrics_answers(tiny_run: WorkloadRun) -> None:
    """The catalogue the reader checks gates against is what the metrics hold: every row of a
    run has a shape listed, and every listed shape occurs (the disable workload adds
    time_to_disable_h), so a gate the reader accepts can find a figure."""
    disabled = run_workload(INPUTS / "disable.yaml", seed=0)
    seen = {_shape(row) for run in (tiny_run, disabled) for row in run.metrics.itertuples()}
    listed = {(metric, shape) for metric, shapes in METRIC_SHAPES.items() for shape in shapes}
    assert seen == listed


def test_attempts_bound_is_the_domains() -> None:
    assert parse_gate("always", f"deliveries_by_attempts{{subscription=s, cause=failed, "
                      f"attempts={ATTEMPTS_MAX}}} == 0").where[-1] == ("attempts", ATTEMPTS_MAX)
    with pytest.raises(ValueError, match="from 1 to"):
        parse_gate("always", f"deliveries_by_attempts{{subscription=s, cause=failed, "
                   f"attempts={ATTEMPTS_MAX + 1}}} == 0")


@pytest.mark.parametrize(("text", "metric", "where", "op", "bounds"), [
    ("parking_rate <= 0.02", "parking_rate", (), "<=", (0.02,)),
    ("  settlement_latency_p95_s{mode=2} between 30 and 90 ", "settlement_latency_p95_s",
     (("mode", 2),), "between", (30.0, 90.0)),
    ("parking_rate{cause=approval_sla_exceeded}>0", "parking_rate",
     (("cause", "approval_sla_exceeded"),), ">", (0.0,)),
    ('parking_rate{issuer="Ether Pound", cause=issuer_failed} != 1e-3', "parking_rate",
     (("issuer", "Ether Pound"), ("cause", "issuer_failed")), "!=", (0.001,)),
    ("parking_rate{issuer=etherpound} < .5", "parking_rate", (("issuer", "Ether Pound"),),
     "<", (0.5,)),
    ("delivery_latency_p99_s{subscription=treasury} >= -1", "delivery_latency_p99_s",
     (("subscription", "treasury"),), ">=", (-1.0,)),
])
def test_a_gate_reads_into_metric_dimensions_and_bounds(
        text: str, metric: str, where: tuple[tuple[str, object], ...], op: str,
        bounds: tuple[float, ...]) -> None:
    gate = parse_gate("always", text, TINY_NAMES)
    assert (gate.metric, gate.where, gate.op, gate.bounds) == (metric, where, op, bounds)


@pytest.mark.parametrize(("text", "message"), [
    ("parked_on_silence > 0", "unknown metric 'parked_on_silence'; expected one of: "),
    ("latency_p95_s between 30 and 90", "unknown metric 'latency_p95_s' (did you mean "
     "delivery_latency_p95_s or settlement_latency_p95_s?); expected one of: "),
    ("parking_rate{colour=red} > 0", "unknown dimension 'colour'"),
    ("parking_rate{mode=4} > 0", "mode to be a whole number from 1 to 3"),
    ("parking_rate{mode=1, mode=2} > 0", "mode is given twice"),
    ("parking_rate{use_case=redeem} > 0", "parking_rate has no row by {use_case}"),
    ("transactions{issuer=etherpound} > 0", "transactions has no row by {issuer}"),
    ("parking_rate{issuer=nobody} > 0", "'nobody' is not a issuer here; expected one of: "),
    ("parking_rate{cause=lost} > 0", "'lost' is not a cause here"),
    ("parking_rate{cause=delivered} > 0", "expected one of: approval_sla_exceeded, "),
    ("deliveries_by_attempts{subscription=treasury, cause=issuer_failed, attempts=1} > 0",
     "'issuer_failed' is not a cause here; expected one of: delivered, failed, dropped, "
     "pending"),
    ("parking_rate between 0.5 and 0.1", "expected the lower bound first: 0.5 is above 0.1"),
    ("parking_rate < 1e999", "expected finite numbers as bounds"),
    ("parking_rate < nan", "expected METRIC OP NUMBER"),
    ("parking_rate => 1", "expected METRIC OP NUMBER"),
    ("parking_rate <= 0.02 and settled_rate > 0", "expected METRIC OP NUMBER"),
    ("", "expected METRIC OP NUMBER"),
])
def test_a_gate_that_cannot_be_a_row_is_refused_saying_why(text: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_gate("always", text, TINY_NAMES)
    assert message in str(error.value)


_LABELS = {"use_case": st.sampled_from(["redeem", "swap"]), "mode": st.integers(1, 3),
           "issuer": st.sampled_from(["Ether Pound", "Stellar Sterling"]),
           "cause": st.sampled_from(PARK_CAUSES),  # (deliveries_by_attempts: outcomes)
           "subscription": st.just("treasury"), "attempts": st.integers(1, ATTEMPTS_MAX)}


@given(data=st.data(), metric=st.sampled_from(sorted(METRIC_SHAPES)))
def test_a_row_name_reads_back_as_the_same_row(data: st.DataObject, metric: str) -> None:
    """``row_name`` (messages, promoted files) writes what the reader reads: the same row."""
    shape = data.draw(st.sampled_from(METRIC_SHAPES[metric]))
    labels = {**_LABELS, "cause": st.sampled_from(
        DELIVERY_OUTCOMES if metric == "deliveries_by_attempts" else PARK_CAUSES)}
    where = tuple((d, data.draw(labels[d])) for d, _ in DIMENSIONS if d in shape)
    gate = parse_gate("always", f"{row_name(metric, where)} >= 0", TINY_NAMES)
    assert (gate.metric, gate.where) == (metric, where)


# verdicts against a model ------------------------------------------------------------------
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
        "==": operator.eq, "!=": operator.ne}
_FIGURES = st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 2.0]),
                     st.floats(-10, 10, allow_nan=False))


@given(kind=st.sampled_from(["always", "sometimes"]),
       op=st.sampled_from([*_OPS, "between"]), bounds=st.tuples(_FIGURES, _FIGURES),
       figures=st.lists(_FIGURES, min_size=1, max_size=5))
def test_verdicts_match_every_seed_and_some_seed(kind: str, op: str,
                                                  bounds: tuple[float | None, float | None],
                                                  figures: list[float | None]) -> None:
    """The model: a seed holds when it has a figure that satisfies the comparison (a band
    includes its ends); ``always`` is all seeds, ``sometimes`` any."""
    low, high = sorted(b if b is not None else 0.0 for b in bounds)
    text = f"parking_rate between {low!r} and {high!r}" if op == "between" \
        else f"parking_rate {op} {low!r}"
    gate = parse_gate(kind, text)
    outcome = GateOutcome(gate, "p", "p", tuple(enumerate(figures)))

    def holds(figure: float | None) -> bool:
        if figure is None:
            return False
        return low <= figure <= high if op == "between" else _OPS[op](figure, low)

    expected = (all if kind == "always" else any)(holds(f) for f in figures)
    assert outcome.passed == expected
    assert (outcome.message() == "") == expected


# mutated figures ---------------------------------------------------------------------------
def _breaking(gate: Gate, figure: float) -> float:
    """A figure on the wrong side of ``gate`` (which ``figure`` satisfies)."""
    if gate.op == "between":
        return gate.bounds[1] + 1
    bound = gate.bounds[0]
    return {"<": bound, "<=": bound + 1, ">": bound, ">=": bound - 1, "==": bound + 1,
            "!=": bound}[gate.op]


def _mutated(metrics: pd.DataFrame, gate: Gate, seeds: set[int], param_id: str) -> pd.DataFrame:
    """``metrics`` with ``gate``'s figure broken on ``seeds`` of ``param_id``."""
    mutated = metrics.copy()
    for (_, seed), _figure in _figures(metrics, gate, param_id).items():
        if seed in seeds:
            rows = _rows(mutated, gate, param_id, seed)
            mutated.loc[rows, "value"] = _breaking(gate, mutated.loc[rows, "value"].item())
    return mutated


def _rows(metrics: pd.DataFrame, gate: Gate, param_id: str, seed: int) -> pd.Series:
    chosen = dict(gate.where)
    mask = (metrics["metric"] == gate.metric) & (metrics["param_id"] == param_id) \
        & (metrics["seed"] == seed)
    for dimension, _ in DIMENSIONS:
        column = metrics[dimension]
        mask &= (column == chosen[dimension]) if dimension in chosen else column.isna()
    return mask.fillna(False)


def _figures(metrics: pd.DataFrame, gate: Gate, param_id: str) -> dict[tuple[str, int], float]:
    seeds = metrics.loc[metrics["param_id"] == param_id, "seed"].unique()
    return {(param_id, int(s)): metrics.loc[_rows(metrics, gate, param_id, int(s)),
                                            "value"].item() for s in seeds}


_HOLDING = ["parking_rate <= 0.9", "settled_rate{mode=1} between 0.5 and 1",
            "transactions > 5", "parking_rate{issuer=stellarsterling} == 0",
            "delivery_success_rate{subscription=treasury} >= 0.5",
            "attempts_mean{subscription=treasury} < 10", "subscriptions_disabled != 1"]


@settings(max_examples=30, deadline=None)
@given(text=st.sampled_from(_HOLDING), kind=st.sampled_from(["always", "sometimes"]),
       broken=st.sets(st.sampled_from([0, 1]), min_size=1), cell=st.sampled_from([0, 1]))
def test_a_gate_that_holds_misses_once_its_figures_are_broken(
        gates_sweep: SweepResult, text: str, kind: str, broken: set[int], cell: int) -> None:
    """Mutation: each gate holds on the sweep as run; with its figure moved across the bound
    on some seeds of one parameter set, ``always`` misses on that set naming exactly those
    seeds, ``sometimes`` misses only when every seed is broken — and the other set is
    unaffected."""
    gate = parse_gate(kind, text, TINY_NAMES, site="f.yaml:1:1: gates")
    metrics = gates_sweep.metrics
    assert all(o.passed for o in check_gates([gate], metrics))
    param_id = list(dict.fromkeys(metrics["param_id"]))[cell]
    outcomes = check_gates([gate], _mutated(metrics, gate, broken, param_id))
    verdicts = {o.param_id: o for o in outcomes}
    other = next(pid for pid in verdicts if pid != param_id)
    assert verdicts[other].passed
    missed = verdicts[param_id]
    expect_miss = kind == "always" or broken == {0, 1}
    assert missed.passed is not expect_miss
    if expect_miss:
        message = missed.message()
        assert f"({param_id})" in message and "f.yaml:1:1: gates" in message
        named = {seed for seed in (0, 1) if f"seed {seed}: " in message}
        assert named == (broken if kind == "always" else {0, 1})


def test_a_run_without_the_figure_does_not_hold(tiny_run: WorkloadRun) -> None:
    """A latency of a use case and mode where nothing ran has no row: not a pass."""
    metrics = tiny_run.metrics[~((tiny_run.metrics["metric"] == "settlement_latency_p95_s")
                                 & (tiny_run.metrics["mode"] == 2))]
    gate = parse_gate("always", "settlement_latency_p95_s{mode=2} >= 0")
    (outcome,) = check_gates([gate], metrics, (0,), "tiny")
    assert not outcome.passed
    assert "workload tiny, seed 0: settlement_latency_p95_s{mode=2} = no figure" \
        in outcome.message()
    (held,) = check_gates([gate], tiny_run.metrics, (0,), "tiny")
    assert held.passed


def test_a_band_includes_its_ends(tiny_run: WorkloadRun) -> None:
    value = tiny_run.metrics.query("metric == 'transactions' and mode.isna()", engine="python")
    count = float(value["value"].iloc[0])
    for low, high, passed in ((count, count, True), (count + 1, count + 2, False),
                              (count - 2, count - 1, False)):
        gate = parse_gate("always", f"transactions between {low} and {high}")
        assert check_gates([gate], tiny_run.metrics, (0,), "tiny")[0].passed is passed


# files -------------------------------------------------------------------------------------
_GATES = "webhooks:"  # the gates are written before the webhooks


def _with_gates(tmp: Path, block: str) -> Path:
    return variant(tmp, _GATES, block + _GATES)


def test_a_bad_gate_is_a_problem_at_its_line(tmp_path: Path) -> None:
    path = _with_gates(tmp_path, "gates:\n  always:\n    - parking_rate <= 0.02\n"
                       "    - parked_on_silence > 0\n  sometimes: [\"transactions{mode=9} > 0\"]\n")
    line = TINY_TEXT[:TINY_TEXT.index(_GATES)].count("\n") + 1
    with pytest.raises(ScenarioInvalid) as error:
        workload_gates(load_workload(path))
    assert error.value.lines() == [
        f"{path}:{line + 3}:7: gates.always[1]: unknown metric 'parked_on_silence'; expected "
        f"one of: {', '.join(METRIC_SHAPES)}",
        f"{path}:{line + 4}:15: gates.sometimes[0]: expected mode to be a whole number from "
        "1 to 3"]


@pytest.mark.parametrize(("block", "message"), [
    ("gates: {often: [\"transactions > 0\"]}\n",
     "gates.often: unknown field 'often'; expected one of: always, sometimes"),
    ("gates: {always: []}\n", "gates.always"),
    ("gates: {always: [3]}\n", "gates.always[0]"),
    ("gates: []\n", "gates"),
    ("seed: -1\n", "seed"),
])
def test_the_schema_refuses_gates_of_the_wrong_shape(tmp_path: Path, block: str,
                                                      message: str) -> None:
    with pytest.raises(ScenarioInvalid) as error:
        load_workload(_with_gates(tmp_path, block))
    assert any(message in line for line in error.value.lines()), error.value.lines()


def test_a_sweeps_gates_are_its_own_then_its_workloads(tmp_path: Path) -> None:
    _with_gates(tmp_path, "gates: {always: [\"transactions > 0\"]}\n", )
    (tmp_path / "s.yaml").write_text("sweep: s\nworkload: w.yaml\nseeds: 0\n"
                                     "gates: {sometimes: [\"settled_rate > 0\"]}\n")
    gates = sweep_gates(load_sweep(tmp_path / "s.yaml"))
    assert [(g.kind, g.text) for g in gates] == [("sometimes", "settled_rate > 0"),
                                                 ("always", "transactions > 0")]


def test_gates_and_seed_are_not_parameters(tmp_path: Path) -> None:
    """A workload's gates and seed leave its parameter set's id (and the runs) as they were;
    a sweep cannot override them."""
    (tmp_path / "tiny.yaml").write_text(TINY_TEXT)
    plain = tmp_path / "s.yaml"
    plain.write_text("sweep: s\nworkload: tiny.yaml\nseeds: 0\n")
    _with_gates(tmp_path, "seed: 4\ngates: {always: [\"transactions > 0\"]}\n")
    (tmp_path / "g.yaml").write_text("sweep: s\nworkload: w.yaml\nseeds: 0\n")
    assert load_sweep(plain).params[0].param_id == load_sweep(tmp_path / "g.yaml").params[0] \
        .param_id
    (tmp_path / "o.yaml").write_text("sweep: s\nworkload: w.yaml\nseeds: 0\n"
                                     "grid: {seed: [1, 2]}\n")
    with pytest.raises(ScenarioInvalid) as error:
        load_sweep(tmp_path / "o.yaml")
    assert error.value.lines() == [f"{tmp_path / 'o.yaml'}:4:8: grid.seed: seed is not a "
                                   "parameter of the runs; expected a field of the model (a "
                                   "sweep's gates go under its own gates key, its seeds under "
                                   "seeds)"]


# hostile files -----------------------------------------------------------------------------
_WORDS = st.sampled_from([*METRIC_SHAPES, "{", "}", "=", ",", "mode", "2", "issuer", "cause",
                          "approval_sla_exceeded", "between", "and", "<=", ">", "==", "0.5",
                          "1e999", "-", '"', "etherpound", "subscription", "attempts", " ",
                          "\n", "\\", "nan", "{mode=1}"])
_EXPRESSIONS = st.one_of(st.lists(_WORDS, max_size=10).map(" ".join),
                         st.text(max_size=30))
_YAML = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                               _EXPRESSIONS),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.sampled_from(
                                                 ["always", "sometimes", "x"]), inner,
                                                 max_size=3)),
                     max_leaves=8)


_GATE_VALUES = st.one_of(st.dictionaries(st.sampled_from(["always", "sometimes"]),
                                         st.lists(_EXPRESSIONS, min_size=1, max_size=3),
                                         min_size=1),
                         _YAML)


@settings(max_examples=300, deadline=None)
@given(gates=_GATE_VALUES)
@example(gates={"always": [math.inf, "nan"]})
def test_the_gate_reader_takes_any_value_without_an_exception(gates: object) -> None:
    """The reader alone, on any value (the schema is not there to stop it): gates or located
    problems, every expression one or the other."""
    try:
        document = parse_yaml(f"gates: {json.dumps(gates)}\n", "g.yaml")
    except ScenarioError:  # the YAML reader's own refusals (a tag, say): its tests' business
        return
    found, problems = read_gates(document, TINY_NAMES)
    assert all(p.path == "g.yaml" and p.field.startswith("gates.") for p in problems)
    read = document.data["gates"]  # as YAML reads it: json.dumps writes inf as Infinity, a
    lists = [read.get(kind) for kind in ("always", "sometimes")] \
        if isinstance(read, dict) else []  # string to YAML (Hypothesis found it)
    texts = [t for items in lists if isinstance(items, list) for t in items
             if isinstance(t, str)]
    assert len(found) + len(problems) == len(texts)


@settings(max_examples=40, deadline=None)
@given(gates=_GATE_VALUES)
def test_any_gates_load_or_are_refused_at_a_line(tmp_path_factory: pytest.TempPathFactory,
                                                 gates: object) -> None:
    """Hostile gates in a workload file: it either loads with its gates or is refused with
    located problems (the CLI's exit 2); never another exception."""
    path = tmp_path_factory.mktemp("fuzz") / "w.yaml"
    path.write_text(TINY_TEXT.replace(_GATES, f"gates: {json.dumps(gates)}\n{_GATES}", 1),
                    encoding="utf-8")
    try:
        found = workload_gates(load_workload(path))
    except ScenarioError as error:
        assert all(line.startswith(f"{path}:") for line in error.lines())
        return
    for gate in found:
        assert gate.metric in METRIC_SHAPES and math.isfinite(sum(gate.bounds))
