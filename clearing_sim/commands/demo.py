"""The demo run: every settlement mode and every path the spec names, on one world.

Public names: ``DemoCase``, ``CASES``, ``run_demo``.

Used by ``clearing-sim demo``: one example world, one transaction per case, run to the end;
each case reports its final state and the virtual time it took, and the run reports its
digest. The same seed gives the same digest on any machine.
"""

from __future__ import annotations

from attrs import frozen

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.transaction import Transaction
from clearing_sim.sim.examples import example_world, redeem, swap
from clearing_sim.sim.world import World

__all__ = ["CASES", "DemoCase", "DemoResult", "run_demo"]


@frozen
class DemoCase:
    name: str
    source_mode: int
    target_mode: int | None = None  # None: a redeem
    outcome: Outcome | None = None
    cancel_after_ms: int | None = None
    resolve: bool = False


CASES = (
    DemoCase("redeem mode 1 happy", 1),
    DemoCase("redeem mode 2 happy", 2),
    DemoCase("redeem mode 3 happy", 3),
    DemoCase("swap mode 2 -> mode 3", 2, 3),
    DemoCase("swap mode 3 -> mode 1", 3, 1),
    DemoCase("redeem mode 1 cancelled at Lock", 1, cancel_after_ms=300),
    DemoCase("redeem mode 2 rejected (unwound)", 2, outcome=Outcome.REJECTED),
    DemoCase("redeem mode 3 rejected (refunded)", 3, outcome=Outcome.REJECTED),
    DemoCase("redeem mode 2 failed (parked)", 2, outcome=Outcome.FAILED),
    DemoCase("redeem mode 3 silence (parked at SLA)", 3, outcome=Outcome.SILENCE),
    DemoCase("redeem mode 2 silence, operator fix", 2, outcome=Outcome.SILENCE, resolve=True),
)


@frozen
class DemoResult:
    case: DemoCase
    transaction: Transaction


def run_demo(seed: int = 0) -> tuple[World, list[DemoResult]]:
    cast = example_world(seed)
    world = cast.world
    started: list[tuple[DemoCase, str]] = []
    for i, case in enumerate(CASES):
        ref = f"DEMO-{i + 1:02d}"
        if case.target_mode is None:
            request = redeem(cast.asset(case.source_mode), "100.00", ref)
        else:
            request = swap(cast.asset(case.source_mode), cast.asset(case.target_mode),
                           "100.00", ref)
        tx = world.initiate(cast.member.id, request)
        if case.outcome is not None:
            world.arm(tx.id, case.outcome)
        started.append((case, tx.id))
    for case, tx_id in started:
        if case.cancel_after_ms is not None:
            world.run_until(case.cancel_after_ms)
            world.cancel(tx_id)
    world.run_all()
    for case, tx_id in started:
        if case.resolve and world.transactions[tx_id].parked:
            world.resolve(tx_id)
    world.run_all()
    return world, [DemoResult(case, world.transactions[tx_id]) for case, tx_id in started]
