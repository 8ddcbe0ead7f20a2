"""Workload generators: SimPy processes that initiate transactions on a world.

Public names: ``poisson_redeems``.

Arrivals are Poisson (exponential gaps) from the world's ``workload`` stream, so a workload
is as reproducible as the rest of the run.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import simpy

from clearing_sim.sim.examples import Cast, redeem

__all__ = ["poisson_redeems"]


def poisson_redeems(cast: Cast, count: int, mean_gap_ms: int,
                    modes: Sequence[int] = (1, 2, 3),
                    amount: str = "10.00") -> Generator[simpy.Event, Any, None]:
    """Initiate ``count`` redeems, the mode of each drawn uniformly from ``modes``."""
    world = cast.world
    rng = world.streams.get("workload")
    for i in range(count):
        yield world.env.timeout(round(rng.expovariate(1.0 / mean_gap_ms)))
        mode = modes[rng.randrange(len(modes))]
        world.initiate(cast.member.id, redeem(cast.asset(mode), amount, f"WL-{i:06d}"))
