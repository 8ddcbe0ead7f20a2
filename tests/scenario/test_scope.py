"""``Scope.check_references`` looks only at the strings that hold ``${`` (issue 30, section
3: without a path made for every value): the same strings, at the same paths, in the same
order as a walk over every value finds them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.scenario import scope
from clearing_sim.scenario.source import FieldPath, iter_paths, parse_yaml

ROOT = Path(__file__).resolve().parents[2]
_VALUES = st.recursive(
    st.none() | st.integers() | st.sampled_from(["x", "${a}", "a ${b.id} c", "$${x}", "${"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3), max_leaves=10)


def _every(value: Any, path: FieldPath) -> list[tuple[FieldPath, Any]]:
    return [(p, v) for p, v in iter_paths(value, path) if isinstance(v, str) and "${" in v]


def test_the_shipped_files_templates_are_found_where_a_full_walk_finds_them() -> None:
    for file in sorted(ROOT.glob("scenarios/*.yaml")):
        data = parse_yaml(file.read_text("utf-8"), str(file)).data
        assert list(scope._templated(data, ("f",))) == _every(data, ("f",))


@given(value=_VALUES)
def test_any_value_s_templates_are_found_where_a_full_walk_finds_them(value: Any) -> None:
    assert list(scope._templated(value, ())) == _every(value, ())


def test_a_walk_that_skips_lists_is_caught() -> None:
    """Mutant: what lies inside a list passed over; the comparison sees it."""
    def skipping(value: Any, path: FieldPath) -> list[tuple[FieldPath, str]]:
        return [(p, v) for p, v in scope._templated(value, path)
                if not any(isinstance(k, int) for k in p[len(path):])]

    value = {"a": ["${x}"], "b": "${y}"}
    assert list(scope._templated(value, ())) == _every(value, ())
    assert skipping(value, ()) != _every(value, ())
