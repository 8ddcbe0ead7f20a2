"""Compact JSON text, with the standard library's encoder made once per form.

Public names: ``canonical_encoder``, ``compact_encoder``, ``ordered_encoder``.

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

__all__ = ["canonical_encoder", "compact_encoder", "ordered_encoder"]


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
