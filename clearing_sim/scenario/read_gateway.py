"""Reading an issuer's world-file ``gateway``: its TLS files, found where the file says.

Public names: ``TLS_FILE_FIELDS``, ``read_gateway``.

``caFile``, ``clientCert`` and ``clientKey`` name files on this host. A relative path is read
from the folder of the world (or scenario) file that names it, as a user who keeps
``world.yaml`` beside its ``certs/`` expects, whatever folder ``clearing-sim serve`` is
started from; an absolute path is kept. Each file must exist and be readable now: otherwise
the problem is reported at its field's line (exit 2 at the command line), rather than as a
TLS failure at the first call (docs/semantics.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clearing_sim.scenario.reading import Reader
from clearing_sim.scenario.source import FieldPath

__all__ = ["TLS_FILE_FIELDS", "read_gateway"]

#: the gateway fields that name a file on this host
TLS_FILE_FIELDS = ("caFile", "clientCert", "clientKey")
_SHOWN_MAX = 200


def _folder(r: Reader) -> Path | None:
    """The folder of the file being read; None when the text did not come from a file."""
    try:
        source = Path(r.document.path)
        return source.resolve().parent if source.is_file() else None
    except (OSError, ValueError):
        return None


def _problem(file: Path) -> str | None:
    """Why ``file`` cannot be used as a TLS file; None when it is a readable file."""
    if "\x00" in str(file):
        return "is not a usable path (it holds a NUL character)"
    try:
        if not file.exists():
            return "no such file"
        if not file.is_file():
            return "is not a file"
        with file.open("rb") as handle:
            handle.read(1)
    except ValueError as error:  # pragma: no cover - NUL is caught above
        return f"is not a usable path ({error})"
    except OSError as error:
        return f"cannot be read ({error.strerror or type(error).__name__})"
    return None


def _resolved(r: Reader, value: str, field: FieldPath, folder: Path | None) -> str | None:
    given = Path(value)
    file = given if given.is_absolute() or folder is None else folder / given
    problem = _problem(file)
    if problem is None:
        return str(file)
    where = "" if given.is_absolute() or folder is None \
        else f" (a relative path is read from the world file's folder, {folder})"
    r.report(field, f"{str(file)[:_SHOWN_MAX]!r}: {problem}{where}; expected a readable "
                    "PEM file on this host")
    return None


def read_gateway(r: Reader, raw: dict[str, Any], path: FieldPath) \
        -> tuple[tuple[str, str | int], ...]:
    """The issuer's ``gateway`` fields (wire names, sorted), TLS file paths resolved."""
    gateway = dict(r.get(raw, path, "gateway") or {})
    folder: list[Path | None] = []  # the file system asked only where a file is named
    for name in TLS_FILE_FIELDS:
        value = gateway.get(name)
        if isinstance(value, str) and not r.broken((*path, "gateway", name)):
            folder = folder or [_folder(r)]
            resolved = _resolved(r, value, (*path, "gateway", name), folder[0])
            if resolved is not None:
                gateway[name] = resolved
    return tuple(sorted(gateway.items()))
