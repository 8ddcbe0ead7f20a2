"""The garbage collector while a command imports the scenario engine.

Public names: ``imports_frozen``.

Importing the engine makes some hundred thousand objects that live as long as the process
(classes, functions, attrs' generated methods). CPython collects the young generation every
700 new container objects, so the import alone runs a few hundred collections, each walking
objects that will never be garbage. ``imports_frozen()`` is a context: the collector is off
on entering; the function it gives turns it back on and freezes what exists (``gc.freeze``),
so later collections no longer walk the imports, and a forked worker (``run --jobs``) shares
their pages instead of copying them when a collection would have touched them. On leaving,
the collector is as it was and what was frozen is unfrozen (unless something had frozen
objects before), so a test suite that invokes a command in-process keeps its collector as it
was. ``run``, ``validate`` and ``timeline`` use it (``click``'s ``Context.with_resource``);
while the engine runs, ``sim.collector.paced_collector`` sets its pace.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["imports_frozen"]


@contextmanager
def imports_frozen() -> Iterator[Callable[[], None]]:
    """The collector off inside until the given function is called (see the module)."""
    enabled = gc.isenabled()
    frozen_before = gc.get_freeze_count()
    gc.disable()

    def imported() -> None:
        if enabled:
            gc.enable()
        gc.freeze()

    try:
        yield imported
    finally:
        if enabled:
            gc.enable()
        if frozen_before == 0:
            gc.unfreeze()
