"""The collector's pace while the engine runs: raised inside, the process's own after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from clearing_sim.sim.collector import YOUNG_THRESHOLD, paced_collector
from clearing_sim.sim.examples import example_world, redeem


@pytest.fixture
def own_threshold() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def test_the_young_threshold_is_raised_while_running_and_restored_after(
        own_threshold: tuple[int, int, int]) -> None:
    with paced_collector():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == own_threshold


def test_the_threshold_is_restored_when_the_run_raises(
        own_threshold: tuple[int, int, int]) -> None:
    with pytest.raises(RuntimeError), paced_collector():
        raise RuntimeError("a broken invariant")
    assert gc.get_threshold() == own_threshold


def test_a_higher_threshold_or_a_disabled_collector_is_left_alone(
        own_threshold: tuple[int, int, int]) -> None:
    gc.set_threshold(100_000, 5, 5)
    with paced_collector():
        assert gc.get_threshold() == (100_000, 5, 5)
    gc.set_threshold(*own_threshold)
    gc.disable()
    try:
        with paced_collector():
            assert gc.get_threshold() == own_threshold and not gc.isenabled()
    finally:
        gc.enable()


def test_a_threshold_changed_during_the_run_is_kept(
        own_threshold: tuple[int, int, int]) -> None:
    with paced_collector():
        gc.set_threshold(5_000, 10, 10)
    assert gc.get_threshold() == (5_000, 10, 10)


def test_a_world_runs_with_the_paced_collector_and_gives_it_back(
        own_threshold: tuple[int, int, int]) -> None:
    cast = example_world(seed=3)
    cast.world.initiate(cast.member.id, redeem(cast.asset(1), "10.00"))
    seen: list[tuple[int, int, int]] = []  # at each state change the saga makes
    cast.world.log.listen(lambda _: seen.append(gc.get_threshold()), "transaction.state")
    cast.world.run_all()
    cast.world.advance(1_000)
    assert seen and set(seen) == {(YOUNG_THRESHOLD, 10, 10)}
    assert gc.get_threshold() == own_threshold
