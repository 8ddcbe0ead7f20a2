"""Fixtures for the simulation tests: the example cast (one member, one issuer per mode)."""

from __future__ import annotations

import pytest

from clearing_sim.sim.examples import Cast, example_world


@pytest.fixture
def cast() -> Cast:
    """``example_world(0)``: Northbank and one issuer per settlement mode."""
    return example_world(0)
