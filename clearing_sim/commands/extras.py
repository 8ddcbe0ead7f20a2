"""Optional parts of an installation: which extra brings which package, and a clear refusal.

Public names: ``EXTRAS``, ``MissingExtra``, ``require``.

The core install (``pip install clearing-sim``) runs scenario files, the pytest plugin and the
HTTP shim. The analysts' tools need the ``analysis`` extra (pandas, matplotlib, pyarrow),
sweeps on a Dask cluster the ``sweeps`` extra, the notebooks the ``notebooks`` extra; ``dev``
brings them all. A code path that needs an extra calls ``require`` first, so a missing package
is one sentence naming the extra and the command that installs it, not a traceback.
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRAS", "MissingExtra", "require"]

#: extra → the importable packages it brings (what ``require`` checks).
EXTRAS: dict[str, tuple[str, ...]] = {
    "analysis": ("pandas", "numpy", "matplotlib", "pyarrow"),
    "sweeps": ("dask", "distributed"),
    "notebooks": ("nbclient", "nbformat", "nbconvert", "ipykernel"),
}


class MissingExtra(ImportError):
    """A feature was asked for whose packages this installation lacks."""

    def __init__(self, extra: str, feature: str, missing: tuple[str, ...]) -> None:
        self.extra = extra
        self.missing = missing
        super().__init__(
            f"{feature} needs the '{extra}' extra ({', '.join(missing)} not installed): "
            f"python -m pip install 'clearing-sim[{extra}]' (or -e '.[{extra}]' in a clone)")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken stub
        return False


def require(extra: str, feature: str) -> None:
    """Raise ``MissingExtra`` unless every package of ``extra`` can be imported."""
    missing = tuple(m for m in EXTRAS[extra] if not _installed(m))
    if missing:
        raise MissingExtra(extra, feature, missing)
