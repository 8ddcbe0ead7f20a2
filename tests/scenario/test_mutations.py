"""Scenario checks cannot pass wrongly, proved by class (issue 26, section 5): for EVERY kind of
expectation the format has (schema.json ``expect``), a run that must fail does fail.

The subject is tests/scenario/inputs/every-expectation-kind.yaml, in which every kind holds.
Each test takes one expectation of one kind and mutates its expected side with Hypothesis — a
value, an ordering, a bound, a matcher of every check name — then runs the scenario and
asserts it fails there: exactly one failed result, quoting that expectation's file:line:col
and field, its expected and actual JSON-encodable. ``conservation: true`` has no expected
side to mutate (the schema allows only ``true``): a ledger with a defect is its subject.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any, get_args

import pytest
from attrs import evolve
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.scenario.expectations import (
    Balance,
    Conservation,
    Deliveries,
    Digest,
    Events,
    Expectation,
    LogCount,
    Matcher,
    ReceiverView,
    ResourceState,
    ResponseError,
    ResponseField,
    ResponseHeader,
    ResponseStatus,
    Timing,
    TransactionState,
)
from clearing_sim.scenario.loader import load_scenario
from clearing_sim.scenario.model import Scenario
from clearing_sim.scenario.results import CheckResult, ScenarioResult
from clearing_sim.scenario.runner import run_scenario
from clearing_sim.scenario.schema import SCHEMA
from clearing_sim.sim.ledger import ChainLedger
from tests.scenario.kit import load, with_steps
from tests.scenario.mutations import (
    failing_matchers,
    not_subsequences,
    other_amounts,
    reorderings,
    rescaled,
    unlike,
)

SUBJECT = Path(__file__).parent / "inputs" / "every-expectation-kind.yaml"
EVENT_TYPES: list[str] = SCHEMA["$defs"]["event_type"]["enum"]
OUTCOMES = ["delivered", "failed", "dropped", "pending"]

#: Each expectation type and the ``expect`` key that writes it.
KINDS: dict[type, str] = {
    ResponseStatus: "status", ResponseHeader: "headers", ResponseField: "body",
    ResponseError: "error", TransactionState: "transaction", ResourceState: "resource",
    Balance: "balances", Conservation: "conservation", Digest: "digest", Timing: "timing",
    Events: "events", LogCount: "log", Deliveries: "deliveries", ReceiverView: "receiver"}

Draw = st.DataObject
Mutator = Callable[[Draw, Any, Any], Expectation]


def _with(scenario: Scenario, target: Expectation, new: Expectation) -> Scenario:
    """``scenario`` with ``target`` (found by identity) replaced by ``new``."""
    steps = tuple(evolve(step, expectations=tuple(new if e is target else e
                                                  for e in step.expectations))
                  for step in scenario.steps)
    return evolve(scenario, steps=steps)


@functools.cache
def _subject() -> tuple[Scenario, ScenarioResult]:
    """The subject with its own digest in place of the placeholder; every expectation holds."""
    scenario = load_scenario(SUBJECT)
    digest = next(e for s in scenario.steps for e in s.expectations if isinstance(e, Digest))
    found = next(r for r in run_scenario(scenario).results if r.field == digest.site.field)
    scenario = _with(scenario, digest, evolve(digest, digest=found.actual_value))
    result = run_scenario(scenario)
    assert result.passed, [f.render(result.path) for f in result.failures]
    return scenario, result


def _of_kind(kind: type) -> list[Expectation]:
    scenario, _ = _subject()
    return [e for step in scenario.steps for e in step.expectations if isinstance(e, kind)]


def _actual(expectation: Expectation) -> Any:
    """What the passing run found for ``expectation`` (its JSON actual value)."""
    _, result = _subject()
    return next(r for r in result.results if r.field == expectation.site.field).actual_value


def _fails_there(scenario: Scenario, expectation: Expectation) -> CheckResult:
    """The run fails, at ``expectation``'s file:line:col and nowhere else."""
    result = run_scenario(scenario)
    site = expectation.site
    assert not result.passed
    assert [f.field for f in result.failures] == [site.field], \
        [f.render(result.path) for f in result.failures]
    (failure,) = result.failures
    assert failure.render(result.path).startswith(
        f"{SUBJECT}:{site.line}:{site.column}: {site.field}: expected ")
    json.dumps([failure.expected_value, failure.actual_value])  # JSON values, no repr
    return failure


# mutators: one per kind, each draws an expected side the passing run does not meet ---------
def _status(data: Draw, e: ResponseStatus, actual: Any) -> Expectation:
    return evolve(e, matcher=data.draw(failing_matchers(actual)))


def _header(data: Draw, e: ResponseHeader, actual: Any) -> Expectation:
    return evolve(e, matcher=data.draw(failing_matchers(actual[e.name])))


