"""Compact JSON text, with the standard library's encoder made once per form.

Public names: ``compact_encoder``.

``json.dumps(value, sort_keys=..., separators=(",", ":"))`` builds a ``JSONEncoder`` and,
inside it, a C encoder on every call; the engine encodes a log line per record and a body
per webhook, so each form's C encoder is made once here. The text is the one ``json.dumps``
gives with the same options, byte for byte (it is the same C encoder), except that values
are not checked for reference cycles: callers encode trees of JSON values.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _stdlib
from typing import Any

__all__ = ["compact_encoder"]


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
