"""The ``wait_until`` step: its condition judged between instants, up to its deadline.

Public names: ``holds``, ``wait_until``.

``holds(stage, condition)`` judges a condition now: a fact (its time in the log), a resource
(a GET through the API, as its reader would make it) or a transaction's fields (read
silently: the fields a GET would answer, with no ``api.request`` record). ``wait_until`` runs
the world with ``sim.waiting.Wait``, judging the condition after every instant (or every
``poll``) until it holds, and stops the run at the deadline with what was last seen.

A wait judges its condition hundreds of times, mostly over a world that has not changed in
what the condition reads, so the judge reads it again only when it may have (issue 30 §3):

- a fact is read from the log (and the webhook events the log's records make): a judgement
  after an instant that logged no record of its kind (and of its transaction, when it names
  one) answers what the previous one did;
- a transaction's fields are read from its book entry, an immutable value replaced at each
  change: while the book holds the same value, the verdict is the same;
- a resource is a GET, which the log records: judged every time.

A condition's ``${…}`` references are resolved once, when the wait starts, unless one is
``${now…}`` (which moves with the clock): no step runs during a wait, so nothing else they
name can change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clearing_sim.scenario.checks import check
from clearing_sim.scenario.expectations import Fact, ResourceState, TransactionState
from clearing_sim.scenario.fieldpath import lookup, parse_field_path
from clearing_sim.scenario.matchers import matches, render
from clearing_sim.scenario.model import WaitUntil
from clearing_sim.scenario.results import Verdict, duration_text
from clearing_sim.scenario.stage import Stage, StepFailed
from clearing_sim.scenario.templates import timeless
from clearing_sim.service.wire import transaction_full
from clearing_sim.sim.waiting import Wait

__all__ = ["holds", "wait_until"]

Condition = TransactionState | ResourceState | Fact


def _fact(stage: Stage, fact: Fact, *, resolved: bool = False) -> Verdict:
    at = stage.fact_ms(fact, resolved=resolved)
    return Verdict(at is not None, "the fact", "it has not happened" if at is None
                   else f"it happened at {duration_text(at)}", None, at)


def _fields(tx: Any, stage: Stage, state: TransactionState) -> Verdict:
    if tx is None:
        return Verdict(False, "the transaction", "no such transaction", None, None)
    data = transaction_full(tx, stage.world.epoch_ms)
    failed = [(path, lookup(data, parse_field_path(path))) for path, m in state.fields
              if not matches(m, lookup(data, parse_field_path(path)))]
    return Verdict(not failed, "fields", ", ".join(f"{p}={render(v)}" for p, v in failed),
                   None, None)


def holds(stage: Stage, condition: Condition) -> Verdict:
    """Whether ``condition`` holds now, with what was seen."""
    if isinstance(condition, Fact):
        return _fact(stage, condition)
    if isinstance(condition, ResourceState):
        return check(stage, condition, None)
    return _fields(stage.world.transactions.get(str(stage.fill(condition.id))), stage,
                   condition)


def _fact_judge(stage: Stage, fact: Fact) -> Callable[[], Verdict]:
    """A fact judged again only once a record it could read has been logged since the last
    judgement (``Stage.fact_counter``); one that names ``${now…}``: at every judgement, the
    clock having moved."""
    if not timeless((fact.transaction, [v for _, v in fact.where])):
        return lambda: _fact(stage, fact)
    fact = stage.resolved(fact)
    seen = stage.fact_counter(fact)
    last: list[Any] = [-1, None]  # the records it could read at the last judgement, its verdict

    def judge() -> Verdict:
        count = seen()
        if last[0] != count:
            last[0] = count
            last[1] = _fact(stage, fact, resolved=True)
        verdict: Verdict = last[1]
        return verdict

    return judge


def _transaction_judge(stage: Stage, state: TransactionState) -> Callable[[], Verdict]:
    """A transaction's fields judged again only when its book entry is another value."""
    fixed_id = str(stage.fill(state.id)) if timeless(state.id) else None
    book = stage.world.transactions
    last: list[Any] = [None, None]  # the value judged last, its verdict

    def judge() -> Verdict:
        tx_id = fixed_id if fixed_id is not None else str(stage.fill(state.id))
        tx = book.get(tx_id)
        if last[1] is None or tx is not last[0]:
            last[:] = [tx, _fields(tx, stage, state)]
        verdict: Verdict = last[1]
        return verdict

    return judge


def _judge(stage: Stage, condition: Condition) -> Callable[[], Verdict]:
    if isinstance(condition, Fact):
        return _fact_judge(stage, condition)
    if isinstance(condition, TransactionState):
        return _transaction_judge(stage, condition)
    return lambda: holds(stage, condition)


def wait_until(stage: Stage, wait: WaitUntil) -> None:
    """Run the world until ``wait.condition`` holds; ``StepFailed`` past the deadline."""
    world = stage.world
    deadline = world.now_ms + wait.timeout_ms
    judge = _judge(stage, wait.condition)
    seen: list[Verdict] = []

    def met() -> bool:
        seen[:] = [judge()]
        return seen[0].passed

    if not Wait(world, deadline, met, wait.poll_ms).run():
        raise StepFailed(f"wait_until: the condition did not hold within "
                         f"{duration_text(wait.timeout_ms)} (deadline {world.iso(deadline)}); "
                         f"last seen: {seen[0].actual}")
