"""Stopping a long command cleanly: SIGTERM is handled as Ctrl-C is.

Public names: ``Terminated``, ``sigint_ignored``, ``term_as_interrupt``.

``kill PID``, a service manager or a CI runner cancelling a job sends SIGTERM, whose default
action ends the process on the spot: a sweep would print no resume command and the shim no
closing digest. Inside ``term_as_interrupt`` SIGTERM raises ``Terminated``, a
``KeyboardInterrupt``, so whatever stops cleanly on Ctrl-C stops the same way on it; the
exit code can still tell them apart (130 for Ctrl-C, 143 for SIGTERM, as a shell reports
them). A process that a shell without job control started in the background inherits SIGINT
ignored: Ctrl-C never reaches it (``sigint_ignored``), and SIGTERM is the way to stop it.
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


@contextmanager
def term_as_interrupt() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` inside the block; the handler before it is put back."""
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def sigint_ignored() -> bool:
    """Whether this process ignores SIGINT (Ctrl-C cannot stop it)."""
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN
