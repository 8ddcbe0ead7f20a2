"""JSON text: compact encoders made once per form, and the one decoder for text from outside.

Public names: ``canonical_encoder``, ``compact_encoder``, ``ordered_encoder``,
``decode_strict``, ``parse_untrusted``, ``JSONRefused``, ``DEPTH_MAX``, ``INT_DIGITS_MAX``.

Decoding. Every JSON text that comes from outside the process (a request body, a real
issuer's answer or webhook, a receiver's answer, a token endpoint's answer, a journal line)
is read by ``decode_strict`` (the service's request bodies, which then check strings too) or
``parse_untrusted`` (everything else). Both refuse ``NaN``/``Infinity``, a byte-order mark,
duplicate member names and integers of more than ``INT_DIGITS_MAX`` digits; ``parse_untrusted``
also refuses invalid UTF-8 and nesting deeper than ``DEPTH_MAX``, and turns the standard
decoder's ``RecursionError`` (a few thousand ``[``: under any size bound) into the same
``JSONRefused``, a ``ValueError``. So a caller that catches ``ValueError`` has seen every way
the text can fail, which ``json.loads`` does not give (``tests/test_untrusted_json.py`` keeps
``json.loads`` and ``.json()`` out of the package's doors).

``json.dumps(value, sort_keys=..., separators=(",", ":"))`` builds a ``JSONEncoder`` and,
inside it, a C encoder on every call; the engine encodes a log line per record and a body
per webhook, so each form's C encoder is made once here. The text is the one ``json.dumps``
gives with the same options, byte for byte (it is the same C encoder), except that values
are not checked for reference cycles: callers encode trees of JSON values.

``canonical_encoder`` makes the event log's canonical form (sorted keys, no spaces, UTF-8)
with msgspec's C encoder, about eleven times faster than the standard library's per record:
the same bytes as ``json.dumps(value, sort_keys=True, ensure_ascii=False,
separators=(",", ":")).encode()`` for every tree of strings, integers (of any size), booleans,
None, lists and dicts with string keys (a Hypothesis test compares them). Floats are the one
difference (msgspec writes ``1e16`` and ``0.00001`` where ``json`` writes ``1e+16`` and
``1e-05``, and ``null`` for NaN): the log holds none (amounts are decimal strings, times
integer milliseconds; a test scans the scenario library's and a workload's records). A value
msgspec refuses (a type it does not know) goes through the standard library's encoder, so
the answer, or the error, is the one ``json.dumps`` gives. ``ordered_encoder`` is the same
without sorting (members in the dict's order), for bodies that hold no float.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _stdlib
from typing import Any

import msgspec

__all__ = ["DEPTH_MAX", "INT_DIGITS_MAX", "JSONRefused", "canonical_encoder",
           "compact_encoder", "decode_strict", "ordered_encoder", "parse_untrusted"]

DEPTH_MAX = 32  # nested arrays and objects; the deepest body of the spec has 4
INT_DIGITS_MAX = 30  # far past any count the API takes, far below Python's 4,300


def compact_encoder(*, sort_keys: bool, ensure_ascii: bool) -> Callable[[Any], str]:
    """``lambda value: json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
    separators=(",", ":"))``, made once."""
    reference = json.JSONEncoder(sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                                 separators=(",", ":"))
    make = getattr(_stdlib, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython has the C accelerator
        return reference.encode
    strings = _stdlib.encode_basestring_ascii if ensure_ascii else _stdlib.encode_basestring
    run = make(None, reference.default, strings, None, ":", ",", sort_keys, False, True)

    def encode(value: Any) -> str:
        return "".join(run(value, 0))

    return encode


def canonical_encoder() -> Callable[[Any], bytes]:
    """``lambda value: json.dumps(value, sort_keys=True, ensure_ascii=False,
    separators=(",", ":")).encode()`` for the log's values, by msgspec (see the module)."""
    return _by_msgspec(sort_keys=True)


def ordered_encoder() -> Callable[[Any], bytes]:
    """``lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()``
    (members in the dict's order) by msgspec, for values without floats, as
    ``canonical_encoder``: webhook bodies and the workload driver's request bodies."""
    return _by_msgspec(sort_keys=False)


def _by_msgspec(*, sort_keys: bool) -> Callable[[Any], bytes]:
    fast = msgspec.json.Encoder(order="sorted" if sort_keys else None).encode
    slow = compact_encoder(sort_keys=sort_keys, ensure_ascii=False)

    def encode(value: Any) -> bytes:
        try:
            return fast(value)
        except (TypeError, msgspec.EncodeError):  # a type msgspec does not know
            return slow(value).encode()

    return encode


class JSONRefused(ValueError):
    """A text that is not JSON, or JSON the project does not read; ``param`` where it is
    (a member's path, when known) and ``code`` (the API's error code for it)."""

    def __init__(self, message: str, param: str | None = None,
                 code: str = "malformed_json") -> None:
        super().__init__(message)
        self.param = param
        self.code = code


def _no_constants(name: str) -> Any:
    raise JSONRefused(f"{name} is not JSON")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > INT_DIGITS_MAX:
        raise JSONRefused(f"an integer has more than {INT_DIGITS_MAX} digits")
    return int(text)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise JSONRefused(f"the member name {name[:40]!r} appears twice in one object")
        found[name] = value
    return found


#: ``json.loads(text, parse_constant=..., parse_int=..., object_pairs_hook=...)`` builds
#: this decoder (and its scanner) on every call: made once
_decoder = json.JSONDecoder(parse_constant=_no_constants, parse_int=_bounded_int,
                            object_pairs_hook=_no_duplicates)


def decode_strict(text: str) -> Any:
    """``json.loads(text)`` with the refusals of the module docstring: the same value, or
    ``json.JSONDecodeError``, ``JSONRefused`` or ``RecursionError`` (nesting past the
    interpreter's limit: ``parse_untrusted`` turns it into ``JSONRefused``)."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _decoder.decode(text)


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` levels, iteratively."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth >= limit:
                return True
            stack.extend((member, depth + 1) for member in item
                         if isinstance(member, dict | list))
    return False


def parse_untrusted(raw: bytes | str, *, depth_max: int = DEPTH_MAX) -> Any:
    """The value of a JSON text from outside; ``JSONRefused`` (a ``ValueError``) for every
    way it can fail: not UTF-8, not JSON, a refusal of ``decode_strict``, nesting past
    ``depth_max``. The size is the caller's to bound (it read the text)."""
    try:
        text = raw if isinstance(raw, str) else raw.decode("utf-8")
        value = decode_strict(text)
    except JSONRefused:
        raise
    except UnicodeDecodeError as exc:
        raise JSONRefused(f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise JSONRefused(f"not JSON: {exc.msg} at character {exc.pos}") from None
    except (RecursionError, MemoryError):
        raise JSONRefused(f"nests arrays and objects more than {depth_max} levels deep") \
            from None
    except ValueError as exc:  # Python's own bound on an integer's digits, among others
        raise JSONRefused(f"not JSON: {str(exc)[:200]}") from None
    if isinstance(value, dict | list) and _depth_over(value, depth_max):
        raise JSONRefused(f"nests arrays and objects more than {depth_max} levels deep")
    return value
