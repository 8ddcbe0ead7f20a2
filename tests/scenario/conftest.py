"""Fixtures for the scenario tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """Write a file under ``tmp_path`` (creating folders) and answer its path."""
    def _write(name: str, text: str | bytes) -> Path:
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        return target
    return _write


#: Scenario files that must fail, run by the tests that name them; not collected as items.
collect_ignore = ["inputs"]
