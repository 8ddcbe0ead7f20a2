"""jsonschema, imported without the optional format checkers the package never uses.

Public names: ``Draft202012Validator``, ``ValidationError``.

``import jsonschema`` imports, whenever they are installed, the packages its optional format
checkers use (``jsonschema/_format.py``): ``rfc3987_syntax`` (it builds a grammar: about 2 s
on this machine, which every ``clearing-sim`` start paid), ``isoduration`` (which brings
``arrow`` and ``dateutil``), ``rfc3986_validator``, ``idna``, ``webcolors`` and the others
below (together about a tenth of ``clearing-sim run``'s imports, issue 30). clearing_sim's
schemas validate no formats (no ``FormatChecker``), so while jsonschema is first imported
here, each of those not yet imported is made unimportable (a ``None`` entry in
``sys.modules``: jsonschema skips that checker on the ``ImportError``, as when it is not
installed); the entries are removed right after, so anything else in the process imports
them as usual.
"""

from __future__ import annotations

import sys

#: the optional imports of ``jsonschema._format``, each only for a format checker
_FORMAT_ONLY = ("fqdn", "idna", "isoduration", "jsonpointer", "rfc3339_validator",
                "rfc3986_validator", "rfc3987", "rfc3987_syntax", "uri_template", "webcolors")
_blocked = [] if "jsonschema" in sys.modules else [
    name for name in _FORMAT_ONLY if name not in sys.modules]
for _name in _blocked:
    sys.modules[_name] = None  # type: ignore[assignment]
try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
finally:
    for _name in _blocked:
        if _name in sys.modules and sys.modules[_name] is None:
            del sys.modules[_name]

__all__ = ["Draft202012Validator", "ValidationError"]
