"""Stopping a long command (``commands.stopping``): SIGTERM as Ctrl-C, and both deliverable
however the process was started (docs/semantics.md, the ``serve`` and ``sweep`` rows). The
sweep's own cases are in tests/analysis/test_cli.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from clearing_sim.commands.stopping import Terminated, term_as_interrupt

ROOT = Path(__file__).resolve().parents[1]
BOTH = {signal.SIGINT, signal.SIGTERM}


@pytest.fixture
def both_blocked() -> Iterator[None]:
    """This thread's signal mask blocks SIGINT and SIGTERM for the test, then is put back;
    a signal the test left pending is taken first, so that it cannot end the test run."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, BOTH)
    try:
        yield
    finally:
        while signal.sigtimedwait(BOTH, 0) is not None:
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@pytest.mark.usefixtures("both_blocked")
def test_inside_term_as_interrupt_both_signals_are_deliverable_and_the_mask_comes_back() -> None:
    handler = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), term_as_interrupt():
        assert not BOTH & signal.pthread_sigmask(signal.SIG_BLOCK, [])
        signal.raise_signal(signal.SIGTERM)  # runs the handler before it returns
        raise AssertionError("SIGTERM did not raise Terminated")
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) >= BOTH
    assert signal.getsignal(signal.SIGTERM) is handler


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_a_server_that_inherits_its_stopping_signals_blocked_still_stops_on_them(
        tmp_path: Path, stop: signal.Signals) -> None:
    """docs/semantics.md: serve stops on SIGTERM as on Ctrl-C, printing the virtual time and
    the digest. A signal mask survives fork and exec, so a server can be started with both
    blocked (a supervisor spawning from a thread that blocks them); before, the signal then
    stayed pending and the server ran on: the fixture's SIGINT always ended in its SIGKILL."""
    blocked = {signal.SIGINT, signal.SIGTERM}
    process = subprocess.Popen(
        [sys.executable, "-m", "clearing_sim.cli", "serve", "--port", "0", "--clock", "manual"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, blocked))
    try:
        assert process.stdout is not None
        assert "manual clock" in process.stdout.readline()
        process.send_signal(stop)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "clearing-sim stopped at virtual 2026-01-01T00:00:00.000Z, digest " in out, out


@pytest.mark.usefixtures("both_blocked")
def test_a_signal_pending_while_blocked_is_raised_on_entering_and_everything_is_put_back() -> None:
    """SIGTERM sent while blocked is raised as ``term_as_interrupt`` lifts the block, before
    its block runs; the handler and the mask are still put back (a caller in a test suite
    keeps its own)."""
    handler = signal.getsignal(signal.SIGTERM)
    signal.raise_signal(signal.SIGTERM)  # blocked: pending
    assert signal.SIGTERM in signal.sigpending()
    ran = False
    with pytest.raises(Terminated), term_as_interrupt():
        ran = True
    assert not ran
    assert signal.getsignal(signal.SIGTERM) is handler
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) >= BOTH
