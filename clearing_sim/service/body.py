"""Reading request bodies: JSON syntax, then fields, every problem named by its path.

Public names: ``parse_json_object``, ``is_empty``, ``read_query``, ``check_text``,
``text_problem``, ``Fields``, ``read_number``, ``BODY_BYTES_MAX``, ``DEPTH_MAX``,
``INT_DIGITS_MAX``.

The decoder is the one gate every body passes before anything reads it (docs/semantics.md,
"Hostile input"): strict UTF-8, JSON without ``NaN``/``Infinity``, no duplicate member names,
integers of at most ``INT_DIGITS_MAX`` digits, at most ``DEPTH_MAX`` levels of arrays and
objects, and every string (member names included) a canonical one: Unicode scalar values
only (a lone surrogate such as ``"\\ud800"`` cannot be encoded, so it is refused here
rather than failing later, after a change) in Normalization Form C. ``check_text`` holds
every other text a request carries (path, query, headers) to the same rule.

``Fields`` reads one JSON object, collecting a ``Problem`` for each missing, mistyped or
out-of-bounds field and for every field the route does not accept; ``done()`` raises them
all at once (the first decides the code). JSON's ``true`` is never an integer here, and
``NaN``/``Infinity`` are not JSON.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from clearing_sim.domain.errors import InvalidRequest, PayloadTooLarge, Problem
from clearing_sim.domain.jsontext import DEPTH_MAX, INT_DIGITS_MAX, decode_strict
from clearing_sim.domain.jsontext import JSONRefused as _Refused

__all__ = [
    "BODY_BYTES_MAX",
    "DEPTH_MAX",
    "INT_DIGITS_MAX",
    "Fields",
    "check_text",
    "is_empty",
    "parse_json_object",
    "read_number",
    "read_query",
    "text_problem",
]

BODY_BYTES_MAX = 1 << 20  # 1 MiB


def text_problem(text: str) -> str | None:
    """Why ``text`` is not a canonical string (UTF-8-encodable, NFC), or None."""
    if text.isascii():  # a flag of the string, no scan: ASCII is always UTF-8 and NFC
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (f"holds U+{ord(text[error.start]):04X} at character {error.start}, which is "
                "not a Unicode scalar value (a lone surrogate)")
    if not unicodedata.is_normalized("NFC", text):
        return "is not in Unicode Normalization Form C"
    return None


def check_text(param: str, text: str) -> None:
    """400 ``invalid_string`` unless ``text`` is canonical (``text_problem``)."""
    why = text_problem(text)
    if why is not None:
        raise InvalidRequest.one(param, "invalid_string", f"{param} {why}")


def _path(parent: str, key: str | int | None) -> str:
    """The path of a member (``key`` a name) or an item (``key`` an index) of ``parent``."""
    if key is None:
        return parent
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return (f"{parent}.{key}" if parent else key)[:200]


def _check_value(value: Any) -> None:
    """Every string canonical and at most ``DEPTH_MAX`` levels, iteratively (no recursion).

    A value's path is formatted only when it is needed (a container's members, a problem):
    most values are ASCII strings, which are canonical."""
    stack: list[tuple[Any, str, str | int | None, int]] = [(value, "", None, 0)]
    while stack:
        item, parent, key, depth = stack.pop()
        if isinstance(item, str):
            why = None if item.isascii() else text_problem(item)
            if why is not None:
                path = _path(parent, key)
                raise _Refused(f"{path or 'the body'} {why}", path or None, "invalid_string")
        elif isinstance(item, dict | list):
            if depth >= DEPTH_MAX:
                raise _Refused(f"the body nests arrays and objects more than {DEPTH_MAX} "
                               "levels deep")
            path = _path(parent, key)
            if isinstance(item, list):
                stack.extend((v, path, i, depth + 1) for i, v in enumerate(item))
                continue
            for name, member in item.items():
                why = None if name.isascii() else text_problem(name)
                if why is not None:
                    raise _Refused(f"a member name {why}", path or None, "invalid_string")
                stack.append((member, path, name, depth + 1))


def _plain(raw: bytes) -> bool:
    """Whether ``_check_value`` can find nothing in the value ``raw`` decodes to: ASCII text
    without escapes decodes to ASCII strings only (canonical), and at most ``DEPTH_MAX``
    opening brackets cannot nest deeper than allowed (one inside a string only over-counts).
    The driver's and most clients' bodies are plain: they are not walked."""
    return raw.isascii() and b"\\" not in raw \
        and raw.count(b"{") + raw.count(b"[") <= DEPTH_MAX


_JSON_WHITESPACE = b" \t\n\r"


def read_query(query: Sequence[tuple[str, str]], allowed: Sequence[str]) -> dict[str, str]:
    """The query's parameters, each named in ``allowed`` and given once; 400
    ``invalid_query`` otherwise. Every route of both surfaces declares what it takes, so no
    route ignores a parameter (or a cursor) it was sent (issue 31 §6)."""
    found: dict[str, str] = {}
    for name, value in query:
        if name not in allowed:
            takes = f"it takes {', '.join(allowed)}" if allowed else "it takes none"
            raise InvalidRequest.one(name[:40], "invalid_query",
                                     f"unknown query parameter {name[:40]!r}; {takes}")
        if name in found:
            raise InvalidRequest.one(name, "invalid_query", f"{name} is given twice")
        found[name] = value
    return found


def is_empty(raw: bytes) -> bool:
    """Whether a body is no body: no bytes but JSON's whitespace (RFC 8259 §2)."""
    return not raw.strip(_JSON_WHITESPACE)


