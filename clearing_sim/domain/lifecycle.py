"""The public lifecycle: statuses, public event types and the transition table, as data.

Public names: ``LifecycleStatus``, ``EventType``, ``Trigger``, ``Transition``, ``TRANSITIONS``,
``transition``, ``transition_from``, ``is_terminal``, ``TERMINAL_STATUSES``.

``TRANSITIONS`` is the spec's "States and transitions" table, row for row, plus three rows
of ours (``UNWIND_FAILED``, ``LOCK_REFUSED``, ``EARMARK_REFUSED``; see
docs/semantics.md). The saga never sets a status by hand: it names a trigger and this
table answers the next state and the event to publish. A trigger that has no row from the
current state is a broken invariant, not an API error.
"""

from __future__ import annotations

from enum import StrEnum

from attrs import frozen

__all__ = ["TERMINAL_STATUSES", "TRANSITIONS", "EventType", "LifecycleStatus", "State",
           "Transition", "Trigger", "is_terminal", "transition", "transition_from"]


class LifecycleStatus(StrEnum):
    RECEIVED = "received"
    IN_FLIGHT = "in-flight"
    SETTLED = "settled"
    CANCELLED = "cancelled"
    FAILED = "failed"


class EventType(StrEnum):
    """The six public event types, and only these (spec, Events)."""

    RECEIVED = "transaction.received"
    IN_FLIGHT = "transaction.in_flight"
    SETTLED = "transaction.settled"
    CANCELLED = "transaction.cancelled"
    PARKED = "transaction.parked"
    FAILED = "transaction.failed"


class Trigger(StrEnum):
    INITIATED = "initiated"
    VALIDATED = "validated"
    PROOF_COMPLETE = "proof_complete"
    CANCEL = "cancel"
    ISSUER_REJECTED = "issuer_rejected"
    ISSUER_FAILED = "issuer_failed"
    SILENCE = "silence"
    OPERATOR_FIX = "operator_fix"
    UNWIND_FAILED = "unwind_failed"
    LOCK_REFUSED = "lock_refused"
    EARMARK_REFUSED = "earmark_refused"


@frozen
class State:
    """The public state of a transaction: ``lifecycleStatus`` and ``parked``."""

    status: LifecycleStatus | None
    parked: bool = False


@frozen
class Transition:
    source: State
    trigger: Trigger
    target: State
    event: EventType


_S = LifecycleStatus
_NONE, _RECEIVED, _IN_FLIGHT = State(None), State(_S.RECEIVED), State(_S.IN_FLIGHT)
_PARKED = State(_S.FAILED, parked=True)

TRANSITIONS: tuple[Transition, ...] = (
    Transition(_NONE, Trigger.INITIATED, _RECEIVED, EventType.RECEIVED),
    Transition(_RECEIVED, Trigger.VALIDATED, _IN_FLIGHT, EventType.IN_FLIGHT),
    Transition(_IN_FLIGHT, Trigger.PROOF_COMPLETE, State(_S.SETTLED), EventType.SETTLED),
    Transition(_RECEIVED, Trigger.CANCEL, State(_S.CANCELLED), EventType.CANCELLED),
    Transition(_IN_FLIGHT, Trigger.CANCEL, State(_S.CANCELLED), EventType.CANCELLED),
    Transition(_IN_FLIGHT, Trigger.ISSUER_REJECTED, State(_S.FAILED), EventType.FAILED),
    Transition(_IN_FLIGHT, Trigger.ISSUER_FAILED, _PARKED, EventType.PARKED),
    Transition(_IN_FLIGHT, Trigger.SILENCE, _PARKED, EventType.PARKED),
    Transition(_PARKED, Trigger.OPERATOR_FIX, _IN_FLIGHT, EventType.IN_FLIGHT),
    # Ours (docs/semantics.md): moves the spec's table does not show.
    # REJECTED whose value could not be given back (a refund the issuer refused): a person.
    Transition(_IN_FLIGHT, Trigger.UNWIND_FAILED, _PARKED, EventType.PARKED),
    Transition(_IN_FLIGHT, Trigger.LOCK_REFUSED, State(_S.FAILED), EventType.FAILED),
    Transition(_IN_FLIGHT, Trigger.EARMARK_REFUSED, State(_S.FAILED), EventType.FAILED),
)

#: The table keyed by the source's plain parts: a tuple of enum members and a bool hashes in C,
#: a ``State`` through attrs' Python-level ``__hash__`` (the book looks up a row per change).
_TABLE: dict[tuple[LifecycleStatus | None, bool, Trigger], Transition] = {
    (t.source.status, t.source.parked, t.trigger): t for t in TRANSITIONS}


def transition(state: State, trigger: Trigger) -> Transition | None:
    """The row for ``trigger`` from ``state``, or None when the table has none."""
    return _TABLE.get((state.status, state.parked, trigger))


def transition_from(status: LifecycleStatus | None, parked: bool,
                    trigger: Trigger) -> Transition | None:
    """``transition`` from the state's two parts, without building the ``State``."""
    return _TABLE.get((status, parked, trigger))


#: Settled, cancelled and failed (parked or not) do not change without an operator.
TERMINAL_STATUSES = (_S.SETTLED, _S.CANCELLED, _S.FAILED)


def is_terminal(status: LifecycleStatus) -> bool:
    """Settled, cancelled and failed (parked or not) do not change without an operator."""
    return status in TERMINAL_STATUSES
