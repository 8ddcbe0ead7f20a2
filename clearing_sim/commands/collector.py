"""The garbage collector set for a command that builds many short-lived worlds.

Public names: ``for_many_short_worlds``.

Importing the engine creates some hundred thousand objects that live as long as the process
(classes, functions, attrs' generated methods), and each scenario builds a world that is
dropped when it ends. With CPython's default thresholds the collector starts a young
collection every 700 new container objects, and an old one every 100 of those, walking the
imported objects each time. ``for_many_short_worlds()`` is a context: inside it the young
threshold is 50,000, and what exists is frozen (``gc.freeze``), again each time the function
it gives is called (after the imports). Collections still run, and still free cycles, but an
order of magnitude less often and without walking the imports; a forked worker (``run
--jobs``) shares those objects' pages instead of copying them when a collection would have
touched them. On leaving, the thresholds are restored and what was frozen is unfrozen (unless
something had frozen objects before), so a test suite that invokes a command in-process keeps
its collector as it was. ``run``, ``validate`` and ``timeline`` use it (``click``'s
``Context.with_resource``); the long-running commands (``serve``) keep CPython's defaults.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_THRESHOLD", "for_many_short_worlds"]

#: young collections every this many new container objects (CPython's default: 700)
YOUNG_THRESHOLD = 50_000


@contextmanager
def for_many_short_worlds() -> Iterator[Callable[[], None]]:
    """The collector set for short-lived worlds inside; the function freezes what exists."""
    thresholds = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    gc.freeze()
    try:
        yield gc.freeze
    finally:
        gc.set_threshold(*thresholds)
        if frozen_before == 0:
            gc.unfreeze()
