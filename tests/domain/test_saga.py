"""The saga's public view (spec, "Transaction (full form)": saga.steps, details.sagaStep;
step names of the full and cancelled paths)."""

from __future__ import annotations

import pytest

from clearing_sim.domain.saga import (
    IRREVOCABLE_STEP,
    Saga,
    SagaPath,
    Step,
    StepName,
    StepStatus,
)

N = StepName
DONE, CURRENT, PENDING, CANCELLED = (StepStatus.DONE, StepStatus.CURRENT, StepStatus.PENDING,
                                     StepStatus.CANCELLED)
FULL = ["Received", "Validated", "Lock", "Earmarked", "Burning", "Settled"]
CANCELLED_PATH = ["Received", "Validated", "Lock", "Earmarked", "Cancelled"]


def walk(saga: Saga, times: int, start_ms: int = 100) -> Saga:
    for i in range(times):
        saga = saga.complete_current(start_ms + i)
    return saga


def test_path_step_names() -> None:
    assert [n.value for n in SagaPath.FULL.names] == FULL
    assert [n.value for n in SagaPath.CANCELLED.names] == CANCELLED_PATH
    assert {s.value for s in StepStatus} == {"done", "current", "pending", "cancelled"}


def test_initiated_has_received_and_validated_done_and_lock_current() -> None:
    """Spec: saga steps Received and Validated done, Lock current in the initiation response."""
    saga = Saga.initiated(1_000)
    assert saga.path is SagaPath.FULL
    assert saga.total == 6
    assert saga.current_index == 2
    assert saga.current == Step(N.LOCK, CURRENT)
    assert saga.steps == (
        Step(N.RECEIVED, DONE, 1_000), Step(N.VALIDATED, DONE, 1_000), Step(N.LOCK, CURRENT),
        Step(N.EARMARKED, PENDING), Step(N.BURNING, PENDING), Step(N.SETTLED, PENDING))


def test_complete_current_walks_the_full_path_to_settled_done() -> None:
    saga = Saga.initiated(0)
    for expected_index, name in enumerate(FULL[3:], start=3):
        saga = saga.complete_current(expected_index * 10)
        assert saga.current_index == expected_index
        assert saga.current.name.value == name
        assert saga.current.status is CURRENT
        assert saga.steps[expected_index - 1].status is DONE
        assert saga.steps[expected_index - 1].happened_at_ms == expected_index * 10
    saga = saga.complete_current(999)
    assert saga.current_index == 5
    assert saga.current == Step(N.SETTLED, DONE, 999)
    assert all(s.status is DONE and s.happened_at_ms is not None for s in saga.steps)
    assert saga.total == 6


def test_complete_current_refuses_a_saga_without_a_current_step() -> None:
    finished = walk(Saga.initiated(0), 4)
    with pytest.raises(AssertionError):
        finished.complete_current(1)


@pytest.mark.parametrize("completed", [0, 1, 2])
def test_cancelled_has_five_steps_ending_in_cancelled_and_keeps_done_steps(
        completed: int) -> None:
    before = walk(Saga.initiated(0), completed)
    saga = before.cancelled(5_000)
    assert saga.path is SagaPath.CANCELLED
    assert [s.name.value for s in saga.steps] == CANCELLED_PATH
    assert saga.total == 5
    assert saga.current_index == 4
    assert saga.current == Step(N.CANCELLED, CANCELLED, 5_000)
    for old, new in zip(before.steps[:4], saga.steps[:4], strict=True):
        if old.status is DONE:
            assert new == old  # done stays done, with its original time
        else:
            assert new == Step(old.name, CANCELLED, 5_000)
    assert [s.status for s in saga.steps[:2]] == [DONE, DONE]


def test_cancelled_from_initiation() -> None:
    saga = Saga.initiated(0).cancelled(7)
    assert [s.status for s in saga.steps] == [DONE, DONE, CANCELLED, CANCELLED, CANCELLED]


def test_stopped_cancels_the_current_step_and_every_later_one() -> None:
    before = walk(Saga.initiated(0), 1)  # Earmarked current
    saga = before.stopped(3_000)
    assert saga.path is SagaPath.FULL
    assert saga.current_index == before.current_index == 3
    assert saga.steps[:3] == before.steps[:3]
    assert saga.steps[3:] == tuple(Step(n, CANCELLED, 3_000)
                                   for n in (N.EARMARKED, N.BURNING, N.SETTLED))


@pytest.mark.parametrize(("completed", "reached", "not_reached"), [
    (0, [N.RECEIVED, N.VALIDATED, N.LOCK], [N.EARMARKED, N.BURNING, N.SETTLED]),
    (1, [N.LOCK, N.EARMARKED], [N.BURNING, N.SETTLED]),
    (2, [N.EARMARKED, N.BURNING], [N.SETTLED]),
    (3, [N.BURNING, N.SETTLED], []),
])
def test_reached(completed: int, reached: list[StepName], not_reached: list[StepName]) -> None:
    saga = walk(Saga.initiated(0), completed)
    assert all(saga.reached(n) for n in reached)
    assert not any(saga.reached(n) for n in not_reached)


def test_a_cancelled_saga_reaches_nothing_of_the_full_path() -> None:
    saga = Saga.initiated(0).cancelled(1)
    assert not saga.reached(N.RECEIVED)
    assert not saga.reached(N.BURNING)


def test_the_irrevocable_step_is_burning() -> None:
    assert IRREVOCABLE_STEP is N.BURNING


def test_saga_values_are_not_mutated() -> None:
    saga = Saga.initiated(0)
    saga.complete_current(1)
    saga.cancelled(1)
    saga.stopped(1)
    assert saga == Saga.initiated(0)
