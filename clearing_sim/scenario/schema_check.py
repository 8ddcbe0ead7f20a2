"""Whether a document is valid against the scenario schema, answered fast.

Public names: ``checker``, ``valid``.

``jsonschema`` explains every violation (``scenario/schema.py`` words them), but walking a
valid file costs it a validator object per value and a reference lookup per ``$ref``: about
a fifth of ``clearing-sim run scenarios/`` (issue 30, section 3). Every shipped file is
valid, so ``schema_problems`` first asks ``valid``: a plain recursive check of the JSON
Schema 2020-12 keywords the schema uses, with jsonschema's meanings (an integer may be
written ``1.0``; ``true`` is not ``1``; ``pattern`` searches). Only a file it finds invalid
goes through jsonschema, which words the problems. A keyword it does not know (or a
reference outside ``#/$defs/``) answers ``None`` where a value reaches it: jsonschema
decides then, so an answer is never wrong for want of a keyword.

``checker`` compiles the schema once into a tree of small checking functions (each
reference resolved, each pattern compiled, each enum of strings made a set at that
moment), so checking a value is a few calls, with no lookup of the schema on the way;
keywords are met in the schema's order, as before. ``tests/scenario/test_schema_check.py``
compares it with jsonschema over mutated and fuzzed files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["checker", "valid"]

#: keywords that assert nothing (annotations)
_ANNOTATIONS = frozenset(("description", "title", "x-expected", "$schema", "$id", "$defs",
                          "$comment", "default", "examples"))


class _Unknown(Exception):
    """The schema uses what this check does not know: jsonschema must decide."""


def _is_type(instance: Any, name: str) -> bool:
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "string":
        return isinstance(instance, str)
    if name == "boolean":
        return isinstance(instance, bool)
    if name == "null":
        return instance is None
    if isinstance(instance, bool):
        return False
    if name == "integer":
        return isinstance(instance, int) or (isinstance(instance, float)
                                            and instance.is_integer())
    if name == "number":
        return isinstance(instance, int | float)
    raise _Unknown(name)


def _equal(one: Any, two: Any) -> bool:
    """JSON equality as jsonschema's ``enum`` and ``const`` judge it (``true`` is not 1)."""
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and one == two
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict | list) or isinstance(two, dict | list):
        return False
    return bool(one == two)


def _number(instance: Any) -> bool:
    return isinstance(instance, int | float) and not isinstance(instance, bool)


_Pred = Callable[[Any], bool]


def _raising(name: Any) -> _Pred:
    """A check that cannot tell: jsonschema must decide, if ever it is reached."""
    def check(_instance: Any) -> bool:
        raise _Unknown(name)
    return check


def _true(_instance: Any) -> bool:
    return True


def _false(_instance: Any) -> bool:
    return False


def _all(checks: list[_Pred]) -> _Pred:
    """Every check in order, stopping at the first that fails (as jsonschema's keywords
    are met in the schema's order: a failure before an unknown keyword is an answer)."""
    if not checks:
        return _true
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        one, two = checks
        return lambda i: one(i) and two(i)
    ordered = tuple(checks)

    def check(instance: Any) -> bool:
        for rule in ordered:  # noqa: SIM110 (a loop: no generator made per value)
            if not rule(instance):
                return False
        return True
    return check


_Compile = Callable[[Any, Any], _Pred]


