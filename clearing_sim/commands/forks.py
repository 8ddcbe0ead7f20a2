"""Work split over forked processes, each answering its parent as it goes.

Public names: ``ChildFailed``, ``Forks``, ``Link``, ``can_fork``, ``default_jobs``.

``Forks(shares, work)`` forks one child per share. A child runs ``work(share, link)`` on the
memory it was forked with (nothing is imported again, nothing of the work is pickled), sends
what it has to say with ``link.send(obj)`` and hears its parent with ``link.receive()``; the
parent reads the children's messages in the order they arrive with ``messages()`` and speaks
to every child with ``tell(obj)``. Messages are pickles, each behind its length.

A child ends with ``os._exit``: neither the parent's ``atexit`` hooks nor its open files'
buffers run twice. A child whose work raises sends its exception with its traceback as text,
and ``messages()`` raises it in the parent, caused by a ``ChildFailed`` that carries the
child's traceback (the exception itself is ``ChildFailed`` when pickle cannot carry it); a
child that dies without a word is ``ChildFailed``. ``close()`` (also on leaving a ``with``) kills
children still running and reaps every one.

Forking is offered only where it is safe: a POSIX system other than macOS (whose system
libraries may not survive a fork) and a process with one thread (a fork copies only the
thread that forks, with whatever locks the others held).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import signal
import struct
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["ChildFailed", "Forks", "Link", "can_fork", "default_jobs"]

Share = TypeVar("Share")

_LENGTH = struct.Struct("!Q")
_FAILED = "__forks_failed__"


class ChildFailed(RuntimeError):
    """A child that died without finishing its work, or whose exception could not be
    pickled (its traceback is the message)."""


def can_fork() -> bool:
    """Whether this process may fork workers (see the module's notes)."""
    return (hasattr(os, "fork") and sys.platform != "darwin"
            and threading.active_count() == 1)


def default_jobs() -> int:
    """The processors this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


def _read_exactly(descriptor: int, size: int) -> bytes | None:
    """``size`` bytes, or None at the end of the stream."""
    chunks = []
    while size:
        chunk = os.read(descriptor, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


class Link:
    """A child's two pipes to its parent."""

    def __init__(self, to_parent: int, from_parent: int) -> None:
        self._out = to_parent
        self._in = from_parent

    def send(self, message: object) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(self._out, _LENGTH.pack(len(data)) + data)

    def receive(self) -> Any:
        """The parent's next word; ``None`` when the parent has gone."""
        head = _read_exactly(self._in, _LENGTH.size)
        if head is None:
            return None
        body = _read_exactly(self._in, _LENGTH.unpack(head)[0])
        return None if body is None else pickle.loads(body)


class _Child:
    def __init__(self, pid: int, reads: int, writes: int) -> None:
        self.pid = pid
        self.reads = reads  # its messages
        self.writes = writes  # our words to it
        self.buffer = bytearray()
        self.done = False


class Forks(Generic[Share]):
    """One forked child per share, each running ``work(share, link)``."""

    def __init__(self, shares: Sequence[Share], work: Callable[[Share, Link], None]) -> None:
        self._children: list[_Child] = []
        for stream in (sys.stdout, sys.stderr):  # else a child's flush prints it again
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            for share in shares:
                self._children.append(self._fork(share, work))
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _fork(share: Share, work: Callable[[Share, Link], None]) -> _Child:
        up_read, up_write = os.pipe()
        down_read, down_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(up_read)
            os.close(down_write)
            _child_main(share, work, Link(up_write, down_read))
        os.close(up_write)
        os.close(down_read)
        return _Child(pid, up_read, down_write)

    def messages(self) -> Iterator[tuple[int, Any]]:
        """(child's index, message), as they arrive, until every child has finished."""
        for index, child in enumerate(self._children):  # what came before the last call ended
            for message in self._framed(child):
                yield index, message
        with selectors.DefaultSelector() as selector:
            for index, child in enumerate(self._children):
                if not child.done:
                    selector.register(child.reads, selectors.EVENT_READ, index)
            while selector.get_map():
                for key, _ in selector.select():
                    index = key.data
                    child = self._children[index]
                    chunk = os.read(child.reads, 1 << 16)
                    if not chunk:
                        selector.unregister(child.reads)
                        self._finish(child)
                        continue
                    child.buffer += chunk
                    for message in self._framed(child):
                        yield index, message

    @staticmethod
    def _framed(child: _Child) -> Iterator[Any]:
        while len(child.buffer) >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(child.buffer)
            if len(child.buffer) < _LENGTH.size + size:
                return
            body = bytes(child.buffer[_LENGTH.size:_LENGTH.size + size])
            del child.buffer[:_LENGTH.size + size]
            message = pickle.loads(body)
            if isinstance(message, tuple) and message and message[0] == _FAILED:
                _, error, trace = message
                raise (error or ChildFailed(trace)) from ChildFailed(trace)
            yield message

    def _finish(self, child: _Child) -> None:
        child.done = True
        _, status = os.waitpid(child.pid, 0)
        child.pid = 0
        if os.waitstatus_to_exitcode(status) != 0:
            raise ChildFailed(f"a worker ended with status {os.waitstatus_to_exitcode(status)}"
                              " without finishing its work")

    def tell(self, message: object) -> None:
        """Send ``message`` to every child still running."""
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        for child in self._children:
            if not child.done:
                with contextlib.suppress(BrokenPipeError):  # it has ended: its pipe says how
                    _write_all(child.writes, _LENGTH.pack(len(data)) + data)

    def close(self) -> None:
        """Kill the children still running; reap every one; close every pipe."""
        for child in self._children:
            if child.pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGKILL)
                os.waitpid(child.pid, 0)
                child.pid = 0
            for descriptor in (child.reads, child.writes):
                with contextlib.suppress(OSError):
                    os.close(descriptor)
        self._children = []

    def __enter__(self) -> Forks[Share]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _child_main(share: Share, work: Callable[[Share, Link], None], link: Link) -> None:
    code = 0
    try:
        work(share, link)
    except KeyboardInterrupt:
        code = 130  # the parent hears of it from its own terminal
    except BaseException as error:  # everything goes to the parent
        code = 1
        trace = "a worker failed:\n" + "".join(traceback.format_exception(error))
        try:
            link.send((_FAILED, error, trace))
        except Exception:  # one pickle cannot carry: its text
            link.send((_FAILED, None, trace))
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream has nothing to flush
                stream.flush()
        os._exit(code)
