"""The garbage collector's pace while the engine runs.

Public names: ``paced_collector``, ``YOUNG_THRESHOLD``.

A run allocates a few hundred container objects per transaction (events, generators' frames,
records, frozen values), nearly all freed at once by reference counting. CPython still counts
them and collects the young generation every 700 net allocations, and every tenth or
hundredth of those collections scans the older generations too: over a run that keeps its
log in memory those full scans walk every record so far, again and again. While the engine
runs, the young generation's threshold is raised (the older generations keep their ratios),
so the collector runs about 30 times less often; cyclic garbage is still collected, only in
larger batches. The process's own setting comes back when the run returns; a threshold
somebody raised higher (or a collector switched off) is left as it is.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_THRESHOLD", "paced_collector"]

#: Net container allocations between two young collections while the engine runs (CPython's
#: default is 700).
YOUNG_THRESHOLD = 20_000


@contextmanager
def paced_collector() -> Iterator[None]:
    before = gc.get_threshold()
    if not gc.isenabled() or before[0] == 0 or before[0] >= YOUNG_THRESHOLD:
        yield
        return
    gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        if gc.get_threshold()[0] == YOUNG_THRESHOLD:  # nobody changed it meanwhile
            gc.set_threshold(*before)