def parse_json_object(raw: bytes, *, empty_ok: bool = False) -> dict[str, Any]:
    """The body as a JSON object; an empty body is ``{}`` when ``empty_ok``.

    Empty means no bytes but JSON's own whitespace (RFC 8259 §2: space, tab, LF, CR); a
    form feed or vertical tab, which ``bytes.strip`` would also drop, is not JSON and is
    refused as malformed, so ``\x0c`` cannot stand for "no body" (issue 31 §6)."""
    if len(raw) > BODY_BYTES_MAX:
        raise PayloadTooLarge.one(None, "payload_too_large",
                                  f"the body is over {BODY_BYTES_MAX} bytes (1 MiB)")
    if is_empty(raw):
        if empty_ok:
            return {}
        raise InvalidRequest.one(None, "invalid_body", "the request needs a JSON object body")
    try:
        value = decode_strict(raw.decode("utf-8"))
        if not _plain(raw):
            _check_value(value)
    except _Refused as exc:
        raise InvalidRequest.one(exc.param, exc.code, f"the body is refused: {exc}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidRequest.one(None, "malformed_json",
                                 f"the body is not valid UTF-8 JSON: {str(exc)[:200]}") from None
    if not isinstance(value, dict):
        raise InvalidRequest.one(None, "invalid_body", "the body must be a JSON object")
    return value


_TYPE_NAMES = {str: "a string", bool: "a boolean", int: "an integer", list: "an array",
               dict: "an object"}


def _is(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


class Fields:
    """One JSON object's fields, read with their paths (``source.asset.code``)."""

    def __init__(self, obj: dict[str, Any], prefix: str = "",
                 problems: list[Problem] | None = None) -> None:
        self.obj = obj
        self.prefix = prefix
        self.problems: list[Problem] = [] if problems is None else problems
        self._read: list[str] = []

    def path(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def problem(self, name: str | None, code: str, message: str) -> None:
        self.problems.append(Problem(None if name is None else self.path(name), code, message))

    def _get(self, name: str, kind: type, required: bool) -> Any:
        self._read.append(name)
        if name not in self.obj or (self.obj[name] is None and not required):
            if required:
                self.problem(name, "required", f"{self.path(name)} is required")
            return None
        value = self.obj[name]
        if not _is(value, kind):
            self.problem(name, "invalid_type", f"{self.path(name)} must be {_TYPE_NAMES[kind]}")
            return None
        return value

    def text(self, name: str, *, required: bool = True, length_max: int = 1000,
            choices: Sequence[str] | None = None, nonblank: bool = True) -> str | None:
        value: str | None = self._get(name, str, required)
        if value is None:
            return None
        if choices is not None and value not in choices:
            self.problem(name, "invalid_value",
                         f"{self.path(name)} must be one of {', '.join(choices)}")
            return None
        if (nonblank and not value.strip()) or len(value) > length_max:
            self.problem(name, "invalid_value",
                         f"{self.path(name)} must be 1 to {length_max} characters")
            return None
        return value

    def flag(self, name: str, *, required: bool = True) -> bool | None:
        value: bool | None = self._get(name, bool, required)
        return value

    def integer(self, name: str, *, required: bool = True) -> int | None:
        value: int | None = self._get(name, int, required)
        return value

    def array(self, name: str, *, required: bool = True) -> list[Any] | None:
        value: list[Any] | None = self._get(name, list, required)
        return value

    def choices(self, name: str, allowed: Sequence[str], *, what: str) -> list[str] | None:
        """A required, non-empty array of distinct strings among ``allowed``, in the body's
        order; each bad item is a problem at ``name[i]``. ``None`` if anything is wrong."""
        items = self.array(name)
        if items is None:
            return None
        if not items:
            self.problem(name, "invalid_value", f"{self.path(name)} must name at least one {what}")
            return None
        chosen: list[str] = []
        for index, item in enumerate(items):
            at = f"{name}[{index}]"
            if not isinstance(item, str):
                self.problem(at, "invalid_type", f"{self.path(at)} must be a string")
            elif item not in allowed:
                self.problem(at, "invalid_value",
                             f"{self.path(at)} must be one of {', '.join(allowed)}")
            elif item in chosen:
                self.problem(at, "invalid_value", f"{self.path(at)} repeats {item}")
            else:
                chosen.append(item)
        return chosen if len(chosen) == len(items) else None

    def object(self, name: str, *, required: bool = True) -> Fields | None:
        value = self._get(name, dict, required)
        if value is None:
            return None
        return Fields(value, f"{self.path(name)}.", self.problems)

    def check_unknown(self, *extra: str) -> None:
        """Refuse every field not read (or named in ``extra``), in the body's order."""
        known = (*self._read, *extra)
        for name in self.obj:
            if name not in known:
                self.problem(name, "unknown_field", f"{self.path(name)} is not accepted here")

    def done(self, *extra: str) -> None:
        """Raise every problem collected so far (this object and nested ones)."""
        self.check_unknown(*extra)
        if self.problems:
            raise InvalidRequest(*self.problems)


def read_number(f: Fields, name: str, *, low: float, high: float,
                required: bool = False) -> Decimal | None:
    """A JSON number (not a boolean, not a string) in ``[low, high]``, exactly as written."""
    if name not in f.obj or (f.obj[name] is None and not required):
        if required:
            f.problem(name, "required", f"{f.path(name)} is required")
        return None
    value = f.obj[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and not math.isfinite(value)):
        f.problem(name, "invalid_type", f"{f.path(name)} must be a number")
        return None
    try:
        exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:  # pragma: no cover - repr of a finite float always parses
        f.problem(name, "invalid_type", f"{f.path(name)} must be a number")
        return None
    if not low <= exact <= high:
        f.problem(name, "invalid_value", f"{f.path(name)} must be from {_number_text(low)} to "
                                         f"{_number_text(high)}")
        return None
    return exact


def _number_text(value: float) -> str:
    return f"{value:.0f}" if value == int(value) else f"{value}"
