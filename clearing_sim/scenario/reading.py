"""What the readers of a scenario share: located problems, conversions, the symbol table.

Public names: ``ATTRIBUTES``, ``NO_OWNER``, ``RESERVED``, ``Reader``, ``Symbols``.

The schema has already checked each value's shape; a ``Reader`` turns values into engine
values (durations, latencies, timestamps) and records a ``Problem`` wherever that fails or a
rule the schema cannot express is broken. Parts of the file where the schema found a problem
are skipped (``broken``), so one mistake is reported once. ``Symbols`` are the world's
symbolic names, read straight from the raw file so that steps can be checked against them even
when a participant's own definition has a problem.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clearing_sim.domain.latency import Latency, parse_latency
from clearing_sim.domain.timefmt import parse_duration_ms, parse_iso
from clearing_sim.scenario.errors import Problem
from clearing_sim.scenario.expectations import Site
from clearing_sim.scenario.source import Document, FieldPath, field_path

__all__ = ["ATTRIBUTES", "NO_OWNER", "RESERVED", "Reader", "Symbols"]

#: What ``${name.attribute}`` may read of each kind of symbol.
ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "member": ("id", "name"),
    "issuer": ("account", "id", "name"),
    "agent": ("id", "proof"),
    "webhook": ("id", "secret", "url"),
    "asset": ("code", "issuer"),
}
#: The problem of a ``credential`` without ``as``.
NO_OWNER = "a credential belongs to someone; expected as: NAME beside it"
#: Names a scenario cannot give to anything.
RESERVED = ("now",)
_SECTIONS = (("members", "member"), ("issuers", "issuer"), ("agents", "agent"),
             ("webhooks", "webhook"))


class Reader:
    def __init__(self, document: Document, broken: Iterable[FieldPath] = ()) -> None:
        self.document = document
        self.problems: list[Problem] = []
        self._broken = tuple(broken)

    def report(self, path: FieldPath, message: str, *, key: bool = False) -> None:
        self.problems.append(self.document.problem_at(path, message, key=key))

    def site(self, path: FieldPath) -> Site:
        where = self.document.locate(path)
        return Site(where.line, where.column, field_path(path))

    def broken(self, path: FieldPath) -> bool:
        """Whether the schema found a problem at or inside ``path``."""
        return any(p[:len(path)] == path for p in self._broken)

    def blocked(self, path: FieldPath, required: tuple[str, ...] = ()) -> bool:
        """Whether the value at ``path`` cannot be read at all: the schema found a problem
        with the value itself, or with one of its ``required`` fields."""
        return any(p == path or (len(p) == len(path) + 1 and p[:-1] == path
                                 and p[-1] in required) for p in self._broken)

    def get(self, raw: dict[str, Any], path: FieldPath, key: str, default: Any = None) -> Any:
        """``raw[key]`` if it is there and the schema found nothing wrong in it; else
        ``default`` (its problem is reported already)."""
        if key not in raw or self.broken((*path, key)):
            return default
        return raw[key]

    def duration(self, path: FieldPath, text: Any) -> int:
        try:
            return parse_duration_ms(str(text))
        except ValueError as error:
            self.report(path, str(error))
            return 0

    def latency(self, path: FieldPath, raw: Any) -> Latency | None:
        try:
            return parse_latency(raw)
        except ValueError as error:
            self.report(path, f"expected a latency: {error}")
            return None

    def timestamp_ms(self, path: FieldPath, text: str) -> int | None:
        """Unix milliseconds of an ISO timestamp with a zone."""
        try:
            return parse_iso(text)
        except ValueError as error:
            self.report(path, f"expected an ISO 8601 timestamp with a zone: {error}")
            return None


class Symbols:
    """The world's names → their kind (member, issuer, agent, webhook, asset)."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}
        self.asset_issuer: dict[str, str] = {}  # asset code → issuer name

    def kind(self, name: str) -> str | None:
        return self.kinds.get(name)

    @classmethod
    def read(cls, reader: Reader) -> Symbols:
        """Collect every name; report duplicates and reserved names where they are defined."""
        symbols = cls()
        data = reader.document.data if isinstance(reader.document.data, dict) else {}
        first: dict[str, FieldPath] = {}

        def define(name: str, kind: str, path: FieldPath, *, key: bool) -> None:
            if name in RESERVED:
                reader.report(path, f"{name!r} is reserved; expected another name", key=key)
            elif name in first:
                where = reader.document.locate(first[name], key=True)
                reader.report(path, f"duplicate name {name!r} (first at line {where.line}); "
                              "expected each member, issuer, agent, webhook and asset code to "
                              "have its own name", key=key)
                return
            first[name] = path
            symbols.kinds[name] = kind

        for section, kind in _SECTIONS:
            entries = data.get(section)
            if isinstance(entries, dict):
                for name in entries:
                    define(name, kind, (section, name), key=True)
        issuers = data.get("issuers")
        for issuer, spec in (issuers.items() if isinstance(issuers, dict) else ()):
            assets = spec.get("assets") if isinstance(spec, dict) else None
            for i, code in enumerate(assets if isinstance(assets, list) else ()):
                if isinstance(code, str):
                    define(code, "asset", ("issuers", issuer, "assets", i), key=False)
                    symbols.asset_issuer.setdefault(code, issuer)
        return symbols
