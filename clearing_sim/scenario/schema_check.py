"""Whether a document is valid against the scenario schema, answered fast.

Public names: ``checker``, ``valid``.

``jsonschema`` explains every violation (``scenario/schema.py`` words them), but walking a
valid file costs it a validator object per value and a reference lookup per ``$ref``: about
a fifth of ``clearing-sim run scenarios/`` (issue 30, section 3). Every shipped file is
valid, so ``schema_problems`` first asks ``valid``: a plain recursive check of the JSON
Schema 2020-12 keywords the schema uses, with jsonschema's meanings (an integer may be
written ``1.0``; ``true`` is not ``1``; ``pattern`` searches). Only a file it finds invalid
goes through jsonschema, which words the problems. A keyword it does not know (or a
reference outside ``#/$defs/``) answers ``None``: jsonschema decides then, so an answer is
never wrong for want of a keyword. ``tests/scenario/test_schema.py`` compares it with
jsonschema over mutated and fuzzed files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
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


@lru_cache(maxsize=64)
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def _number(instance: Any) -> bool:
    return isinstance(instance, int | float) and not isinstance(instance, bool)


def _unknown(name: Any, _instance: Any, _schema: Any) -> bool:
    raise _Unknown(name)


_Plan = tuple[tuple[Callable[[Any, Any, Any], bool], Any], ...]


class _Check:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        #: id of a schema node (of ``root``, alive as long as this check) → its plan
        self.plans: dict[int, _Plan] = {}
        self.keywords: dict[str, Callable[[Any, Any, Any], bool]] = {
            "$ref": self._ref, "type": self._type, "required": self._required,
            "properties": self._properties, "additionalProperties": self._additional,
            "items": self._items, "enum": lambda v, i, s: any(_equal(i, e) for e in v),
            "const": lambda v, i, s: _equal(i, v), "pattern": self._pattern,
            "anyOf": lambda v, i, s: any(self.check(b, i) for b in v),
            "oneOf": lambda v, i, s: sum(1 for b in v if self.check(b, i)) == 1,
            "not": lambda v, i, s: not self.check(v, i),
            "propertyNames": lambda v, i, s: not isinstance(i, dict)
            or all(self.check(v, k) for k in i),
            "dependentRequired": self._dependent,
            "minLength": lambda v, i, s: not isinstance(i, str) or len(i) >= v,
            "maxLength": lambda v, i, s: not isinstance(i, str) or len(i) <= v,
            "minItems": lambda v, i, s: not isinstance(i, list) or len(i) >= v,
            "maxItems": lambda v, i, s: not isinstance(i, list) or len(i) <= v,
            "minProperties": lambda v, i, s: not isinstance(i, dict) or len(i) >= v,
            "maxProperties": lambda v, i, s: not isinstance(i, dict) or len(i) <= v,
            "minimum": lambda v, i, s: not _number(i) or i >= v,
            "maximum": lambda v, i, s: not _number(i) or i <= v,
            "exclusiveMinimum": lambda v, i, s: not _number(i) or i > v,
            "exclusiveMaximum": lambda v, i, s: not _number(i) or i < v,
        }

    def check(self, schema: Any, instance: Any) -> bool:
        if schema is True:
            return True
        if schema is False:
            return False
        if not isinstance(schema, dict):
            raise _Unknown(schema)
        plan = self.plans.get(id(schema))
        if plan is None:
            plan = self.plans[id(schema)] = self._plan(schema)
        return all(rule(value, instance, schema) for rule, value in plan)

    def _plan(self, schema: dict[str, Any]) -> _Plan:
        """The schema's assertions in order, each with its value; an unknown keyword is a
        rule that raises ``_Unknown`` where ``check`` reaches it (made once per schema)."""
        plan: list[tuple[Callable[[Any, Any, Any], bool], Any]] = []
        for name, value in schema.items():
            rule = self.keywords.get(name)
            if rule is not None:
                plan.append((rule, value))
            elif name not in _ANNOTATIONS:
                plan.append((_unknown, name))
        return tuple(plan)

    def _ref(self, value: Any, instance: Any, _schema: Any) -> bool:
        if not isinstance(value, str) or not value.startswith("#/$defs/") \
                or "/" in value[8:] or "~" in value:
            raise _Unknown(value)
        return self.check(self.root["$defs"][value[8:]], instance)

    @staticmethod
    def _type(value: Any, instance: Any, _schema: Any) -> bool:
        names = [value] if isinstance(value, str) else value
        return any(_is_type(instance, name) for name in names)

    @staticmethod
    def _required(value: Any, instance: Any, _schema: Any) -> bool:
        return not isinstance(instance, dict) or all(name in instance for name in value)

    def _properties(self, value: Any, instance: Any, _schema: Any) -> bool:
        if not isinstance(instance, dict):
            return True
        return all(self.check(sub, instance[name]) for name, sub in value.items()
                   if name in instance)

    def _additional(self, value: Any, instance: Any, schema: Any) -> bool:
        if not isinstance(instance, dict):
            return True
        if "patternProperties" in schema:
            raise _Unknown("patternProperties")
        known = schema.get("properties", {})
        return all(self.check(value, instance[name]) for name in instance if name not in known)

    def _items(self, value: Any, instance: Any, schema: Any) -> bool:
        if "prefixItems" in schema or not isinstance(value, dict | bool):
            raise _Unknown("prefixItems")
        return not isinstance(instance, list) or all(self.check(value, i) for i in instance)

    @staticmethod
    def _pattern(value: Any, instance: Any, _schema: Any) -> bool:
        return not isinstance(instance, str) or _pattern(value).search(instance) is not None

    @staticmethod
    def _dependent(value: Any, instance: Any, _schema: Any) -> bool:
        return not isinstance(instance, dict) or all(
            name in instance for owner, needed in value.items() if owner in instance
            for name in needed)


def checker(schema: Mapping[str, Any]) -> Callable[[Any], bool | None]:
    """``valid`` against ``schema``, made once: each schema node's keywords are looked up
    at its first visit only (``schema`` must not change while the checker is used)."""
    check = _Check(schema)

    def judge(instance: Any) -> bool | None:
        try:
            return check.check(schema, instance)
        except (_Unknown, RecursionError):
            return None

    return judge


def valid(schema: Mapping[str, Any], instance: Any) -> bool | None:
    """Whether ``instance`` is valid against ``schema``; ``None`` when this check cannot
    tell (a keyword it does not know): ask jsonschema."""
    return checker(schema)(instance)
