"""Whether to colour what a command prints: only on a terminal, and never under ``NO_COLOR``.

Public names: ``colour_wanted``.

https://no-color.org: a ``NO_COLOR`` environment variable that is set and not empty turns
colour off, whatever the terminal.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["colour_wanted"]


def colour_wanted(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (standard output by default) is a terminal and NO_COLOR is unset."""
    if os.environ.get("NO_COLOR", ""):
        return False
    target = sys.stdout if stream is None else stream
    isatty = getattr(target, "isatty", None)
    return bool(isatty is not None and isatty())
