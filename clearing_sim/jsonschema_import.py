"""jsonschema, imported without the optional IRI format checker the package never uses.

Public names: ``Draft202012Validator``, ``ValidationError``.

``import jsonschema`` imports ``rfc3987_syntax`` whenever it is installed (it comes with
``jsonschema[format-nongpl]``, e.g. through jupyter-events in ``.[dev]``), only to check the
``iri`` format; importing it builds a grammar and takes about 2 s on this machine, which every
``clearing-sim`` start paid. clearing_sim's schemas validate no formats (no
``FormatChecker``), so while jsonschema is first imported here, ``rfc3987_syntax`` is made
unimportable (a ``None`` entry in ``sys.modules``: jsonschema skips the checker on the
``ImportError``, as when it is not installed); the entry is removed right after, so anything
else in the process imports it as usual.
"""

from __future__ import annotations

import sys

_SLOW = "rfc3987_syntax"
_blocked = _SLOW not in sys.modules and "jsonschema" not in sys.modules
if _blocked:
    sys.modules[_SLOW] = None  # type: ignore[assignment]
try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
finally:
    if _blocked and _SLOW in sys.modules and sys.modules[_SLOW] is None:
        del sys.modules[_SLOW]

__all__ = ["Draft202012Validator", "ValidationError"]
