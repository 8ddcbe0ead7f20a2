"""Evaluating a ``Matcher`` on a JSON value, and rendering values for results.

Public names: ``describe``, ``fields_json``, ``matcher_json``, ``matches``, ``render``,
``same``.

Equality is JSON equality: ``true`` is not ``1``, ``"100.00"`` is not ``"100.0"`` (wire
amounts are strings, compared as written; a ``balances`` expectation is not a matcher: it
compares amounts as decimals, ``clearing_sim.scenario.checks``). The order checks (``gt``,
``ge``, ``lt``, ``le``) compare numbers and decimal strings as exact decimals. A path that
leads nowhere is ``MISSING``: it satisfies only ``exists: false`` and ``not``/``not_in``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from clearing_sim.scenario.expectations import Matcher
from clearing_sim.scenario.fieldpath import MISSING

__all__ = ["describe", "fields_json", "matcher_json", "matches", "render", "same"]

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


#: ``json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)`` with its encoder
#: made once (``dumps`` makes one per call with these options; every verdict renders values)
_render_json = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode


#: What the encoder writes for the scalars most verdicts show (a status, a count, a flag),
#: without building its C encoder for each (~4 us): the same text.
_SCALARS: dict[Any, str] = {None: "null", True: "true", False: "false"}


def render(value: Any) -> str:
    """A value as a result line shows it: JSON, or ``(missing)``."""
    if value is MISSING:
        return "(missing)"
    if value is None or value is True or value is False:
        return _SCALARS[value]
    if type(value) is int:
        return repr(value)  # the encoder's own: int.__repr__
    return _render_json(value)


def same(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers; containers compare element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if a is MISSING or b is MISSING:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _order(value: Any, bound: Any, test: Callable[[Decimal, Decimal], bool]) -> bool:
    left, right = _decimal(value), _decimal(bound)
    return left is not None and right is not None and test(left, right)


def _contains(value: Any, item: Any) -> bool:
    if isinstance(value, list):
        return any(same(v, item) for v in value)
    if isinstance(value, str) and isinstance(item, str):
        return item in value
    if isinstance(value, dict):
        return item in value
    return False


def _check(name: str, arg: Any, value: Any) -> bool:
    if name == "equals":
        return same(value, arg)
    if name == "not":
        return not same(value, arg)
    if name == "in":
        return any(same(value, a) for a in arg)
    if name == "not_in":
        return not any(same(value, a) for a in arg)
    if name == "matches":
        return isinstance(value, str) and re.search(arg, value) is not None
    if name == "exists":
        return (value is not MISSING) == bool(arg)
    if name == "length":
        return isinstance(value, (str, list, dict)) and len(value) == arg
    if name == "contains":
        return _contains(value, arg)
    if name == "type":
        return value is not MISSING and _JSON_TYPES[arg](value)
    tests: dict[str, Callable[[Decimal, Decimal], bool]] = {
        "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
        "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}
    return _order(value, arg, tests[name])


def matches(matcher: Matcher, value: Any) -> bool:
    """Whether every check of ``matcher`` holds for ``value``."""
    return all(_check(name, arg, value) for name, arg in matcher.checks)


def describe(matcher: Matcher) -> str:
    """The expectation as a result line says it: ``201``, ``in [200, 201]``, ``ge 1``."""
    parts = []
    for name, arg in matcher.checks:
        parts.append(render(arg) if name == "equals" else f"{name} {render(arg)}")
    return " and ".join(parts)


def matcher_json(matcher: Matcher) -> dict[str, Any]:
    """The matcher as a JSON value, always as named checks: ``{"equals": 201}``,
    ``{"in": [200, 201]}``, ``{"ge": "99.00", "lt": "100.01"}``."""
    return {name: arg for name, arg in matcher.checks}


def fields_json(values: list[tuple[str, Any]]) -> dict[str, Any]:
    """Field path → the value found there, as a JSON object; a path that leads nowhere
    (``MISSING``) is left out, so the object lacks it as the response did."""
    return {path: value for path, value in values if value is not MISSING}
