"""``clearing_sim.commands.forks``: work shared over forked children, each answering as it goes
(issue 30 §3: ``run --jobs``). A child's failure reaches the parent with its traceback; a child
that dies without a word is named; ``close`` leaves no child behind."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from clearing_sim.commands.forks import ChildFailed, Forks, Link, can_fork

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                                reason="forking is not offered on this system")


def _echo(share: list[int], link: Link) -> None:
    link.send(("ready", os.getpid()))
    word = link.receive()
    for number in share:
        link.send(number * word)


def test_each_child_works_on_its_share_in_its_own_process_and_hears_the_parent() -> None:
    with Forks([[1, 2], [3]], _echo) as forks:
        messages = forks.messages()
        ready = [next(messages), next(messages)]
        assert sorted(index for index, _ in ready) == [0, 1]
        pids = {message[1] for _, message in ready}
        assert os.getpid() not in pids and len(pids) == 2
        forks.tell(10)
        answers = sorted(messages)
    assert answers == [(0, 10), (0, 20), (1, 30)]


def _fails(share: list[int], link: Link) -> None:
    if share == [2]:
        raise ValueError("share two is wrong")
    link.send("fine")


def test_a_childs_exception_is_raised_in_the_parent_with_the_childs_traceback() -> None:
    with Forks([[1], [2]], _fails) as forks, pytest.raises(ValueError, match="share two") \
            as raised:
        list(forks.messages())
    cause = raised.value.__cause__
    assert isinstance(cause, ChildFailed)
    assert "in _fails" in str(cause) and "ValueError: share two is wrong" in str(cause)


class _Unpicklable(Exception):
    def __init__(self, handle: object) -> None:
        super().__init__("cannot travel")
        self.handle = handle

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("not picklable")


def _raises_unpicklable(share: list[int], link: Link) -> None:
    raise _Unpicklable(lambda: None)


def test_an_exception_pickle_cannot_carry_arrives_as_its_traceback() -> None:
    with Forks([[1]], _raises_unpicklable) as forks, pytest.raises(ChildFailed,
                                                                   match="_Unpicklable"):
        list(forks.messages())


def _dies(share: list[int], link: Link) -> None:
    link.send("about to die")
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_child_that_dies_without_a_word_is_child_failed() -> None:
    with Forks([[1]], _dies) as forks:
        messages = forks.messages()
        assert next(messages) == (0, "about to die")
        with pytest.raises(ChildFailed, match="without finishing"):
            next(messages)


def _sleeps(share: list[int], link: Link) -> None:
    link.send(os.getpid())
    time.sleep(600)


def test_close_kills_children_still_running_and_reaps_them() -> None:
    forks = Forks([[1], [2]], _sleeps)
    messages = forks.messages()
    pids = [next(messages)[1], next(messages)[1]]
    started = time.monotonic()
    forks.close()
    assert time.monotonic() - started < 5
    for pid in pids:
        with pytest.raises(ChildProcessError):  # reaped: no zombie left
            os.waitpid(pid, os.WNOHANG)


def test_forking_is_not_offered_while_another_thread_runs() -> None:
    """A fork copies only its own thread, with whatever locks the others held."""
    alone = threading.active_count() == 1
    assert can_fork() == alone
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not can_fork()
    finally:
        stop.set()
        thread.join()
    assert can_fork() == alone


def _prints(share: list[int], link: Link) -> None:
    print(f"child {share[0]}")
    link.send("printed")


def test_what_the_parent_printed_before_the_fork_is_printed_once() -> None:
    """A child inherits the parent's unflushed buffers and flushes its own on leaving."""
    import subprocess
    script = (
        "from clearing_sim.commands.forks import Forks\n"
        "from tests.test_forks import _prints\n"
        "print('parent before', end='\\n')\n"
        "with Forks([[1], [2]], _prints) as forks:\n"
        "    list(forks.messages())\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a pipe: buffered
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, cwd=os.path.dirname(os.path.dirname(__file__)), env=env)
    lines = done.stdout.splitlines()
    assert lines.count("parent before") == 1 and sorted(lines[1:]) == ["child 1", "child 2"]
