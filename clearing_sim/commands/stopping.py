"""Stopping a long command cleanly: SIGTERM is handled as Ctrl-C is.

Public names: ``Terminated``, ``sigint_ignored``, ``term_as_interrupt``.

``kill PID``, a service manager or a CI runner cancelling a job sends SIGTERM, whose default
action ends the process on the spot: a sweep would print no resume command and the shim no
closing digest. Inside ``term_as_interrupt`` SIGTERM raises ``Terminated``, a
``KeyboardInterrupt``, so whatever stops cleanly on Ctrl-C stops the same way on it; the
exit code can still tell them apart (130 for Ctrl-C, 143 for SIGTERM, as a shell reports
them). A process that a shell without job control started in the background inherits SIGINT
ignored: Ctrl-C never reaches it (``sigint_ignored``), and SIGTERM is the way to stop it.

A process can also inherit the two signals *blocked* (the signal mask survives ``fork`` and
``exec``: a supervisor that spawns from a thread blocking them for ``signalfd`` passes that on).
Blocked, a signal stays pending for ever: Ctrl-C and ``kill`` would be taken and nothing would
happen, with no word said. Unlike ignoring SIGINT, nobody blocks them to mean "do not stop":
``term_as_interrupt`` lifts the block on both for its block, in this thread (the one Python
runs signal handlers in), and puts the mask back after.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Terminated", "sigint_ignored", "term_as_interrupt"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's ``KeyboardInterrupt`` would be."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


#: the signals that stop a long command: deliverable inside ``term_as_interrupt``
_STOPPING = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def term_as_interrupt() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` inside the block, and neither it nor SIGINT is blocked
    there (see the module); the handler and the signal mask before it are put back."""
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    masks = hasattr(signal, "pthread_sigmask")  # POSIX; Windows has no signal mask
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, []) if masks else set()
    try:
        if masks:  # a signal pending while blocked is raised here, then all is put back
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
        yield
    finally:
        if masks:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGTERM, previous)


def sigint_ignored() -> bool:
    """Whether this process ignores SIGINT (Ctrl-C cannot stop it)."""
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN
