"""``${name}`` references in scenario strings: finding them, checking them, substituting them.

Public names: ``NOW``, ``Reference``, ``TemplateError``, ``references``, ``substitute``,
``timeless``.

A reference is ``${root}``, ``${root.path}`` or ``${now±duration}``:

- ``root`` is a value saved by an earlier step (``save: {tx: data.id}`` → ``${tx}``; a path
  reads inside a saved object: ``${created.data.saga.steps[0].name}``), or a symbolic name of
  the world with an attribute (``${northbank.id}``, ``${etherpound.account}``,
  ``${hooks.secret}``), or an asset code alone (``${GBPE}`` → ``{code, issuer}``);
- ``now`` is the current virtual time as an ISO timestamp, optionally moved by a duration
  (``${now+24h}``, ``${now-1s}``).

A string that is exactly one reference is replaced by the referenced value with its JSON type
(a number stays a number, an object an object); references inside a longer string are
rendered as text. ``$${`` writes a literal ``${``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from attrs import frozen

from clearing_sim.domain.timefmt import parse_duration_ms
from clearing_sim.scenario.fieldpath import Segment, parse_field_path

__all__ = ["NOW", "Reference", "TemplateError", "references", "substitute", "timeless"]

NOW = "now"
_TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}")
_NOW = re.compile(r"now(?:([+-])([0-9]+(?:ms|s|m|h|d)))?")
_ROOT = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)((?:\[-?[0-9]+\])*(?:\..*)?)")


class TemplateError(ValueError):
    """A malformed ``${…}`` reference."""


@frozen
class Reference:
    """One ``${…}``: its root name, the path inside it and, for ``now``, an offset."""

    text: str  # as written, without ${ }
    root: str
    path: tuple[Segment, ...] = ()
    offset_ms: int = 0


@lru_cache(maxsize=1024)  # a wait resolves the same references at every poll
def _parse(inner: str) -> Reference:
    text = inner.strip()
    now = _NOW.fullmatch(text)
    if now is not None:
        offset = 0
        if now.group(1):
            offset = parse_duration_ms(now.group(2)) * (-1 if now.group(1) == "-" else 1)
        return Reference(text, NOW, (), offset)
    match = _ROOT.fullmatch(text)
    if match is None:
        raise TemplateError(f"malformed reference ${{{inner}}}: expected ${{name}}, "
                            "${name.path} or ${now+DURATION}")
    rest = match.group(2)
    path: tuple[Segment, ...] = ()
    if rest:
        try:
            path = parse_field_path("x" + rest)[1:]
        except ValueError:
            raise TemplateError(f"malformed reference ${{{inner}}}: the part after "
                                f"{match.group(1)} must be a field path like .data.id") from None
    return Reference(text, match.group(1), path)


def references(text: str) -> Iterator[Reference]:
    """Every reference in ``text``, in order; ``TemplateError`` for a malformed one."""
    for match in _TOKEN.finditer(text):
        if match.group(0) != "$${":
            yield _parse(match.group(1))


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _substitute_text(text: str, resolve: Callable[[Reference], Any]) -> Any:
    if "$" not in text:  # no reference, no $${ (most strings)
        return text
    whole = _TOKEN.fullmatch(text)
    if whole is not None and whole.group(0) != "$${":
        return resolve(_parse(whole.group(1)))

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        return _render(resolve(_parse(match.group(1))))

    return _TOKEN.sub(one, text)


def substitute(value: Any, resolve: Callable[[Reference], Any]) -> Any:
    """``value`` with every reference in every string (keys included) resolved."""
    if isinstance(value, str):
        return _substitute_text(value, resolve)
    if isinstance(value, list):
        return [substitute(item, resolve) for item in value]
    if isinstance(value, dict):
        return {_render(_substitute_text(k, resolve)): substitute(v, resolve)
                for k, v in value.items()}
    return value


def timeless(value: Any) -> bool:
    """Whether no string in ``value`` (keys included) refers to ``${now…}``, so that within
    one step (where nothing is saved or named anew) its substitution is always the same. A
    malformed reference counts as not timeless: substituting it raises each time."""
    if isinstance(value, str):
        if "$" not in value:
            return True
        try:
            return all(ref.root != NOW for ref in references(value))
        except TemplateError:
            return False
    if isinstance(value, list | tuple):
        return all(timeless(item) for item in value)
    if isinstance(value, dict):
        return all(timeless(k) and timeless(v) for k, v in value.items())
    return True
