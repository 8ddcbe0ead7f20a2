"""The scenario file's JSON Schema (shipped as ``schema.json``) and readable schema errors.

Public names: ``SCHEMA``, ``explain``, ``schema_problems``.

``schema_problems(document)`` validates a parsed file against the schema and turns every
violation into a ``Problem`` that says what was expected, in the file's words: an unknown key
is reported at the key itself with the allowed keys (and the closest one); a value that
matches none of a union's forms is explained by the one form of the right JSON type, or by the
union's ``x-expected`` annotation. Annotations starting with ``x-`` are ours; validators
ignore them.

jsonschema is imported, and its validator built, only for a file the plain check
(``schema_check.valid``) finds invalid: a run of valid files never pays for either (issue 30,
section 3).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from clearing_sim.scenario.errors import Problem
from clearing_sim.scenario.schema_check import checker
from clearing_sim.scenario.source import Document, FieldPath

if TYPE_CHECKING:
    from clearing_sim.scenario.jsonschema_import import Draft202012Validator, ValidationError

__all__ = ["SCHEMA", "explain", "schema_problems"]

SCHEMA: dict[str, Any] = json.loads(
    resources.files("clearing_sim.scenario").joinpath("schema.json").read_text("utf-8"))
_valid = checker(SCHEMA)  # the plain check, its plans kept for every file
_UNIONS = ("anyOf", "oneOf")
_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string",
               "boolean": "true or false", "object": "a mapping", "array": "a list",
               "null": "null"}
_BOUNDS = {"minimum": "≥", "maximum": "≤", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, dict):
        return "a mapping" + (f" with keys {', '.join(value)}" if value else "")
    return "a list"


def _type_words(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join(_TYPE_WORDS.get(t, t) for t in names)


def _expected(error: ValidationError) -> str | None:
    schema = error.schema
    if isinstance(schema, dict):
        found = schema.get("x-expected")
        return str(found).strip() if found is not None else None
    return None


def _branch_errors(error: ValidationError) -> list[ValidationError] | None:
    """The errors of the one union branch whose JSON type fits the value, if exactly one does."""
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context or ():
        branches.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    fitting = [errs for errs in branches.values()
               if not any(e.validator == "type" and not e.relative_path for e in errs)]
    return fitting[0] if len(fitting) == 1 else None


@cache
def _validator() -> Draft202012Validator:
    """The schema's jsonschema validator, built on first use."""
    from clearing_sim.scenario.jsonschema_import import Draft202012Validator

    return Draft202012Validator(SCHEMA)


def _closest(word: str, allowed: list[str]) -> str:
    import difflib  # only to word a problem

    match = difflib.get_close_matches(word, allowed, n=1)
    return f" (did you mean {match[0]}?)" if match else ""


def explain(error: ValidationError) -> Iterator[tuple[FieldPath, str, bool]]:
    """(field path, message, locate at the key) for one validation error."""
    path: FieldPath = tuple(error.absolute_path)
    kind = error.validator
    instance: Any = error.instance
    value: Any = error.validator_value
    expected = _expected(error)
    if "propertyNames" in error.schema_path and isinstance(instance, str):
        what = expected or _expected_of(error.context) or "another key"
        yield (*path, instance), f"key {instance!r}: expected {what}", True
        return
    if kind in _UNIONS and not (kind == "oneOf" and all("required" in b for b in value)):
        branch = _branch_errors(error)
        if branch is not None:
            for sub in branch:
                yield from explain(sub)
            return
        yield path, f"expected {expected or 'another form'}, got {_describe(instance)}", False
    elif kind in _UNIONS:  # "exactly one of these keys" rules
        keys = ", ".join(sorted(instance)) if isinstance(instance, dict) and instance \
            else "(none)"
        yield path, f"expected {expected or 'one of several forms'}; got keys: {keys}", False
    elif kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {})) if isinstance(error.schema, dict) \
            else []
        extra = [k for k in instance if k not in allowed]
        for key in extra:
            hint = f"; expected one of: {', '.join(allowed)}" if allowed else ""
            yield (*path, key), f"unknown field {key!r}{_closest(key, allowed)}{hint}", True
    elif kind == "required":
        for name in value:
            if isinstance(instance, dict) and name not in instance:
                yield (*path, name), f"missing required field {name!r}", False
    elif kind == "dependentRequired":
        for owner, needed in _dependents(value, instance):
            yield (*path, owner), f"{owner} needs {needed} beside it", True
    elif kind == "not" and isinstance(value, dict) and "required" in value:
        yield path, f"expected not all of {', '.join(value['required'])} together", False
    elif kind == "enum":
        options = [str(v) for v in value]
        hint = _closest(instance, options) if isinstance(instance, str) else ""
        yield path, (f"expected one of: {', '.join(options)}; got {_describe(instance)}"
                     f"{hint}"), False
    elif kind in _BOUNDS:
        what = expected or f"a number {_BOUNDS[kind]} {value}"
        yield path, f"expected {what}, got {_describe(instance)}", False
    elif kind == "const":
        yield path, f"expected {json.dumps(value)}, got {_describe(instance)}", False
    elif kind in ("type", "pattern"):
        what = expected or (_type_words(value) if kind == "type" else f"text matching {value}")
        yield path, f"expected {what}, got {_describe(instance)}", False
    else:
        yield path, f"expected {expected}; {error.message}" if expected else error.message, False


def _expected_of(context: list[ValidationError] | None) -> str | None:
    for sub in context or ():
        found = _expected(sub)
        if found is not None:
            return found
    return None


def _dependents(rules: dict[str, list[str]], instance: Any) -> Iterator[tuple[str, str]]:
    if not isinstance(instance, dict):
        return
    for owner, needed in rules.items():
        if owner in instance:
            for name in needed:
                if name not in instance:
                    yield owner, name


def schema_problems(document: Document) -> list[tuple[FieldPath | None, Problem]]:
    """Every schema violation of ``document`` as a located ``Problem``, with the path of the
    value it makes unusable (``None`` for an unknown key: reading can go on without it)."""
    if _valid(document.data):  # the common case, decided fast (``schema_check``)
        return []
    problems: list[tuple[FieldPath | None, Problem]] = []
    for error in _validator().iter_errors(document.data):
        for path, message, at_key in explain(error):
            blocking = error.validator != "additionalProperties"
            problems.append((path if blocking else None,
                             document.problem_at(path, message, key=at_key)))
    return problems
