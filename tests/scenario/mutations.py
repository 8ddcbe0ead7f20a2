"""Hypothesis strategies for expectations that must NOT hold: the expected side of a passing
scenario, mutated (tests/scenario/test_mutations.py).

Public names: ``failing_matchers``, ``json_equal``, ``json_values``, ``not_subsequences``,
``other_amounts``, ``rescaled``, ``reorderings``, ``unlike``.

Each strategy is given the value the run actually produced and draws an expectation that
value does not meet. Whether two JSON values are equal, and whether a value is a number, is
decided here (``json_equal``, ``_decimal``), written apart from the runner's
``clearing_sim.scenario.matchers`` on purpose: a fault there cannot hide itself.
Generated text never holds ``$`` (a ``${…}`` would be resolved as a reference).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from hypothesis import strategies as st

from clearing_sim.scenario.expectations import Matcher

__all__ = ["failing_matchers", "json_equal", "json_values", "not_subsequences",
           "other_amounts", "reorderings", "rescaled", "unlike"]

_TEXT = st.text(st.characters(blacklist_characters="$", blacklist_categories=("Cs",)),
                max_size=12)
_SCALARS = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
            | st.floats(allow_nan=False, allow_infinity=False, width=32) | _TEXT)


def json_values() -> st.SearchStrategy[Any]:
    return st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=6)


def _canonical(value: Any) -> Any:
    """A form in which JSON-equal values are ``==``: numbers (not booleans) as decimals,
    booleans tagged apart from them."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", Decimal(repr(value)))
    if isinstance(value, list):
        return ("list", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((k, _canonical(v)) for k, v in value.items())))
    return (type(value).__name__, value)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality (``true`` is not ``1``, ``"100.00"`` is not ``"100.0"``, ``1`` is
    ``1.0``), decided independently of the runner."""
    return bool(_canonical(a) == _canonical(b))


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        found = Decimal(str(value))
    except InvalidOperation:
        return None
    return found if found.is_finite() else None


def rescaled(amount: str) -> st.SearchStrategy[str]:
    """The same number written with another scale (``"100.00"`` → ``"100.0"``, ``"100"``,
    ``"100.000"``): equal as decimals, not as JSON strings."""
    number = Decimal(amount)
    return st.integers(0, 6).map(lambda places: f"{number:.{places}f}").filter(
        lambda text: text != amount and Decimal(text) == number)


def unlike(value: Any) -> st.SearchStrategy[Any]:
    """JSON values not JSON-equal to ``value``: any value, the same number with another
    scale or type (``"100.00"`` vs ``"100.0"`` or ``100``), ``true`` vs ``1``."""
    near: list[st.SearchStrategy[Any]] = [json_values()]
    if isinstance(value, str) and _decimal(value) is not None:
        near += [rescaled(value), st.just(float(value)), st.just(value + "0")]
    if isinstance(value, bool):
        near.append(st.just(int(value)))
    if isinstance(value, (list, dict)) and value:
        near.append(st.just(value[:-1] if isinstance(value, list) else {}))
    return st.one_of(near).filter(lambda other: not json_equal(other, value))


_TYPES = {"string": str, "boolean": bool, "null": type(None), "object": dict, "array": list}


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "integer" if isinstance(value, int) else "number"
    return next(name for name, kind in _TYPES.items() if isinstance(value, kind))


def failing_matchers(value: Any) -> st.SearchStrategy[Matcher]:
    """A matcher (one named check) that ``value`` does not meet, of every check name that
    can fail on it."""
    def one(name: str, arg: st.SearchStrategy[Any]) -> st.SearchStrategy[Matcher]:
        return arg.map(lambda a: Matcher(((name, a),)))

    options = [one("equals", unlike(value)), one("not", st.just(value)),
               one("in", st.lists(unlike(value), max_size=3)),
               one("not_in", st.lists(json_values(), max_size=2).map(lambda v: [*v, value])),
               one("exists", st.just(False)),
               one("type", st.sampled_from(sorted({"string", "boolean", "null", "object",
                                                   "array", "number"}
                                                  - {_type_of(value), "number"
                                                     if _type_of(value) == "integer" else ""})))]
    if isinstance(value, (str, list, dict)):
        options.append(one("length", st.integers(0, 50).filter(lambda n: n != len(value))))
    if isinstance(value, str):
        options.append(one("matches", _TEXT.filter(lambda t: t not in value).map(re.escape)))
        options.append(one("contains", _TEXT.filter(lambda t: t not in value)))
    if isinstance(value, list):
        options.append(one("contains", unlike(value).filter(
            lambda item: not any(json_equal(item, v) for v in value))))
    number = _decimal(value)
    if number is not None:
        options += [one("gt", st.just(str(number))), one("lt", st.just(str(number))),
                    one("ge", st.integers(1, 10**6).map(lambda d: str(number + d))),
                    one("le", st.integers(1, 10**6).map(lambda d: str(number - d)))]
    return st.one_of(options)


def other_amounts(amount: Decimal) -> st.SearchStrategy[Decimal]:
    """Decimal amounts that are not ``amount`` as numbers."""
    return st.decimals(min_value=0, max_value=10**9, places=2).filter(lambda d: d != amount)


def reorderings(seen: list[str], pool: list[str]) -> st.SearchStrategy[list[str]]:
    """Lists of ``pool`` items other than ``seen``, in order and count: permutations of it,
    with one left out, one added or one repeated."""
    return st.one_of(st.permutations(seen), st.lists(st.sampled_from(pool), max_size=5)).filter(
        lambda wanted: list(wanted) != seen).map(list)


def not_subsequences(seen: list[str], pool: list[str]) -> st.SearchStrategy[list[str]]:
    """Lists that are not ``seen`` with items left out: two of them out of order, or an
    item ``seen`` lacks, somewhere."""
    def is_subsequence(wanted: list[str]) -> bool:
        it = iter(seen)
        return all(item in it for item in wanted)

    return st.lists(st.sampled_from(pool), min_size=1, max_size=5).filter(
        lambda wanted: not is_subsequence(wanted))
