"""What a YAML scalar reads as, and the bounds on a file: shared by the two ways
``scenario/source.py`` reads a file (its one pass, ``scenario/one_pass.py``, and its full way).

Public names: ``DEPTH_MAX``, ``INT_DIGITS_MAX``, ``MERGE_TAG``, ``NULL_TAG``, ``STR_TAG``,
``VALUES_MAX``, ``FieldPath``, ``Mark``, ``plain_tag``, ``scalar_value``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Protocol

from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from clearing_sim.service.body import text_problem

__all__ = ["DEPTH_MAX", "INT_DIGITS_MAX", "MERGE_TAG", "NULL_TAG", "STR_TAG", "VALUES_MAX",
           "FieldPath", "Mark", "plain_tag", "scalar_value"]

VALUES_MAX = 100_000  # values after alias and merge expansion
DEPTH_MAX = 64  # nested lists and mappings; a scenario's deepest is under 10
INT_DIGITS_MAX = 30

FieldPath = tuple[str | int, ...]

STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"
NULL_TAG = "tag:yaml.org,2002:null"
_INT = "tag:yaml.org,2002:int"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_SCALAR_TAGS = (NULL_TAG, "tag:yaml.org,2002:bool", _INT, "tag:yaml.org,2002:float", STR_TAG)


class Mark(Protocol):
    """Where a parser saw a node: 0-based, as both of PyYAML's parsers keep it."""

    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...


def scalar_value(constructor: SafeConstructor, node: ScalarNode) -> tuple[Any, str | None]:
    """A scalar's value, or None and why it cannot be one (the problem's words)."""
    why = text_problem(node.value)
    if why is not None:
        return None, f"the text {why}"
    if node.tag in (STR_TAG, _TIMESTAMP):
        return node.value, None  # what the constructor answers for a string, without its calls
    if node.tag not in _SCALAR_TAGS:
        return None, (f"YAML tag {node.tag} is not allowed here; "
                      "expected plain JSON values (strings, numbers, booleans, null)")
    if node.tag == _INT and sum(c.isdigit() for c in node.value) > INT_DIGITS_MAX:
        return None, f"an integer of more than {INT_DIGITS_MAX} digits"
    try:
        value = constructor.construct_object(node, deep=True)
    except (ConstructorError, ValueError) as error:
        return None, f"cannot be read: {str(error)[:200]}"
    if isinstance(value, float) and not math.isfinite(value):
        return None, f"expected a finite number, got {node.value}"
    return value, None


@lru_cache(maxsize=4096)
def plain_tag(text: str) -> str:
    """The tag PyYAML's resolver gives a plain (unquoted, untagged) scalar: the same texts
    recur in every file (keys above all), so each is resolved once per process."""
    tag: str = _RESOLVER.resolve(ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag


_RESOLVER = Resolver()  # the resolver of both loaders; it keeps no state for a scalar
