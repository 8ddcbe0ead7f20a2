"""The fast validity check (``scenario/schema_check.py``, issue 30 section 3) against
jsonschema: over the shipped files, the hostile-file fuzz's texts, and shipped files with one
value replaced, removed or added anywhere, the two agree on whether a file is valid (so
``schema_problems`` answers exactly as jsonschema alone did). A check that forgets a
keyword is shown disagreeing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.scenario import schema_check
from clearing_sim.scenario.errors import ScenarioInvalid
from clearing_sim.scenario.schema import SCHEMA, _validator
from clearing_sim.scenario.source import iter_paths, parse_yaml
from tests.scenario.kit import BASE
from tests.scenario.test_hostile_files import _texts

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [BASE, *(p.read_text() for p in sorted((ROOT / "scenarios").glob("*.yaml")))]
DATA = [parse_yaml(text, "f.yaml").data for text in TEXTS]
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**6), st.sampled_from([1.0, 1.5, -0.0, 2.5e9]),
    st.sampled_from(["", "x", "90s", "1ms", "GBPE", "GBP", "POST", "GET", "settled", "parked",
                     "redeem", "swap", "silence", "rejected", "${tx}", "${tx.id}", "northbank",
                     "100.00", "/api/v1/transactions", "2026-01-01T00:00:00Z", "sandbox",
                     "ON_INSTRUCTION", "reference", "data.id", "last", "first"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(["to", "in", "id", "x", "fact",
                                                          "step", "plus", "status", "a"]),
                                         inner, max_size=3), max_leaves=6)


#: one checker for every example, as ``schema_problems`` keeps one for every file: its
#: plans, made at a node's first visit, must answer for any later instance
JUDGE = schema_check.checker(SCHEMA)


def _agree(data: Any) -> str | None:
    fast = JUDGE(data)
    if fast != schema_check.valid(SCHEMA, data):
        return "the reused checker and a fresh one disagree"
    slow = next(iter(_validator().iter_errors(data)), None) is None
    if fast is not None and fast != slow:
        return f"fast check says {'valid' if fast else 'invalid'}, jsonschema {slow}"
    return None


def _changed(data: Any, path: tuple[Any, ...], how: int, value: Any) -> Any:
    """``data`` with the value at ``path`` replaced (0), removed (1) or given a sibling (2)."""
    if not path:
        return value
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if how == 0:
        parent[last] = value
    elif how == 1:
        del parent[last]
    elif isinstance(parent, dict):
        parent["x-" + str(last)] = value
    else:
        parent.append(value)
    return data


def test_the_shipped_files_are_valid_by_both() -> None:
    assert all(schema_check.valid(SCHEMA, data) for data in DATA)
    assert [_agree(data) for data in DATA] == [None] * len(DATA)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(pick=st.integers(0, len(DATA) - 1), where=st.integers(0, 10**6), how=st.integers(0, 2),
       value=_VALUES)
def test_a_file_with_one_value_changed_is_valid_by_both_or_by_neither(
        pick: int, where: int, how: int, value: Any) -> None:
    data = parse_yaml(TEXTS[pick], "f.yaml").data
    paths = [path for path, _ in iter_paths(data)]
    path = paths[where % len(paths)]
    assert _agree(_changed(data, path, how if path else 0, value)) is None


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(text=_texts())
def test_the_malformed_file_fuzz_is_valid_by_both_or_by_neither(text: str) -> None:
    try:
        data = parse_yaml(text, "f.yaml").data
    except ScenarioInvalid:
        return
    assert _agree(data) is None


def test_a_check_that_forgets_a_keyword_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: ``additionalProperties`` not checked, so an unknown field looks valid."""
    data = parse_yaml(BASE, "f.yaml").data
    data["steps"][0]["expcet"] = {}
    assert _agree(data) is None
    init = schema_check._Check.__init__

    def forgetful(self: schema_check._Check, root: Any) -> None:
        init(self, root)
        self.keywords["additionalProperties"] = lambda value, schema: lambda i: True

    monkeypatch.setattr(schema_check._Check, "__init__", forgetful)
    assert _agree(data) is not None


def test_an_unknown_keyword_leaves_the_answer_to_jsonschema() -> None:
    assert schema_check.valid({"type": "string", "format": "email"}, "x") is None
    assert schema_check.valid({"$ref": "other.json#/a"}, "x") is None
