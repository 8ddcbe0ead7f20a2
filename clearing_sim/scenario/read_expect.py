"""Reading expectations, matchers and facts, with the checks the schema cannot make.

Public names: ``RESPONSE_KEYS``, ``read_expect``, ``read_fact``, ``read_resource``,
``read_state``.

Response expectations (``status``, ``headers``, ``body``, ``error``) check the response of the
step's own call, so they need a ``call`` or ``arm`` in the same step. Every other expectation
reads the world's state or its event log after the step's action. A ``matches`` check must be
a regular expression Python compiles; a ``step:`` fact must name this step or an earlier one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from clearing_sim.scenario.expectations import (
    RECEIVER_COUNTS,
    Balance,
    Conservation,
    Deliveries,
    Digest,
    Events,
    Expectation,
    Fact,
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
from clearing_sim.scenario.reading import NO_OWNER, Reader
from clearing_sim.scenario.source import FieldPath

if TYPE_CHECKING:
    from clearing_sim.scenario.scope import Scope

__all__ = ["RESPONSE_KEYS", "read_expect", "read_fact", "read_resource", "read_state"]

RESPONSE_KEYS = ("status", "headers", "body", "error")


def _matcher(r: Reader, raw: Any, path: FieldPath) -> Matcher:
    if isinstance(raw, dict) and isinstance(raw.get("matches"), str):
        try:
            re.compile(raw["matches"])
        except re.error as error:
            r.report((*path, "matches"), f"expected a regular expression: {error}")
    return Matcher.of(raw)


def _fields(r: Reader, raw: dict[str, Any], path: FieldPath) -> tuple[tuple[str, Matcher], ...]:
    return tuple((name, _matcher(r, value, (*path, name))) for name, value in raw.items())


def read_fact(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> Fact:
    if "step" in raw and raw["step"] not in scope.step_names:
        r.report((*path, "step"), f"no step named {raw['step']!r} at or before this one; "
                 "expected the name of this step or an earlier one")
    if "webhook" in raw:
        scope.participant(r, (*path, "webhook"), raw["webhook"], ("webhook",))
    nth = raw.get("nth", 1)
    return Fact(r.site(path), raw.get("event"), raw.get("record"), raw.get("step"),
                raw.get("attempt"), raw.get("transaction"), raw.get("webhook"),
                tuple(raw.get("where", {}).items()), -1 if nth == "last" else nth)


def read_state(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> TransactionState:
    if "as" in raw:
        scope.participant(r, (*path, "as"), raw["as"])
    return TransactionState(r.site(path), raw["id"], _fields(r, raw["fields"], (*path, "fields")),
                            raw.get("as"), raw.get("credential"))


def read_resource(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> ResourceState:
    if "as" in raw:
        scope.participant(r, (*path, "as"), raw["as"])
    elif "credential" in raw:
        r.report((*path, "credential"), NO_OWNER)
    status = _matcher(r, raw["status"], (*path, "status")) if "status" in raw else None
    return ResourceState(r.site(path), raw["get"], _fields(r, raw.get("fields", {}),
                                                           (*path, "fields")),
                         status, raw.get("as"), raw.get("credential"))


def _balances(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> list[Balance]:
    found = []
    for name, accounts in raw.items():
        scope.participant(r, (*path, name), name)
        for account, amount in accounts.items():
            if account != "rtgs" and scope.symbols.kind(account) != "asset":
                r.report((*path, name, account), f"no issuer in this file issues {account!r}; "
                         "expected rtgs or an asset code", key=True)
            found.append(Balance(r.site((*path, name, account)), name, account, Decimal(amount)))
    return found


def _timing(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> Timing:
    after = read_fact(r, scope, raw["after"], (*path, "after")) if "after" in raw else None
    bounds = {name: r.duration((*path, name), raw[name]) if name in raw else None
              for name in ("equals", "at_least", "at_most")}
    low, high = bounds["at_least"], bounds["at_most"]
    if low is not None and high is not None and low > high:
        r.report(path, f"at_least {raw['at_least']} is more than at_most {raw['at_most']}; "
                 "expected a range that can hold")
    allow_negative = raw.get("allow_negative") is True
    if allow_negative and (low is not None or bounds["equals"] is not None):
        r.report((*path, "allow_negative"), "a negative interval is never at least or equal "
                 "to a duration, so allow_negative could never let this check pass; expected "
                 "at_most alone beside allow_negative: true")
    return Timing(r.site(path), read_fact(r, scope, raw["of"], (*path, "of")), after,
                  bounds["equals"], low, high, allow_negative)


def _one(r: Reader, scope: Scope, key: str, raw: Any, path: FieldPath) -> list[Expectation]:
    site = r.site(path)
    if key == "status":
        return [ResponseStatus(site, _matcher(r, raw, path))]
    if key == "headers":
        return [ResponseHeader(r.site((*path, k)), k, _matcher(r, v, (*path, k)))
                for k, v in raw.items()]
    if key == "body":
        return [ResponseField(r.site((*path, k)), k, m) for k, m in _fields(r, raw, path)]
    if key == "error":
        return [ResponseError(site, (("code", raw),) if isinstance(raw, str)
                              else tuple(raw.items()))]
    if key == "transaction":
        return [read_state(r, scope, raw, path)]
    if key == "resource":
        return [read_resource(r, scope, raw, path)]
    if key == "balances":
        return list(_balances(r, scope, raw, path))
    if key == "conservation":
        return [Conservation(site)]
    if key == "digest":
        return [Digest(site, raw)]
    if key == "timing":
        return [_timing(r, scope, item, (*path, i)) for i, item in enumerate(raw)]
    if key in _LISTABLE:
        items = list(enumerate(raw)) if isinstance(raw, list) else [(None, raw)]
        return [_LISTABLE[key](r, scope, item, path if i is None else (*path, i))
                for i, item in items]
    return []  # an unknown key: the schema reported it


def _events(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> Events:
    return Events(r.site(path), raw["transaction"],
                  *(tuple(raw[k]) if k in raw else None for k in ("equals", "includes",
                                                                    "excludes")))


def _log(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> LogCount:
    count = _matcher(r, raw["count"], (*path, "count")) if "count" in raw else None
    where = tuple(raw.get("where", {}).items())
    return (LogCount(r.site(path), raw["record"], where) if count is None
            else LogCount(r.site(path), raw["record"], where, count))


def _webhook(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> None:
    scope.participant(r, (*path, "webhook"), raw["webhook"], ("webhook",))


def _deliveries(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> Deliveries:
    _webhook(r, scope, raw, path)
    offsets = raw.get("offsets")
    attempts = _matcher(r, raw["attempts"], (*path, "attempts")) if "attempts" in raw else None
    return Deliveries(
        r.site(path), raw["webhook"], raw.get("transaction"), raw.get("event"),
        tuple(raw["types"]) if "types" in raw else None, attempts,
        None if offsets is None else tuple(r.duration((*path, "offsets", i), offset)
                                           for i, offset in enumerate(offsets)),
        tuple(raw["statuses"]) if "statuses" in raw else None, raw.get("outcome"))


def _receiver(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath) -> ReceiverView:
    _webhook(r, scope, raw, path)
    name = raw["webhook"]
    if scope.symbols.kind(name) == "webhook" and name not in scope.reference_receivers:
        r.report((*path, "webhook"), f"{name} has no reference receiver; expected "
                 f"receiver: {{app: reference}} on webhooks.{name}")
    state = _fields(r, raw.get("state", {}), (*path, "state"))
    if state and "transaction" not in raw:
        r.report((*path, "state"), "a receiver's view is per transaction; expected a "
                 "transaction beside state")
    for count in raw.get("counts", {}):
        if count not in RECEIVER_COUNTS:
            r.report((*path, "counts", count), f"unknown count {count!r}; expected one of: "
                     + ", ".join(RECEIVER_COUNTS), key=True)
    return ReceiverView(r.site(path), name, raw.get("transaction"), state,
                        _fields(r, raw.get("counts", {}), (*path, "counts")))


_LISTABLE: dict[str, Callable[[Reader, Scope, dict[str, Any], FieldPath], Expectation]] = {
    "events": _events, "log": _log, "deliveries": _deliveries, "receiver": _receiver}


def read_expect(r: Reader, scope: Scope, raw: dict[str, Any], path: FieldPath,
                has_call: bool) -> tuple[Expectation, ...]:
    found: list[Expectation] = []
    for key, value in raw.items():
        if key in RESPONSE_KEYS and not has_call:
            r.report((*path, key), f"{key} checks the response of this step's request; expected "
                     "a call or arm in the same step", key=True)
            continue
        found.extend(_one(r, scope, key, value, (*path, key)))
    return tuple(found)