def _body(data: Draw, e: ResponseField, actual: Any) -> Expectation:
    return evolve(e, matcher=data.draw(failing_matchers(actual[e.path])))


def _error(data: Draw, e: ResponseError, actual: Any) -> Expectation:
    key = data.draw(st.sampled_from(["code", "type", "param"]))
    return evolve(e, fields=tuple({**dict(e.fields),
                                   key: data.draw(unlike(actual[0][key]))}.items()))


def _one_field(data: Draw, fields: Any, found: dict[str, Any]) -> Any:
    index = data.draw(st.integers(0, len(fields) - 1))
    path = fields[index][0]
    changed = (path, data.draw(failing_matchers(found[path])))
    return tuple(changed if i == index else f for i, f in enumerate(fields))


def _transaction(data: Draw, e: TransactionState, actual: Any) -> Expectation:
    return evolve(e, fields=_one_field(data, e.fields, actual["fields"]))


def _resource(data: Draw, e: ResourceState, actual: Any) -> Expectation:
    if data.draw(st.booleans()):
        return evolve(e, status=data.draw(failing_matchers(actual["status"])))
    return evolve(e, fields=_one_field(data, e.fields, actual["fields"]))


def _balance(data: Draw, e: Balance, actual: Any) -> Expectation:
    return evolve(e, amount=data.draw(other_amounts(Decimal(actual))))


def _digest(data: Draw, e: Digest, actual: Any) -> Expectation:
    hex64 = st.text("0123456789abcdef", min_size=64, max_size=64)
    return evolve(e, digest=data.draw(hex64.filter(lambda d: d != actual)))


def _timing(data: Draw, e: Timing, actual: Any) -> Expectation:
    took = actual["ms"]
    choices = ["equals", "at_least"] + (["at_most"] if took > 0 else [])
    choices += ["reversed"] if e.after is not None and took != 0 else []
    choice = data.draw(st.sampled_from(choices))
    if choice == "reversed":  # of and after swapped, under a bound only the sign can fail
        return evolve(e, of=e.after, after=e.of, equals_ms=None, at_least_ms=None,
                      at_most_ms=data.draw(st.integers(0, 10**9)))
    bound = {"equals": st.integers(0, 10**9).filter(lambda ms: ms != took),
             "at_least": st.integers(took + 1, 10**9),
             "at_most": st.integers(0, took - 1)}[choice]
    return evolve(e, **{f"{choice}_ms": data.draw(bound)})


def _events(data: Draw, e: Events, seen: Any) -> Expectation:
    choice = data.draw(st.sampled_from(["equals", "includes", "excludes"]))
    if choice == "equals":
        return evolve(e, equals=tuple(data.draw(reorderings(seen, EVENT_TYPES))))
    if choice == "includes":
        return evolve(e, includes=tuple(data.draw(not_subsequences(seen, EVENT_TYPES))))
    others = data.draw(st.lists(st.sampled_from(EVENT_TYPES), max_size=3))
    return evolve(e, excludes=tuple(data.draw(st.permutations(
        [*others, data.draw(st.sampled_from(seen))]))))


def _log(data: Draw, e: LogCount, actual: Any) -> Expectation:
    return evolve(e, count=data.draw(failing_matchers(actual["count"])))


def _deliveries(data: Draw, e: Deliveries, actual: Any) -> Expectation:
    keys = [k for k in ("types", "attempts", "offsetsMs", "statuses", "outcome") if k in actual]
    key = data.draw(st.sampled_from(keys))
    found = actual[key]
    if key == "types":
        return evolve(e, types=tuple(data.draw(reorderings(found, EVENT_TYPES))))
    if key == "attempts":
        return evolve(e, attempts=data.draw(failing_matchers(found)))
    if key == "offsetsMs":
        offsets = st.lists(st.integers(0, 10**8), max_size=4)
        return evolve(e, offsets_ms=tuple(data.draw(offsets.filter(lambda o: o != found))))
    if key == "statuses":
        statuses = st.lists(st.none() | st.integers(100, 599), max_size=4)
        return evolve(e, statuses=tuple(data.draw(statuses.filter(lambda s: s != found))))
    return evolve(e, outcome=data.draw(st.sampled_from([o for o in OUTCOMES if o != found])))


def _receiver(data: Draw, e: ReceiverView, actual: Any) -> Expectation:
    if data.draw(st.booleans()):
        return evolve(e, state=_one_field(data, e.state, actual["state"]))
    return evolve(e, counts=_one_field(data, e.counts, actual["counts"]))


