"""What a scenario step can see while it is read: its ``Scope``.

Public names: ``Scope``.

The world's symbols, the names saved by earlier steps, the step names so far and the epoch;
``Scope`` reports a reference to anything else (an unknown participant, a ``${…}`` no earlier
step saves) at its line and column. ``clearing_sim.scenario.read_steps`` builds it step by
step, and ``clearing_sim.scenario.read_expect`` checks each step's expectations against it.
"""

from __future__ import annotations

import difflib
from typing import Any

from attrs import define, field

from clearing_sim.scenario.reading import ATTRIBUTES, Reader, Symbols
from clearing_sim.scenario.source import FieldPath
from clearing_sim.scenario.templates import NOW, TemplateError, references

__all__ = ["Scope"]

_KIND_WORDS = {("member", "issuer"): "participant", ("member", "issuer", "agent"):
               "participant or agent", ("webhook",): "webhook subscription"}


def _templated(value: Any, path: FieldPath,
               found: list[tuple[FieldPath, str]] | None = None) -> list[tuple[FieldPath, str]]:
    """Every (path, string) holding ``${`` inside ``value``, depth first (as ``iter_paths``
    visits them); other values are passed over without a path made for each."""
    found = [] if found is None else found
    if isinstance(value, str):
        if "${" in value:
            found.append((path, value))
        return found
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(item, str):
            if "${" in item:
                found.append(((*path, key), item))
        elif isinstance(item, dict | list):
            _templated(item, (*path, key), found)
    return found


@define
class Scope:
    """What a step can see: the world's symbols, earlier saves and step names, the epoch."""

    symbols: Symbols
    epoch_ms: int
    reference_receivers: frozenset[str] = frozenset()  # webhooks with receiver.app: reference
    saved: set[str] = field(factory=set)
    step_names: dict[str, int] = field(factory=dict)  # name → line

    def participant(self, r: Reader, path: FieldPath, name: str,
                    kinds: tuple[str, ...] = ("member", "issuer")) -> None:
        """Report ``name`` unless it is a symbol of one of ``kinds``."""
        if self.symbols.kind(name) in kinds:
            return
        known = sorted(n for n, k in self.symbols.kinds.items() if k in kinds)
        hint = difflib.get_close_matches(name, known, n=1)
        what = _KIND_WORDS.get(kinds, " or ".join(kinds))
        r.report(path, f"unknown {what} {name!r}"
                 + (f" (did you mean {hint[0]}?)" if hint else "")
                 + f"; expected one of: {', '.join(known) or f'(this file defines no {what})'}")

    def check_references(self, r: Reader, path: FieldPath, raw: Any) -> None:
        """Every ``${…}`` inside ``raw`` must parse and name something defined by now."""
        for where, value in _templated(raw, path):
            try:
                found = list(references(value))
            except TemplateError as error:
                r.report(where, str(error))
                continue
            for ref in found:
                self._reference(r, where, ref.root, ref.path, ref.text)

    def _reference(self, r: Reader, where: FieldPath, root: str, path: tuple[Any, ...],
                   text: str) -> None:
        if root == NOW or root in self.saved:
            return
        kind = self.symbols.kind(root)
        if kind is None:
            known = sorted(self.saved)
            hint = difflib.get_close_matches(root, known, n=1)
            r.report(where, f"${{{text}}} is not defined: no earlier step saves {root!r}"
                     + (f" (did you mean {hint[0]}?)" if hint else "")
                     + "; expected a name from an earlier step's save, a name of the world "
                     "with an attribute, or now")
            return
        allowed = ATTRIBUTES[kind]
        if kind == "asset" and not path:
            return
        if len(path) != 1 or path[0] not in allowed:
            r.report(where, f"${{{text}}}: {root} is a {kind}; expected "
                     + ", ".join(f"${{{root}.{a}}}" for a in allowed)
                     + (f" or ${{{root}}}" if kind == "asset" else ""))
