"""The saga's Burning step as ``details`` show it (spec, the full path and States rule 3):
the chain state a finished leg leaves is true from the instant of its proof-backed event,
and the last leg's state comes with the step's completion, in one change."""

from __future__ import annotations

from clearing_sim.domain.saga import StepName, StepStatus
from clearing_sim.domain.transaction import ChainState
from clearing_sim.sim.examples import Cast, swap

from .simkit import step_until


def test_a_swap_is_burned_while_its_mint_runs_and_minted_when_burning_is_done(
        cast: Cast) -> None:
    """Mode 3 burn, then the Mode 1 mint co-signed by the service: ``Burned`` while the mint
    is on its way; ``Minted`` with the Burning step done at the instant of ``Minted``."""
    world = cast.world
    tx = world.initiate(cast.member.id, swap(cast.asset(3), cast.asset(1), "10.00"))
    burned = step_until(world, "saga.event", transactionId=tx.id, event="Burned")
    during = world.transactions[tx.id]
    assert (during.chain, during.updated_at_ms) == (ChainState.BURNED, burned.at_ms)
    assert during.saga.current.name is StepName.BURNING
    minted = step_until(world, "saga.event", transactionId=tx.id, event="Minted")
    after = world.transactions[tx.id]
    burning = after.saga.steps[after.saga.current_index - 1]
    assert (after.chain, after.updated_at_ms) == (ChainState.MINTED, minted.at_ms)
    assert (burning.name, burning.status, burning.happened_at_ms) == \
        (StepName.BURNING, StepStatus.DONE, minted.at_ms)
    assert after.saga.current.name is StepName.SETTLED
    world.run_all()
    assert world.transactions[tx.id].lifecycle_status.value == "settled"
