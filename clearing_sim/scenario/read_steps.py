"""Reading a scenario's steps: actions, saves, ``${…}`` references, in order.

Public names: ``read_steps``.

Steps are read in order because what a step may refer to depends on what came before it:
``${name}`` must be saved by an earlier step (a step's own saves are visible to its ``expect``,
which is checked after the save, but not to its action), ``step:`` facts name this step or an
earlier one, and participants, agents and subscriptions must be in the world. Expectations are
read by ``clearing_sim.scenario.read_expect``; both read against the ``Scope`` of
``clearing_sim.scenario.scope``.
"""

from __future__ import annotations

import re
from typing import Any

from clearing_sim.domain.errors import DomainError
from clearing_sim.scenario.expectations import Expectation, TimePoint
from clearing_sim.scenario.fieldpath import parse_field_path
from clearing_sim.scenario.model import (
    Action,
    AddParticipant,
    Advance,
    Arm,
    Call,
    ForgedIssuerWebhook,
    NetworkFault,
    ReceiverOutage,
    Resolve,
    Save,
    SetIssuerBehaviour,
    Step,
    WaitUntil,
)
from clearing_sim.scenario.read_expect import read_expect, read_fact, read_resource, read_state
from clearing_sim.scenario.read_world import read_behaviour_changes, read_network
from clearing_sim.scenario.reading import NO_OWNER, Reader
from clearing_sim.scenario.scope import Scope
from clearing_sim.scenario.source import FieldPath
from clearing_sim.service.admission import read_new_participant
from clearing_sim.service.body import Fields

__all__ = ["read_steps"]

_DURATION = re.compile(r"[0-9]+(ms|s|m|h|d)")
_ACTIONS = ("call", "arm", "advance", "wait_until", "operator", "fault")


