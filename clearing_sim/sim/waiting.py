"""Running a world to the first instant a condition holds, or to a deadline.

Public names: ``Wait``, ``idle``, ``terminal``.

One loop for every door that waits: the scenario files' ``wait_until`` and the shim's
``POST /sim/v1/clock/advance`` (``http/clock.py``, which runs it in slices and pauses for
real parties, so it asks ``Wait.next_ms`` at each whole instant instead of calling
``Wait.run``). The condition is judged between instants, never inside one: after every
event due at the current instant has run. So the world a wait stops in is the world a plain
advance to that instant leaves, and a condition that already holds costs nothing.

A wait without a condition is a plain advance to its deadline (``met`` once it is there).
With ``poll_ms`` the condition is judged every ``poll_ms`` instead of after each instant
that has events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["Wait", "idle", "terminal"]


class Wait:
    """Until ``holds()`` (judged at each whole instant), at most to ``deadline_ms``.

    ``met``: ``None`` while it runs; then whether the condition held (a plain advance: whether
    it reached its deadline, which it always does)."""

    def __init__(self, world: World, deadline_ms: int,
                 holds: Callable[[], bool] | None = None, poll_ms: int | None = None) -> None:
        self.world = world
        self.deadline_ms = deadline_ms
        self.holds = holds
        self.poll_ms = poll_ms
        self.met: bool | None = None

    def next_ms(self) -> int | None:
        """With the current instant whole: ``None`` when the wait is over (``met`` says why),
        else the instant to run the world to next (every event due up to and including it)."""
        world = self.world
        if self.holds is not None and self.holds():
            self.met = True
            return None
        if world.now_ms >= self.deadline_ms:
            self.met = self.holds is None
            return None
        following = (world.now_ms + self.poll_ms if self.poll_ms is not None
                     else world.env.peek())
        return int(min(following, self.deadline_ms))

    def run(self) -> bool:
        """Run the world until the wait is over, in one go; whether the condition held."""
        while (at_ms := self.next_ms()) is not None:
            self.world.run_until(at_ms)
        return bool(self.met)


def terminal(world: World, transaction_id: str) -> Callable[[], bool]:
    """The transaction is ``terminal`` (spec: it "will not change without action outside
    the API"; a parked one is). Gone from the book counts: a ``forget_terminal`` world
    forgets a transaction only once it is terminal."""

    def holds() -> bool:
        tx = world.transactions.get(transaction_id)
        return tx is None or tx.terminal

    return holds


def idle(world: World) -> bool:
    """Nothing left to move by itself: no saga still running (a terminal transaction's saga
    may still be at work, a Mode 3 refund after parking) and no webhook delivery left to
    attempt. Engine events still due that belong to neither (a poll or SLA timer whose answer
    came) are not waited for. A count the sagas keep (``World.running_sagas``), not a walk
    over them."""
    return not world.webhooks.busy and world.running_sagas.count == 0
