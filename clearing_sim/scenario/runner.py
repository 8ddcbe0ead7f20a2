"""Running a scenario: build its world, carry out its steps in order, check its expectations.

Public names: ``play``, ``run_scenario``.

Every step runs at the world's current virtual time. A ``call`` goes through
``ServiceAPI.handle`` like any door; ``arm`` is ``POST /api/v1/conformance/run`` as a tenant
admin (expecting 200 unless the step says otherwise); ``advance`` moves the clock by a
duration or to a time; ``wait_until`` moves it event by event (or by ``poll``) until the
condition holds, failing at the deadline (``clearing_sim.scenario.wait_until``); ``operator:
resolve`` is the operator's fix (``World.resolve``), ``issuer_behaviour`` replaces fields of
an issuer's behaviour and ``add_participant`` is ``POST /sim/v1/participants``
(``service.admission``: the same reading, the same change to the world, the same credentials
issued). Then the step's saves are taken and its expectations checked, each one result, from
its response decoded once (``checks.Answer``).

A failed expectation does not stop the run (every failure is worth seeing); a step that could
not be carried out does: its result is flagged ``stopped`` and no later step runs. ``fault``
steps are carried out by ``clearing_sim.scenario.channel``.

A ``timing`` expectation whose ``of`` or ``after`` picks ``nth: last`` is judged when the run
ends, after its last step: "last" is the run's last match, not the last one so far (checked at
its step, it picked an earlier delivery whose successor had not been sent yet). Its references
are resolved at its step; its result keeps its place among its step's results. A run that
stopped never reached its end: such checks are listed as skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import evolve

from clearing_sim.domain.errors import DomainError
from clearing_sim.scenario.channel import apply_fault
from clearing_sim.scenario.checks import Answer, check
from clearing_sim.scenario.expectations import Matcher, ResponseStatus, Site, Timing
from clearing_sim.scenario.fieldpath import MISSING, lookup, parse_field_path
from clearing_sim.scenario.model import (
    AddParticipant,
    Advance,
    Arm,
    Call,
    Resolve,
    Scenario,
    SetIssuerBehaviour,
    Step,
    WaitUntil,
)
from clearing_sim.scenario.results import CheckResult, ScenarioResult, Verdict, duration_text
from clearing_sim.scenario.stage import SetupFailed, Stage, StepFailed
from clearing_sim.scenario.timing import judge_timing
from clearing_sim.scenario.wait_until import wait_until
from clearing_sim.service.admission import admit, read_new_participant
from clearing_sim.service.body import Fields
from clearing_sim.service.messages import Response, encode_json
from clearing_sim.sim.collector import paced_collector
from clearing_sim.sim.issuer import IssuerGateway

__all__ = ["play", "run_scenario"]

_ACTION_KEYS = {Call: "call", Arm: "arm", Advance: "advance", WaitUntil: "wait_until",
                Resolve: "operator", SetIssuerBehaviour: "operator", AddParticipant: "operator"}
_ARMED = Matcher((("equals", 200),))

#: A check judged when the run ends: where its result goes in the results, its step, and
#: the check with its facts' references resolved at that step.
Deferred = tuple[int, Step, Timing]


def _ms(ms: int) -> str:
    return duration_text(ms)


# actions ---------------------------------------------------------------------------------
def _call(stage: Stage, call: Call) -> Response:
    target = stage.fill(call.path)
    headers = {name: str(stage.fill(value)) for name, value in call.headers}
    token = stage.token(call.as_, call.credential)
    if call.raw is not None:
        return stage.request(call.method, str(target), token,
                             body=str(stage.fill(call.raw)).encode(), headers=headers)
    body: Any = stage.fill(call.body) if call.has_body else None
    agent = stage.agents.get(call.as_ or "")
    if agent is not None and call.method in ("POST", "PUT", "PATCH"):
        body = dict(body) if isinstance(body, dict) else {} if body is None else body
        if isinstance(body, dict):
            body.setdefault("agent", {"agentId": agent["id"], "mandateProof": agent["proof"]})
    raw = encode_json(body) if call.has_body or body is not None else None
    return stage.request(call.method, str(target), token, body=raw, headers=headers)


def _arm(stage: Stage, arm: Arm) -> Response:
    tx_id = str(stage.fill(arm.transaction))
    as_ = arm.as_
    if as_ is None:
        tx = stage.world.transactions.get(tx_id)
        as_ = stage.key_of(tx.initiator_id) if tx is not None else None
        if as_ is None:
            raise StepFailed(f"arm: no transaction {tx_id} to find an initiator for; "
                             "name the tenant admin with as:")
    return stage.request("POST", "/api/v1/conformance/run", stage.session(as_),
                         json_body={"scenario": arm.scenario, "transactionId": tx_id})


def _advance(stage: Stage, advance: Advance) -> None:
    if advance.by_ms is not None:
        stage.world.advance(advance.by_ms)
        return
    point = advance.to
    assert point is not None
    target = point.at_ms
    if point.fact is not None:
        at = stage.fact_ms(point.fact)
        if at is None:
            raise StepFailed("advance to: the fact has not happened yet; wait_until it first")
        target = at + point.offset_ms
    assert target is not None
    if target < stage.world.now_ms:
        raise StepFailed(f"advance to {_ms(target)}: the clock is already at "
                         f"{_ms(stage.world.now_ms)}, and virtual time never moves backwards")
    stage.world.run_until(target)


def _operator(stage: Stage, action: Resolve | SetIssuerBehaviour) -> None:
    if isinstance(action, Resolve):
        tx_id = str(stage.fill(action.transaction))
        if stage.world.transactions.get(tx_id) is None:
            raise StepFailed(f"resolve: no transaction {tx_id}")
        try:
            stage.world.resolve(tx_id)
        except DomainError as error:
            raise StepFailed(f"resolve: {error}") from None
        return
    gateway = stage.world.issuers.get(stage.parties[action.issuer].id)
    if gateway is None:
        raise StepFailed(f"issuer_behaviour: {action.issuer} has no gateway until its "
                         "profile is saved")
    if not isinstance(gateway, IssuerGateway):
        raise StepFailed(f"issuer_behaviour: {action.issuer} is on its real gateway")
    gateway.behaviour = evolve(gateway.behaviour, **dict(action.changes))


def _add_participant(stage: Stage, action: AddParticipant) -> None:
    try:
        new = read_new_participant(Fields(stage.fill(action.body)), stage.world)
    except DomainError as error:
        raise StepFailed(f"add_participant {action.key}: {error}") from None
    stage.admitted(action.key, admit(stage.world, stage.api.credentials, new))


def _act(stage: Stage, step: Step) -> Response | None:
    action = step.action
    if isinstance(action, Call):
        return _call(stage, action)
    if isinstance(action, Arm):
        return _arm(stage, action)
    if isinstance(action, Advance):
        _advance(stage, action)
    elif isinstance(action, WaitUntil):
        wait_until(stage, action)
    elif isinstance(action, Resolve | SetIssuerBehaviour):
        _operator(stage, action)
    elif isinstance(action, AddParticipant):
        _add_participant(stage, action)
    elif action is not None:
        apply_fault(stage, action)
    return None


# one step --------------------------------------------------------------------------------
def _save(stage: Stage, step: Step, answer: Answer) -> None:
    response, body = answer.response, answer.body
    for save in step.saves:
        if save.header is not None:
            value: Any = response.header(save.header)
            value = MISSING if value is None else value
        else:
            assert save.path is not None
            value = lookup(body, parse_field_path(save.path))
        if value is MISSING:
            raise StepFailed(f"save {save.name}: the response (status {response.status}) has "
                             f"no {save.header or save.path}")
        stage.saved[save.name] = value


def _result(step: Step, site: Site, verdict: Verdict) -> CheckResult:
    return CheckResult(step.index, site.line, site.column, site.field, verdict.passed,
                       verdict.expected, verdict.actual, step_name=step.name,
                       expected_value=verdict.expected_value,
                       actual_value=verdict.actual_value)


def _unchecked(step: Step, site: Site, where: str) -> CheckResult:
    """An expectation the run never reached: ``where`` says which step stopped it."""
    return CheckResult(step.index, site.line, site.column, site.field, False, "(not checked)",
                       f"not checked: the run stopped at {where}", step_name=step.name)


def _run_step(stage: Stage, step: Step, results: list[CheckResult],
              skipped: list[CheckResult], deferred: list[Deferred]) -> None:
    if step.name is not None:
        stage.step_ms.setdefault(step.name, stage.world.now_ms)
    try:
        response = _act(stage, step)
    except StepFailed:
        where = _action_site(step).field
        skipped.extend(_unchecked(step, e.site, where) for e in step.expectations)
        raise
    expectations = list(step.expectations)
    if isinstance(step.action, Arm) and not any(isinstance(e, ResponseStatus)
                                                for e in expectations):
        expectations.insert(0, ResponseStatus(_action_site(step), _ARMED))
    failure: StepFailed | None = None
    answer = None if response is None else Answer.of(response)
    if answer is not None:
        try:
            _save(stage, step, answer)
        except StepFailed as error:
            failure = error
    for expectation in expectations:
        if failure is not None and not isinstance(expectation, ResponseStatus):
            # what depends on the missing save cannot be checked
            skipped.append(_unchecked(step, expectation.site, _action_site(step).field))
            continue
        if isinstance(expectation, Timing) and expectation.names_last:
            after = None if expectation.after is None else stage.resolved(expectation.after)
            deferred.append((len(results), step, evolve(
                expectation, of=stage.resolved(expectation.of), after=after)))
            continue
        results.append(_result(step, expectation.site, check(stage, expectation, answer)))
    if failure is not None:
        raise failure


def _action_site(step: Step) -> Site:
    key = _ACTION_KEYS.get(type(step.action), "fault") if step.action is not None else "expect"
    return Site(step.site.line, step.site.column, f"{step.site.field}.{key}")


def run_scenario(scenario: Scenario, seed: int | None = None) -> ScenarioResult:
    """Run ``scenario`` on a fresh world (``seed`` replaces the file's) and check it."""
    return play(scenario, seed)[0]


def play(scenario: Scenario, seed: int | None = None,
         clock: Callable[[], float] | None = None, *,
         key_secret: bytes = b"") -> tuple[ScenarioResult, Stage]:
    """``run_scenario``, also answering the stage it ran on (its world, log and saves).

    ``clock`` (a door's wall clock, e.g. ``time.perf_counter``; the engine never reads one)
    times each step: ``stage.step_wall_s`` maps a step's index to its seconds.
    ``key_secret``: what seals the world's key material, as a served world's operator token
    does (``Simulation.key_secret``); a file's own run has none.

    The whole run has the collector's engine pace (``sim.collector``), its requests and
    checks too, not only its clock's moves: a scenario's steps allocate as the engine does.
    """
    with paced_collector():
        return _play(scenario, seed, clock, key_secret)


def _play(scenario: Scenario, seed: int | None, clock: Callable[[], float] | None,
          key_secret: bytes) -> tuple[ScenarioResult, Stage]:
    used = scenario.world.seed if seed is None else seed
    stage = Stage(scenario, used, key_secret, read_indexes=False)  # a short run: see ServiceAPI
    results: list[CheckResult] = []
    skipped: list[CheckResult] = []
    deferred: list[Deferred] = []
    remaining = list(scenario.steps)
    try:
        stage.open()
        while remaining:
            step = remaining.pop(0)
            started = clock() if clock is not None else 0.0
            try:
                _run_step(stage, step, results, skipped, deferred)
            except StepFailed as error:
                site = _action_site(step)
                results.append(CheckResult(step.index, site.line, site.column, site.field,
                                           False, "the step to complete", str(error),
                                           stopped=True, step_name=step.name))
                break
            finally:
                stage.step_end_ms[step.index] = stage.world.now_ms
                if clock is not None:
                    stage.step_wall_s[step.index] = clock() - started
    except SetupFailed as error:
        results.append(CheckResult(-1, error.site.line, error.site.column, error.site.field,
                                   False, "the world to be built", str(error), stopped=True))
    stopped = next((r for r in results if r.stopped), None)
    if stopped is not None:
        where = f"{stopped.field} (line {stopped.line})"
        skipped.extend(_unchecked(step, timing.site, f"{where}, before the end of the run "
                                  "that nth: last is judged at") for _, step, timing in deferred)
        skipped.extend(_unchecked(step, expectation.site, where)
                       for step in remaining for expectation in step.expectations)
    else:
        for position, step, timing in reversed(deferred):
            results.insert(position, _result(step, timing.site,
                                             judge_timing(stage, timing, resolved=True)))
    log = stage.world.log
    return ScenarioResult(scenario.path, scenario.name, used, tuple(results),
                          stage.world.now_ms, log.digest(), len(log), tuple(skipped)), stage
