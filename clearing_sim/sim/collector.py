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
from types import TracebackType

__all__ = ["YOUNG_THRESHOLD", "paced_collector"]

#: Net container allocations between two young collections while the engine runs (CPython's
#: default is 700).
YOUNG_THRESHOLD = 20_000


class paced_collector:  # lower case: the name of the context manager function it replaced
    """``with paced_collector():`` the young threshold raised inside, the process's own
    after. A class, not a ``contextmanager`` generator: a scenario's wait enters it once per
    instant (``World.run_until``), and the generator's frames cost more than the run of a
    quiet instant."""

    __slots__ = ("_before",)

    def __enter__(self) -> None:
        before = gc.get_threshold()
        if not gc.isenabled() or before[0] == 0 or before[0] >= YOUNG_THRESHOLD:
            self._before = None
            return
        self._before = before
        gc.set_threshold(YOUNG_THRESHOLD, *before[1:])

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        before = self._before
        if before is not None and gc.get_threshold()[0] == YOUNG_THRESHOLD:
            gc.set_threshold(*before)  # nobody changed it meanwhile
