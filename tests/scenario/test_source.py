"""YAML → data with positions: syntax errors, duplicate keys, tags, timestamps, merge keys."""

from __future__ import annotations

import pytest

from clearing_sim.scenario.errors import Location, ScenarioInvalid
from clearing_sim.scenario.source import field_path, iter_paths, parse_yaml


def _problems(text: str) -> list[str]:
    with pytest.raises(ScenarioInvalid) as caught:
        parse_yaml(text, "f.yaml")
    return caught.value.lines()


def test_every_value_and_key_keeps_its_line_and_column() -> None:
    doc = parse_yaml("a: 1\nb:\n  - x\n  - {c: 2}\n", "f.yaml")
    assert doc.data == {"a": 1, "b": ["x", {"c": 2}]}
    assert doc.locate(("b", 1, "c")) == Location(4, 9)
    assert doc.locate(("b", 1, "c"), key=True) == Location(4, 6)
    assert doc.locate(("b", 0)) == Location(3, 5)
    assert doc.locate(("b", 7, "zz")) == Location(3, 3)  # nearest ancestor: the list


def test_a_syntax_error_names_its_line_and_column() -> None:
    assert _problems("a: [1, 2\nb: 3\n") == [
        "f.yaml:2:2: YAML syntax: while parsing a flow sequence, expected ',' or ']', "
        "but got ':'"]


def test_a_duplicate_key_is_reported_not_silently_overwritten() -> None:
    assert _problems("a: 1\nb: 2\na: 3\n") == [
        "f.yaml:3:1: a: duplicate key 'a' (first at line 1); expected each key once"]


def test_empty_file_and_several_documents_are_problems() -> None:
    assert _problems("") == ["f.yaml:1:1: the file is empty; expected a mapping with scenario "
                             "and steps"]
    assert "but found another document" in _problems("a: 1\n---\nb: 2\n")[0]


def test_non_json_yaml_is_refused_where_it_is() -> None:
    lines = _problems("a: !!binary aGVsbG8=\nb: !!set {x}\nc: .nan\n? [k]\n: v\n")
    assert lines[0].startswith("f.yaml:1:4: a: YAML tag tag:yaml.org,2002:binary is not allowed")
    assert lines[1].startswith("f.yaml:2:4: b: YAML tag tag:yaml.org,2002:set")
    assert lines[2] == "f.yaml:3:4: c: expected a finite number, got .nan"
    assert lines[3] == "f.yaml:4:3: a mapping key must be a plain string"


def test_timestamps_stay_text_and_merge_keys_work() -> None:
    doc = parse_yaml("t: 2026-01-01T00:00:00Z\nbase: &b {x: 1}\nm: {<<: *b, y: 2}\n", "f.yaml")
    assert doc.data["t"] == "2026-01-01T00:00:00Z"
    assert doc.data["m"] == {"x": 1, "y": 2}


def test_field_paths_render_like_the_file_reads() -> None:
    assert field_path(("steps", 3, "expect", "status")) == "steps[3].expect.status"
    assert field_path((0, "a")) == "[0].a"
    assert [p for p, _ in iter_paths({"a": [1]})] == [(), ("a",), ("a", 0)]
