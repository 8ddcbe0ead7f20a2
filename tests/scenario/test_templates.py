"""``${…}`` references, field paths and matchers: the small pure pieces."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.scenario.expectations import Matcher
from clearing_sim.scenario.fieldpath import MISSING, lookup, parse_field_path
from clearing_sim.scenario.matchers import describe, matches, render
from clearing_sim.scenario.templates import NOW, Reference, TemplateError, references, substitute
from tests.scenario.mutations import json_values

VALUES: dict[str, Any] = {"tx": "a-1", "n": 3, "obj": {"data": {"id": "x", "list": [1, 2]}}}


def _resolve(ref: Reference) -> Any:
    if ref.root == NOW:
        return f"now{ref.offset_ms:+d}"
    return lookup(VALUES[ref.root], ref.path)


def test_references_are_found_and_parsed() -> None:
    found = list(references("/t/${tx}/${obj.data.list[-1]} ${now-1s} $${literal}"))
    assert found == [Reference("tx", "tx"), Reference("obj.data.list[-1]", "obj",
                                                      ("data", "list", -1)),
                     Reference("now-1s", NOW, (), -1000)]
    for bad in ("${}", "${1x}", "${now+}", "${tx.}", "${a b}"):
        with pytest.raises(TemplateError):
            list(references(bad))


def test_a_whole_reference_keeps_its_type_and_a_partial_one_is_text() -> None:
    value = {"n": "${n}", "t": "/tx/${tx}?n=${n}", "o": "${obj.data}", "k${tx}": ["${now+2m}"],
             "esc": "$${tx}", "plain": 5}
    assert substitute(value, _resolve) == {
        "n": 3, "t": "/tx/a-1?n=3", "o": {"id": "x", "list": [1, 2]}, "ka-1": ["now+120000"],
        "esc": "${tx}", "plain": 5}


def test_field_paths() -> None:
    assert parse_field_path("data.saga.steps[-1].name") == ("data", "saga", "steps", -1, "name")
    assert lookup({"a": [{"b": 1}]}, ("a", 0, "b")) == 1
    assert lookup({"a": []}, ("a", 0)) is MISSING
    assert lookup({"a": 1}, ("a", "b")) is MISSING
    with pytest.raises(ValueError):
        parse_field_path("a..b")


@pytest.mark.parametrize(("raw", "value", "expected"), [
    (201, 201, True), (201, 201.0, True), (1, True, False), (True, True, True),
    ("100.00", "100.0", False), ([1, 2], [1, 2], True), (None, None, True),
    ({"in": [200, 201]}, 201, True), ({"not_in": [200]}, 201, True), ({"not": 1}, MISSING, True),
    ({"exists": False}, MISSING, True), ({"exists": True}, None, True),
    ({"matches": "^evt_"}, "evt_1", True), ({"matches": "x"}, 1, False),
    ({"length": 6}, [0] * 6, True), ({"contains": "b"}, ["a", "b"], True),
    ({"contains": "ell"}, "hello", True), ({"gt": "99.99"}, "100.00", True),
    ({"ge": 1, "le": 3}, 3, True), ({"lt": 1}, "x", False), ({"type": "integer"}, True, False),
    ({"type": "object"}, {}, True), ({"equals": {"a": 1}}, {"a": 1}, True),
])
def test_matchers(raw: Any, value: Any, expected: bool) -> None:
    assert matches(Matcher.of(raw), value) is expected


def test_matchers_describe_themselves() -> None:
    assert describe(Matcher.of(201)) == "201"
    assert describe(Matcher.of({"ge": 1, "le": 3})) == "ge 1 and le 3"


@settings(max_examples=300)
@given(json_values() | st.integers() | st.booleans() | st.none())
def test_a_rendered_value_is_the_json_text_of_the_result_lines(value: Any) -> None:
    """``render`` (every verdict's expected and actual text) writes what
    ``json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)`` writes, its
    shortcuts for ``null``, ``true``, ``false`` and integers included; ``(missing)``."""
    assert render(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    assert render(MISSING) == "(missing)"
