"""Saga paths and the saga's public view: step names, statuses and their times.

Public names: ``StepName``, ``StepStatus``, ``SagaPath``, ``Step``, ``Saga``.

Full path: Received, Validated, Lock, Earmarked, Burning, Settled (6 steps). Cancelled path:
Received, Validated, Lock, Earmarked, Cancelled (5 steps, the last one ``cancelled``).

``Saga`` is a frozen value; each method returns the next value, stamping ``happened_at_ms`` on
the steps it completes or cancels, and keeping every step it does not change (the same
object: the book logs only the steps that are not). ``Saga`` and ``Step`` are typed tuples
(``typing.NamedTuple``) like ``Transaction``, for the same reason: a new saga is made at
every step, and a tuple is built and compared in C where a frozen attrs value sets each field
through ``object.__setattr__``. ``current_index`` is 0-based (``saga.currentStepIndex`` on
the wire); ``details.sagaStep.current`` is that index + 1 (see docs/semantics.md).
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

__all__ = ["IRREVOCABLE_STEP", "Saga", "SagaPath", "Step", "StepName", "StepStatus"]


class StepName(StrEnum):
    RECEIVED = "Received"
    VALIDATED = "Validated"
    LOCK = "Lock"
    EARMARKED = "Earmarked"
    BURNING = "Burning"
    SETTLED = "Settled"
    CANCELLED = "Cancelled"


class StepStatus(StrEnum):
    DONE = "done"
    CURRENT = "current"
    PENDING = "pending"
    CANCELLED = "cancelled"


class SagaPath(StrEnum):
    FULL = "full"
    CANCELLED = "cancelled"

    @property
    def names(self) -> tuple[StepName, ...]:
        n = StepName
        if self is SagaPath.FULL:
            return (n.RECEIVED, n.VALIDATED, n.LOCK, n.EARMARKED, n.BURNING, n.SETTLED)
        return (n.RECEIVED, n.VALIDATED, n.LOCK, n.EARMARKED, n.CANCELLED)


#: From this step on the saga has sent an irrevocable signal (burn, transfer or execute):
#: the caller can no longer cancel.
IRREVOCABLE_STEP = StepName.BURNING


class Step(NamedTuple):
    name: StepName
    status: StepStatus
    happened_at_ms: int | None = None


class Saga(NamedTuple):
    path: SagaPath
    steps: tuple[Step, ...]
    current_index: int

    @classmethod
    def initiated(cls, now_ms: int) -> Saga:
        """As in the initiation response: Received and Validated done, Lock current."""
        steps = (_new(Step, (_RECEIVED, _DONE, now_ms)), _new(Step, (_VALIDATED, _DONE, now_ms)),
                 *_LOCK_ON_AT_INITIATION)
        return _new(cls, (_FULL, steps, 2))

    @property
    def current(self) -> Step:
        return self.steps[self.current_index]

    @property
    def total(self) -> int:
        return len(self.steps)

    def reached(self, name: StepName) -> bool:
        """True when the saga's current step is ``name`` or a later one of the full path."""
        names = SagaPath.FULL.names
        return self.path is SagaPath.FULL and self.current_index >= names.index(name)

    def complete_current(self, now_ms: int) -> Saga:
        """Mark the current step done; the next step, if any, becomes current."""
        index, steps = self.current_index, self.steps
        current = steps[index]
        assert current.status is _IS_CURRENT, current
        done = _new(Step, (current.name, _DONE, now_ms))
        following = index + 1
        if following == len(steps):
            return _new(Saga, (self.path, (*steps[:index], done), index))
        steps = (*steps[:index], done, _CURRENT[steps[following].name], *steps[following + 1:])
        return _new(Saga, (self.path, steps, following))

    def cancelled(self, now_ms: int) -> Saga:
        """Switch to the cancelled path: what was done stays done, the rest is cancelled, and
        the saga ends in step Cancelled."""
        names = SagaPath.CANCELLED.names
        steps = []
        for i, name in enumerate(names[:-1]):
            old = self.steps[i]
            keep = old.status is StepStatus.DONE
            steps.append(old if keep else Step(name, StepStatus.CANCELLED, now_ms))
        steps.append(Step(StepName.CANCELLED, StepStatus.CANCELLED, now_ms))
        return Saga(SagaPath.CANCELLED, tuple(steps), len(steps) - 1)

    def stopped(self, now_ms: int) -> Saga:
        """A resolved failure: the current step and every later one are cancelled."""
        steps = [s if i < self.current_index else Step(s.name, StepStatus.CANCELLED, now_ms)
                 for i, s in enumerate(self.steps)]
        return Saga(self.path, tuple(steps), self.current_index)


#: The members the sagas of every transaction read, bound once: on Python 3.11 reading
#: ``Enum.MEMBER`` goes through ``EnumType.__getattr__``'s slow path (~750 instructions).
_RECEIVED, _VALIDATED, _FULL = StepName.RECEIVED, StepName.VALIDATED, SagaPath.FULL
_DONE, _IS_CURRENT = StepStatus.DONE, StepStatus.CURRENT

#: Builds a step or a saga from a tuple of its values: what their ``NamedTuple`` constructor
#: does, without its Python frame (a saga and a step are made at every completed step).
_new = tuple.__new__

#: Each step as it stands while current: no time yet, so every saga shares these values.
_CURRENT = {name: Step(name, StepStatus.CURRENT) for name in StepName}

#: The full path from Lock on as it stands at initiation, Lock current and the rest pending.
_LOCK_ON_AT_INITIATION = (_CURRENT[StepName.LOCK],
                          *(Step(name, StepStatus.PENDING) for name in SagaPath.FULL.names[3:]))