def _call(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> Call:
    as_ = raw.get("as")
    credential = raw.get("credential")
    if as_ is not None:
        scope.participant(r, (*path, "as"), as_, ("member", "issuer", "agent"))
        if scope.symbols.kind(as_) == "agent" and credential == "admin":
            r.report((*path, "credential"), "an agent submits with its member's API key; "
                     "expected no credential (or key) with an agent")
    elif credential is not None:
        r.report((*path, "credential"), NO_OWNER)
    headers = tuple((str(k), str(v)) for k, v in raw.get("headers", {}).items())
    return Call(raw["method"], raw["path"], as_, credential, headers, raw.get("body"),
                "body" in raw, raw.get("raw"))


def _time_point(r: Reader, scope: Scope, raw: Any, path: FieldPath) -> TimePoint:
    if isinstance(raw, dict):
        fact = read_fact(r, scope, raw["fact"], (*path, "fact"))
        plus = r.duration((*path, "plus"), raw["plus"]) if "plus" in raw else 0
        minus = r.duration((*path, "minus"), raw["minus"]) if "minus" in raw else 0
        return TimePoint(fact=fact, offset_ms=plus - minus)
    if _DURATION.fullmatch(raw):
        return TimePoint(at_ms=r.duration(path, raw))
    at = r.timestamp_ms(path, raw)
    if at is not None and at < scope.epoch_ms:
        r.report(path, f"{raw} is before the world's epoch; expected a time at or after it")
    return TimePoint(at_ms=0 if at is None else max(0, at - scope.epoch_ms))


def _wait(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> WaitUntil:
    timeout = r.duration((*path, "timeout"), raw["timeout"])
    poll = r.duration((*path, "poll"), raw["poll"]) if "poll" in raw else None
    if poll == 0:
        r.report((*path, "poll"), "expected a poll interval longer than 0")
    condition: Any
    if "transaction" in raw:
        condition = read_state(r, scope, raw["transaction"], (*path, "transaction"))
    elif "resource" in raw:
        condition = read_resource(r, scope, raw["resource"], (*path, "resource"))
    else:
        condition = read_fact(r, scope, raw["fact"], (*path, "fact"))
    return WaitUntil(condition, timeout, poll)


def _add_participant(r: Reader, scope: Scope, raw: dict[str, Any],
                     path: FieldPath) -> AddParticipant:
    """The body is read by ``POST /sim/v1/participants``'s own reader, with no world yet:
    each problem it names is reported at its field. What needs the world is checked here
    against the file's names (a wallet's asset) or when the step runs (a name taken)."""
    key, body = raw["key"], {k: v for k, v in raw.items() if k != "key"}
    try:
        read_new_participant(Fields(body), None)
    except DomainError as error:
        for problem in error.problems:
            try:
                where = (*path, *parse_field_path(problem.param or "name"))
            except ValueError:  # a member name no field path spells: report at the step
                where = path
            r.report(where, problem.message)
    for code in raw.get("wallets", {}):
        if scope.symbols.kind(code) != "asset":
            r.report((*path, "wallets", code), f"no issuer issues an asset {code!r} by this "
                     "step; expected an asset code of the world or of an earlier "
                     "add_participant", key=True)
    kind = "member" if raw["kind"] == "clearing_member" else "issuer"
    names = [(key, kind, (*path, "key"))] + [
        (asset["code"], "asset", (*path, "assets", i, "code"))
        for i, asset in enumerate(raw.get("assets", ())) if kind == "issuer"]
    for name, name_kind, where in names:
        if scope.symbols.kind(name) is not None:
            r.report(where, f"{name!r} is already a name of the world; expected a new one")
            continue
        scope.symbols.kinds[name] = name_kind
        if name_kind == "asset":
            scope.symbols.asset_issuer.setdefault(name, key)
    return AddParticipant(key, body)


def _operator(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> Action:
    if "resolve" in raw:
        return Resolve(raw["resolve"])
    if "add_participant" in raw:
        return _add_participant(r, scope, raw["add_participant"], (*path, "add_participant"))
    spec = raw["issuer_behaviour"]
    where = (*path, "issuer_behaviour")
    scope.participant(r, (*where, "issuer"), spec["issuer"], ("issuer",))
    return SetIssuerBehaviour(spec["issuer"], read_behaviour_changes(r, spec, where))


def _fault(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> Action:
    if "receiver_outage" in raw:
        spec, where = raw["receiver_outage"], (*path, "receiver_outage")
        scope.participant(r, (*where, "webhook"), spec["webhook"], ("webhook",))
        for_ms = r.duration((*where, "for"), spec["for"]) if "for" in spec else None
        return ReceiverOutage(spec["webhook"], spec.get("status", 503), for_ms)
    if "network" in raw:
        spec, where = raw["network"], (*path, "network")
        scope.participant(r, (*where, "webhook"), spec["webhook"], ("webhook",))
        return NetworkFault(spec["webhook"], tuple(read_network(r, spec, where).items()))
    spec, where = raw["forged_issuer_webhook"], (*path, "forged_issuer_webhook")
    scope.participant(r, (*where, "issuer"), spec["issuer"], ("issuer",))
    return ForgedIssuerWebhook(spec["issuer"], spec["transaction"],
                               spec.get("status", "COMPLETED"), spec.get("signature", "wrong"))


def _action(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> Action | None:
    key = next((k for k in _ACTIONS if k in raw), None)
    if key is None or r.broken((*path, key)):
        return None
    spec = raw[key]
    if key == "call":
        return _call(r, scope, spec, (*path, "call"))
    if key == "arm":
        if "as" in spec:
            scope.participant(r, (*path, "arm", "as"), spec["as"])
        return Arm(spec["transaction"], spec["scenario"], spec.get("as"))
    if key == "advance":
        if isinstance(spec, str):
            return Advance(by_ms=r.duration((*path, "advance"), spec))
        return Advance(to=_time_point(r, scope, spec["to"], (*path, "advance", "to")))
    if key == "wait_until":
        return _wait(r, scope, spec, (*path, "wait_until"))
    if key == "operator":
        return _operator(r, scope, spec, (*path, "operator"))
    return _fault(r, scope, spec, (*path, "fault"))


def _saves(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> tuple[Save, ...]:
    saves = []
    for name, spec in raw.items():
        if scope.symbols.kind(name) is not None:
            r.report((*path, name), f"{name!r} is already a name of the world; expected a "
                     "name of its own for a saved value", key=True)
        saves.append(Save(name, header=spec["header"]) if isinstance(spec, dict)
                     else Save(name, path=spec))
    return tuple(saves)


def _read_step(r: Reader, scope: Scope, index: int, raw: Any) -> Step | None:
    path: FieldPath = ("steps", index)
    if not isinstance(raw, dict) or r.blocked(path):
        if isinstance(raw, dict) and isinstance(raw.get("save"), dict):
            scope.saved.update(k for k in raw["save"] if isinstance(k, str))  # no echo later
        return None
    name = r.get(raw, path, "name")
    if name is not None:
        if name in scope.step_names:
            r.report((*path, "name"), f"duplicate step name {name!r} (first at line "
                     f"{scope.step_names[name]}); expected each step name once")
        scope.step_names.setdefault(name, r.site(path).line)
    action = _action(r, scope, raw, path)
    has_call = "call" in raw or "arm" in raw
    if "save" in raw and not has_call:
        r.report((*path, "save"), "save captures a response; expected a call or arm in this step")
    for key in _ACTIONS:
        if key in raw:
            scope.check_references(r, (*path, key), raw[key])
    save_raw = raw.get("save")
    saves = _saves(r, scope, r.get(raw, path, "save", {}), (*path, "save"))
    scope.saved.update(k for k in (save_raw if isinstance(save_raw, dict) else ()))
    expectations: tuple[Expectation, ...] = ()
    expect_raw = raw.get("expect")
    if isinstance(expect_raw, dict) and not r.blocked((*path, "expect")):
        scope.check_references(r, (*path, "expect"), expect_raw)
        usable = {k: v for k, v in expect_raw.items() if not r.broken((*path, "expect", k))}
        expectations = read_expect(r, scope, usable, (*path, "expect"), has_call)
    return Step(index, r.site(path), name, action, saves, expectations)


def read_steps(r: Reader, scope: Scope) -> tuple[Step, ...]:
    raw_steps = r.document.data.get("steps")
    if not isinstance(raw_steps, list):
        return ()
    steps = (_read_step(r, scope, i, raw) for i, raw in enumerate(raw_steps))
    return tuple(step for step in steps if step is not None)