MUTATORS: dict[str, tuple[type, Mutator]] = {
    "status": (ResponseStatus, _status), "headers": (ResponseHeader, _header),
    "body": (ResponseField, _body), "error": (ResponseError, _error),
    "transaction": (TransactionState, _transaction), "resource": (ResourceState, _resource),
    "balances": (Balance, _balance), "digest": (Digest, _digest), "timing": (Timing, _timing),
    "events": (Events, _events), "log": (LogCount, _log),
    "deliveries": (Deliveries, _deliveries), "receiver": (ReceiverView, _receiver)}


def test_the_class_is_every_kind_the_format_has_and_the_subject_holds_each() -> None:
    """The kinds proved below are the schema's ``expect`` keys and the runner's expectation
    types, all of them; the subject writes each at least once and passes."""
    kinds = set(SCHEMA["$defs"]["expect"]["properties"])
    assert set(KINDS.values()) == kinds and set(KINDS) == set(get_args(Expectation))
    assert set(MUTATORS) | {"conservation"} == kinds  # conservation: a broken subject below
    scenario, result = _subject()
    assert {KINDS[type(e)] for s in scenario.steps for e in s.expectations} == kinds
    assert result.passed


@pytest.mark.parametrize("kind", sorted(MUTATORS))
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_a_mutated_expected_side_fails_at_its_line(kind: str, data: st.DataObject) -> None:
    expectation_type, mutate = MUTATORS[kind]
    target = data.draw(st.sampled_from(_of_kind(expectation_type)))
    mutated = mutate(data, target, _actual(target))
    scenario, _ = _subject()
    _fails_there(_with(scenario, target, mutated), target)


@settings(max_examples=8, deadline=None)
@given(extra=other_amounts(Decimal(0)))
def test_conservation_fails_on_a_ledger_that_credits_more_than_it_moved(extra: Decimal) -> None:
    """The broken subject: every credit on every ledger adds ``extra`` out of nowhere, so
    Σ balances exceeds the supply (balances fail too; conservation must be among them)."""
    credit = ChainLedger._credit

    def leaky(self: ChainLedger, account: str, money: Any) -> None:
        credit(self, account, money)
        self.balances[account][money.asset] += extra  # the defect

    scenario, _ = _subject()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ChainLedger, "_credit", leaky)
        result = run_scenario(scenario)
    (conservation,) = _of_kind(Conservation)
    failed = {f.field: f for f in result.failures}
    assert conservation.site.field in failed
    assert failed[conservation.site.field].actual_value["conserved"] is False


# balances are numbers, field matchers JSON values (docs/scenarios.md, "Matchers") ---------
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_a_balance_written_at_another_scale_holds(data: st.DataObject) -> None:
    """A balance is an amount compared as a decimal: ``"900"``, ``"900.0"`` and ``"900.000"``
    all hold for 900.00."""
    target = data.draw(st.sampled_from(_of_kind(Balance)))
    written = data.draw(rescaled(_actual(target)))
    scenario, _ = _subject()
    result = run_scenario(_with(scenario, target, evolve(target, amount=Decimal(written))))
    assert result.passed, [f.render(result.path) for f in result.failures]


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_a_body_amount_written_at_another_scale_fails(data: st.DataObject) -> None:
    """A field matcher compares JSON values: the wire amount ``"100.00"`` is not ``"100.0"``
    nor ``"100"``, though the order checks (``ge``, ``le``) take them as equal decimals."""
    (target,) = [e for e in _of_kind(ResponseField) if e.path == "data.debitAmount"]
    written = data.draw(rescaled(_actual(target)[target.path]))
    scenario, _ = _subject()
    failure = _fails_there(_with(scenario, target, evolve(target, matcher=Matcher.of(written))),
                           target)
    assert failure.expected_value == {"data.debitAmount": {"equals": written}}
    assert failure.actual_value == {"data.debitAmount": "100.00"}
    bounds = Matcher((("ge", written), ("le", written)))
    assert run_scenario(_with(scenario, target, evolve(target, matcher=bounds))).passed


def test_the_issue_examples_a_zero_balance_is_0_and_a_body_amount_keeps_its_scale() -> None:
    """The issue's own examples, as a file says them: ``rtgs: "0"`` holds for 0.00, and
    ``data.debitAmount: "100.0"`` does not hold for ``"100.00"``."""
    result = run_scenario(load(with_steps(
        "  - call: {as: northbank, method: GET, path: '/api/v1/transactions/${tx}'}\n"
        "    expect:\n      body: {data.debitAmount: '100.0'}\n"
        "      balances: {northbank: {rtgs: '0', GBPE: '1000'}}\n")))
    assert [(r.field, r.passed) for r in result.results[1:]] == [
        ("steps[1].expect.body.data.debitAmount", False),
        ("steps[1].expect.balances.northbank.rtgs", True),
        ("steps[1].expect.balances.northbank.GBPE", True)]
    assert result.failures[0].render("s.yaml") == (
        's.yaml:36:32: steps[1].expect.body.data.debitAmount: expected "100.0", got "100.00"')
