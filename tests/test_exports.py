"""Every module's ``__all__`` names things that exist, once, in isort order (STYLE.md)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import clearing_sim

MODULES = sorted(m.name for m in pkgutil.walk_packages(clearing_sim.__path__, "clearing_sim."))


def _isort_key(name: str) -> tuple[int, str]:
    if name.isupper() or re.fullmatch(r"[A-Z0-9_]+", name):
        return (0, name)
    if name[0].isupper():
        return (1, name)
    return (2, name)


@pytest.mark.parametrize("module_name", MODULES)
def test_all_is_sorted_and_resolves(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    if exported is None:
        return
    assert len(set(exported)) == len(exported), f"duplicates in {module_name}.__all__"
    assert list(exported) == sorted(exported, key=_isort_key), f"{module_name}.__all__ unsorted"
    for name in exported:
        assert hasattr(module, name), f"{module_name}.__all__ names missing {name}"
