"""``wait_until`` judges its condition again only when what it reads may have changed
(issue 30 §3), and answers exactly what a judgement from scratch answers at every instant
(docs/scenarios.md, ``wait_until``: the condition is judged between instants, never inside
one, until it holds or the deadline passes)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from attrs import evolve

from clearing_sim.scenario import wait_until
from clearing_sim.scenario.expectations import ResourceState
from clearing_sim.scenario.loader import load_scenario
from clearing_sim.scenario.model import Scenario, WaitUntil
from clearing_sim.scenario.results import Verdict
from clearing_sim.scenario.runner import play, run_scenario
from clearing_sim.scenario.stage import Stage
from clearing_sim.scenario.templates import timeless
from tests.scenario.kit import BASE, load, with_steps

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "scenarios").glob("*.yaml")) + sorted(
    (ROOT / "tests/scenario/inputs").glob("*.yaml"))

Judge = Callable[[Stage, Any], Callable[[], Verdict]]


def _variants(scenario: Scenario) -> Iterator[Scenario]:
    """The file, and the file with every wait's timeout cut to a fifth (waits that fail,
    judged up to their deadline: the last verdict is the step's message)."""
    yield scenario
    yield evolve(scenario, steps=tuple(
        evolve(step, action=evolve(step.action, timeout_ms=step.action.timeout_ms // 5))
        if isinstance(step.action, WaitUntil) else step for step in scenario.steps))


def _disagreements(monkeypatch: pytest.MonkeyPatch, make: Judge) -> list[str]:
    """Play every file with waits judged by ``make``, and compare each of its verdicts with
    a judgement from scratch (``wait_until.holds``) at the same instant. A resource is a GET
    (logged): judging it twice would change the run, so it is left to ``make`` alone."""
    found: list[str] = []

    def compared(stage: Stage, condition: Any) -> Callable[[], Verdict]:
        judge = make(stage, condition)
        if isinstance(condition, ResourceState):
            return judge

        def both() -> Verdict:
            verdict = judge()
            fresh = wait_until.holds(stage, condition)
            if verdict != fresh:
                found.append(f"{stage.scenario.path} at {stage.world.now_ms} ms: "
                             f"{verdict} != {fresh}")
            return verdict

        return both

    monkeypatch.setattr(wait_until, "_judge", compared)
    for path in FILES:
        for scenario in _variants(load_scenario(path)):
            play(scenario)
    return found


def test_every_judgement_of_every_wait_is_what_a_judgement_from_scratch_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    judge = wait_until._judge
    assert _disagreements(monkeypatch, judge) == []


def test_the_comparison_catches_a_judge_that_does_not_read_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above fails on a judge that keeps its first verdict (a fact or a
    transaction's fields never read again): a wait that should end would not."""
    def stale(stage: Stage, condition: Any) -> Callable[[], Verdict]:
        first: list[Verdict] = []

        def judge() -> Verdict:
            if not first:
                first.append(wait_until.holds(stage, condition))
            return first[0]

        return judge

    found = _disagreements(monkeypatch, stale)
    assert found
    assert any("the fact" not in line for line in found)  # transactions' fields too


def test_timeless_is_false_only_where_a_string_refers_to_now() -> None:
    assert timeless("${tx}") and timeless({"a": ["${tx.data.id}", 3, None]})
    assert timeless("$${now}")  # a literal ${now}, no reference
    assert not timeless("${now}") and not timeless("at ${now+1h}")
    assert not timeless(["x", {"k": "${now-1s}"}]) and not timeless({"${now}": 1})
    assert not timeless("${}")  # malformed: substituted (and refused) at every judgement


#: The redeem of ``BASE`` with a payment reference that is a time: 1 s after the epoch.
AT_1S = BASE.replace("INV-1", "REF-2026-01-01T00:00:01.000Z")


def test_a_fact_that_names_now_is_resolved_at_every_judgement() -> None:
    """``${now}`` moves with the clock: the fact below matches the redeem's records only
    when ``now`` is 1 s, judged at the poll there (resolved once, at the wait's start, it
    would never match)."""
    result = run_scenario(load(with_steps(
        "  - wait_until:\n"
        "      fact: {transaction: '${tx}', record: transaction.state,\n"
        "             where: {paymentReference: 'REF-${now}'}}\n"
        "      timeout: 3s\n      poll: 250ms\n", AT_1S)))
    assert result.passed, [r.render("s.yaml") for r in result.results]
    assert result.virtual_ms == 1000


def test_a_wait_past_its_deadline_says_what_the_last_judgement_saw() -> None:
    """The message of a wait that times out is the last verdict's, judged at the deadline
    (a fact that appeared in the last instant is not reported as missing)."""
    result = run_scenario(load(with_steps(
        "  - wait_until: {fact: {transaction: '${tx}', event: transaction.cancelled},"
        " timeout: 1h}\n")))
    assert result.results[-1].actual.endswith("last seen: it has not happened")
    fields = run_scenario(load(with_steps(
        "  - wait_until: {transaction: {id: '${tx}', fields: {lifecycleStatus: cancelled}},"
        " timeout: 150ms}\n")))
    assert fields.results[-1].actual.endswith('last seen: lifecycleStatus="received"')


def test_conditions_other_than_facts_and_fields_are_judged_every_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A resource is a GET (an ``api.request`` record each): one per judgement, as before."""
    calls: list[int] = []
    holds = wait_until.holds

    def counted(stage: Stage, condition: Any) -> Verdict:
        calls.append(stage.world.now_ms)
        return holds(stage, condition)

    monkeypatch.setattr(wait_until, "holds", counted)
    result = run_scenario(load(with_steps(
        "  - wait_until:\n"
        "      resource: {get: '/api/v1/transactions/${tx}', as: northbank,\n"
        "                 fields: {data.lifecycleStatus: settled}}\n"
        "      timeout: 1h\n      poll: 1m\n")))
    assert result.passed
    assert calls == list(range(0, result.virtual_ms + 1, 60_000))
