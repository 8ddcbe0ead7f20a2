"""YAML → data with positions: syntax errors, duplicate keys, tags, timestamps, merge keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.scenario import one_pass, source
from clearing_sim.scenario.errors import Location, ScenarioInvalid
from clearing_sim.scenario.source import field_path, iter_paths, parse_yaml
from tests.scenario.test_hostile_files import _texts

ROOT = Path(__file__).resolve().parents[2]


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


# the one pass over libyaml's events answers as the full way (issue 30, section 3) --------
def _read_both(text: str) -> tuple[object, object]:
    """``parse_yaml``'s answer with the one pass, and with the full way only: the data and
    where each value and key is placed, or every line of the error."""
    def answer() -> object:
        try:
            doc = parse_yaml(text, "f.yaml")
        except ScenarioInvalid as error:
            return error.lines()
        return (doc.data, sorted(((p, doc.locate(p)) for p in doc.values), key=repr),
                sorted(((p, doc.locate(p, key=True)) for p in doc.keys), key=repr))

    fast = answer()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source, "_one_pass", lambda _text: None)
        return fast, answer()


def _shipped_texts() -> list[str]:
    return [p.read_text("utf-8") for p in sorted(ROOT.glob("scenarios/*.yaml"))]


@st.composite
def _edited(draw: st.DrawFn) -> str:
    """A shipped file with one line replaced, removed or doubled, or a piece put into one."""
    lines = draw(st.sampled_from(_shipped_texts())).splitlines()
    at = draw(st.integers(0, len(lines) - 1))
    how = draw(st.integers(0, 3))
    if how == 0:
        lines[at] = draw(st.sampled_from(["  a: 1", "a: [1, {b: 2}]", "- x", "  ? k", "x: ~",
                                          "  y: '1'", "  z: \"\\u00e9\"", "  0x1f: 1",
                                          "  yes: no", "   deep:", "\ta: 1"]))
    elif how == 1:
        del lines[at]
    elif how == 2:
        lines.insert(at, lines[at])
    else:
        cut = draw(st.integers(0, len(lines[at])))
        lines[at] = lines[at][:cut] + draw(_texts()) + lines[at][cut:]
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(text=_edited() | _texts())
def test_the_one_pass_reads_every_text_as_the_full_way(text: str) -> None:
    fast, full = _read_both(text)
    assert fast == full


def test_the_shipped_files_take_the_one_pass_and_read_as_the_full_way() -> None:
    texts = _shipped_texts()
    plain = [t for t in texts if source._one_pass(t) is not None]
    assert len(plain) == len(texts)  # anchors, aliases and merge keys too
    for text in texts:
        fast, full = _read_both(text)
        assert fast == full


def test_a_one_pass_that_reads_keys_as_the_python_loader_does_not_is_caught(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: the one pass takes a ``null`` key (the full way refuses it) as the text."""
    text = "scenario: x\n~: 1\n"
    assert _read_both(text)[0] == _read_both(text)[1]
    monkeypatch.setattr(one_pass, "NULL_TAG", "no such tag")
    fast, full = _read_both(text)
    assert fast != full


def test_keys_count_toward_the_values_bound_in_the_one_pass_too() -> None:
    """``VALUES_MAX`` counts keys and values (``_expanded``): 37,000 one-key mappings are
    111,003 of them though only 74,002 are values; the one pass refuses the file as the full
    way does (a one pass that counted values only read it)."""
    text = "x: [" + "{a: 1}," * 37_000 + "]\n"
    fast, full = _read_both(text)
    assert full == ["f.yaml:1:1: the file stands for more than 100000 values once its aliases "
                    "and merge keys are expanded"]
    assert fast == full


@st.composite
def _anchored(draw: st.DrawFn) -> str:
    """A block mapping whose values anchor, alias and merge one another: the shapes the one
    pass reads (aliases to earlier nodes, a merge key first) and some it leaves."""
    names: list[str] = []
    lines = []
    for i in range(draw(st.integers(1, 6))):
        anchor = f"&n{i} " if draw(st.booleans()) else ""
        kind = draw(st.integers(0, 4))
        if kind == 0 or not names:
            body = draw(st.sampled_from(["1", "x", "{a: 1, b: [2, 3]}", "[1, {c: d}]", "~"]))
            lines.append(f"k{i}: {anchor}{body}")
        elif kind == 1:
            lines.append(f"k{i}: *{draw(st.sampled_from(names))}")
        else:
            first = draw(st.booleans())
            merge = f"<<: *{draw(st.sampled_from(names))}"
            values = ["5", "{c: e}", "[7]", "*" + draw(st.sampled_from(names))]
            pairs = [f"{draw(st.sampled_from('abcz'))}: {draw(st.sampled_from(values))}"
                     for _ in range(draw(st.integers(0, 2)))]
            inner = [merge, *pairs] if first else [*pairs, merge]
            lines.append(f"k{i}: {anchor}" + "{" + ", ".join(inner) + "}")
        if anchor:
            names.append(f"n{i}")
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(text=_anchored())
def test_the_one_pass_reads_anchors_aliases_and_merges_as_the_full_way(text: str) -> None:
    fast, full = _read_both(text)
    assert fast == full


def test_an_alias_to_a_node_holding_a_merge_key_is_left_to_the_full_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The walker walks an aliased node again after flattening its merge key in place, so
    the merged key and the explicit one then read as a duplicate: the full way refuses the
    file, and the one pass leaves it to it. Mutant: a one pass that forgets the merge key
    inside an anchor reads the file, and the comparison fails."""
    text = "s: &s {a: 1}\nm: &m {<<: *s, a: 2}\nn: *m\n"
    fast, full = _read_both(text)
    assert full == ["f.yaml:2:16: n.a: duplicate key 'a' (first at line 1); expected each "
                    "key once"]
    assert fast == full
    close = one_pass._OnePass._close

    def forgetful(self: one_pass._OnePass, value: object, count: int) -> None:
        self.open[-1].merges = False
        close(self, value, count)

    monkeypatch.setattr(one_pass._OnePass, "_close", forgetful)
    assert _read_both(text)[0] != full