class _Check:
    """The schema compiled once into small checking functions, one per schema node: each
    keyword's value is read, each ``$ref`` resolved and each pattern compiled here, not per
    value checked (issue 30, section 3)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.defs: dict[str, _Pred] = {}
        #: keyword → (its value, the schema node holding it) → the check it makes
        self.keywords: dict[str, _Compile] = {
            "$ref": self._ref, "type": _type, "required": _required,
            "properties": self._properties, "additionalProperties": self._additional,
            "items": self._items, "enum": _enum, "const": lambda v, s: _enum([v], s),
            "pattern": _pattern_check, "anyOf": self._any_of, "oneOf": self._one_of,
            "not": self._not, "propertyNames": self._property_names,
            "dependentRequired": _dependent,
            "minLength": _bound(str, lambda i, v: len(i) >= v),
            "maxLength": _bound(str, lambda i, v: len(i) <= v),
            "minItems": _bound(list, lambda i, v: len(i) >= v),
            "maxItems": _bound(list, lambda i, v: len(i) <= v),
            "minProperties": _bound(dict, lambda i, v: len(i) >= v),
            "maxProperties": _bound(dict, lambda i, v: len(i) <= v),
            "minimum": _bound(_NUMBER, lambda i, v: i >= v),
            "maximum": _bound(_NUMBER, lambda i, v: i <= v),
            "exclusiveMinimum": _bound(_NUMBER, lambda i, v: i > v),
            "exclusiveMaximum": _bound(_NUMBER, lambda i, v: i < v),
        }

    def compile(self, schema: Any) -> _Pred:
        if schema is True:
            return _true
        if schema is False:
            return _false
        if not isinstance(schema, dict):
            return _raising(schema)
        checks = []
        for name, value in schema.items():
            make = self.keywords.get(name)
            if make is not None:
                checks.append(make(value, schema))
            elif name not in _ANNOTATIONS:
                checks.append(_raising(name))
        return _all(checks)

    def _ref(self, value: Any, _schema: Any) -> _Pred:
        if not isinstance(value, str) or not value.startswith("#/$defs/") \
                or "/" in value[8:] or "~" in value or value[8:] not in self.root["$defs"]:
            return _raising(value)
        name = value[8:]
        found = self.defs.get(name)
        if found is None:  # compiled at its first reference; a reference inside it (a
            # recursive definition) reaches it through the cell, filled once it is made
            cell: list[_Pred] = []
            self.defs[name] = lambda i: cell[0](i)
            found = self.compile(self.root["$defs"][name])
            cell.append(found)
            self.defs[name] = found
        return found

    def _properties(self, value: Any, _schema: Any) -> _Pred:
        named = tuple((name, self.compile(sub)) for name, sub in value.items())

        def check(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return True
            for name, rule in named:  # noqa: SIM110 (as in _all)
                if name in instance and not rule(instance[name]):
                    return False
            return True
        return check

    def _additional(self, value: Any, schema: Any) -> _Pred:
        if "patternProperties" in schema:
            return lambda i: not isinstance(i, dict) or _raising("patternProperties")(i)
        known = frozenset(schema.get("properties", {}))
        if value is False:
            return lambda i: not isinstance(i, dict) or i.keys() <= known
        rule = self.compile(value)
        return lambda i: not isinstance(i, dict) or all(
            rule(i[name]) for name in i if name not in known)

    def _items(self, value: Any, schema: Any) -> _Pred:
        if "prefixItems" in schema or not isinstance(value, dict | bool):
            return _raising("prefixItems")
        rule = self.compile(value)

        def check(instance: Any) -> bool:
            if not isinstance(instance, list):
                return True
            for item in instance:  # noqa: SIM110 (as in _all)
                if not rule(item):
                    return False
            return True
        return check

    def _any_of(self, value: Any, _schema: Any) -> _Pred:
        branches = tuple(self.compile(b) for b in value)
        return lambda i: any(rule(i) for rule in branches)

    def _one_of(self, value: Any, _schema: Any) -> _Pred:
        branches = tuple(self.compile(b) for b in value)
        return lambda i: sum(1 for rule in branches if rule(i)) == 1

    def _not(self, value: Any, _schema: Any) -> _Pred:
        rule = self.compile(value)
        return lambda i: not rule(i)

    def _property_names(self, value: Any, _schema: Any) -> _Pred:
        rule = self.compile(value)
        return lambda i: not isinstance(i, dict) or all(rule(k) for k in i)


_NUMBER = "number"  # a bound's subject: an int or float, not a bool


def _bound(kind: type | str, holds: Callable[[Any, Any], bool]) -> _Compile:
    """A bound on values of one kind; other values pass it."""
    if kind == _NUMBER:
        return lambda v, s: lambda i: not _number(i) or holds(i, v)
    return lambda v, s: lambda i: not isinstance(i, kind) or holds(i, v)  # type: ignore[arg-type]


_TYPE_CHECKS: dict[str, _Pred] = {
    "object": lambda i: isinstance(i, dict), "array": lambda i: isinstance(i, list),
    "string": lambda i: isinstance(i, str), "boolean": lambda i: isinstance(i, bool),
    "null": lambda i: i is None}


def _type(value: Any, _schema: Any) -> _Pred:
    if isinstance(value, str) and value in _TYPE_CHECKS:
        return _TYPE_CHECKS[value]
    names = [value] if isinstance(value, str) else value
    return lambda i: any(_is_type(i, name) for name in names)


def _required(value: Any, _schema: Any) -> _Pred:
    names = tuple(value)
    return lambda i: not isinstance(i, dict) or all(name in i for name in names)


def _enum(value: Any, _schema: Any) -> _Pred:
    if all(type(e) is str for e in value):  # _equal between strings is ==; others differ
        texts = frozenset(value)
        return lambda i: isinstance(i, str) and i in texts
    return lambda i: any(_equal(i, e) for e in value)


def _pattern_check(value: Any, _schema: Any) -> _Pred:
    search = re.compile(value).search
    return lambda i: not isinstance(i, str) or search(i) is not None


def _dependent(value: Any, _schema: Any) -> _Pred:
    return lambda i: not isinstance(i, dict) or all(
        name in i for owner, needed in value.items() if owner in i for name in needed)


def checker(schema: Mapping[str, Any]) -> Callable[[Any], bool | None]:
    """``valid`` against ``schema``, compiled once (``schema`` must not change while the
    checker is used)."""
    check = _Check(schema).compile(schema)

    def judge(instance: Any) -> bool | None:
        try:
            return check(instance)
        except (_Unknown, RecursionError):
            return None

    return judge


def valid(schema: Mapping[str, Any], instance: Any) -> bool | None:
    """Whether ``instance`` is valid against ``schema``; ``None`` when this check cannot
    tell (a keyword it does not know): ask jsonschema."""
    return checker(schema)(instance)
