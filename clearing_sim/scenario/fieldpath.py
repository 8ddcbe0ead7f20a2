"""Field paths into JSON values: ``data.saga.steps[-1].name``, ``errors[0].code``.

Public names: ``MISSING``, ``Missing``, ``Segment``, ``lookup``, ``parse_field_path``.

A path is keys joined by dots, each optionally followed by list indices in brackets (negative
indices count from the end, as in Python). ``lookup`` answers ``MISSING`` (never raises) when a
key is absent, an index is out of range or a value is not a container, so an expectation can
say "this field exists" or report what is there instead.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

__all__ = ["MISSING", "Missing", "Segment", "lookup", "parse_field_path"]

Segment = str | int

_PART = re.compile(r"([A-Za-z_$][A-Za-z0-9_$-]*)((?:\[-?[0-9]+\])*)")
_INDEX = re.compile(r"\[(-?[0-9]+)\]")


class Missing:
    """The value of a path that leads nowhere."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = Missing()


@lru_cache(maxsize=1024)  # the same few paths, at every check of every step
def parse_field_path(text: str) -> tuple[Segment, ...]:
    """``a.b[2].c`` → ``("a", "b", 2, "c")``; ``ValueError`` for anything else."""
    segments: list[Segment] = []
    for part in text.split("."):
        match = _PART.fullmatch(part)
        if match is None:
            raise ValueError(f"malformed field path {text!r}: expected keys joined by dots, "
                             "each optionally followed by [index]")
        segments.append(match.group(1))
        segments.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return tuple(segments)


def lookup(value: Any, path: tuple[Segment, ...]) -> Any:
    """The value at ``path`` inside ``value``, or ``MISSING``."""
    for segment in path:
        if isinstance(segment, int):
            if not isinstance(value, list) or not -len(value) <= segment < len(value):
                return MISSING
            value = value[segment]
        else:
            if not isinstance(value, dict) or segment not in value:
                return MISSING
            value = value[segment]
    return value
