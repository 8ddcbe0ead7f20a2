"""Progress bars for the analysts' long commands: on a terminal only, nothing when piped.

Public names: ``terminal_bar``.

``terminal_bar(label, length, describe)`` yields ``update(position, *facts)`` when standard
error is a terminal (a click progress bar whose text is ``describe(*facts)``) and ``None``
otherwise: click's bar, given a stream that is not a terminal, prints its label once as a
line of its own (a stray ``runs`` in a log or a pipe); so no bar is made at all there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import click

__all__ = ["terminal_bar"]

Update = Callable[..., None]


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


@contextmanager
def terminal_bar(label: str, length: int, describe: Callable[..., str] | None = None,
                 stream: TextIO | None = None) -> Iterator[Update | None]:
    """A bar of ``length`` steps on ``stream`` (standard error) if it is a terminal: yields
    ``update(position, *facts, total=None)`` (the bar's position, absolute; its text
    ``describe(*facts)``; ``total`` a new length),
    else ``None``."""
    target = sys.stderr if stream is None else stream
    if not _is_terminal(target):
        yield None
        return
    def text(facts: tuple[Any, ...] | None) -> str | None:
        return describe(*facts) if describe is not None and facts else None

    with click.progressbar(length=max(1, length), label=label, file=target,
                           show_pos=describe is None, item_show_func=text) as bar:
        def update(position: int, *facts: Any, total: int | None = None) -> None:
            if total is not None:
                bar.length = max(1, total)
            bar.update(max(0, min(position, bar.length or 1) - bar.pos), facts)

        yield update
