"""The served process's heap: a world that only grows is kept out of full collections.

Public names: ``release``, ``settle``.

A served world keeps everything it made (transactions, saga processes, log records), so
after a few thousand transactions the heap holds about a million objects, and each of
CPython's full (generation 2) collections walks all of them while holding the event loop:
2.8 s in one slice of a 366-day advance over 12,000 transactions, a read waiting 4 s
(issue 14, finding 8). ``settle()``, called by the clock when an operator's advance starts
and between its slices, at most every 0.25 s, when it needs more than one (a realtime tick
does not call it),
collects the young generations (the slice's own short-lived cycles) and then freezes what
survives (``gc.freeze``): the world's objects move to the permanent generation, which no
collection walks, so the next full collection walks only what was made since. Reference
counting still frees everything that is not in a cycle. ``release()`` undoes it when the
world is replaced (reset, rewind, restart by replay): it unfreezes and collects once, so
the old world's cycles are freed (one pause, at an operator's reset, not at a read).

Nothing here touches the world or its log: only when memory is reclaimed, never what
happens, so digests are unchanged.
"""

from __future__ import annotations

import gc

__all__ = ["release", "settle"]

_YOUNG = 1  # generations 0 and 1: what a slice or a request made and dropped


def settle() -> None:
    """Collect what the last slice dropped; take what survives out of full collections."""
    gc.collect(_YOUNG)
    gc.freeze()


def release() -> None:
    """Give every frozen object back to the collector and collect: the world was replaced,
    and the old one's cycles must be freed."""
    gc.unfreeze()
    gc.collect()
