"""The public lifecycle (spec, "States and transitions" table and "Events" table)."""

from __future__ import annotations

import pytest

from clearing_sim.domain.lifecycle import (
    TRANSITIONS,
    EventType,
    LifecycleStatus,
    State,
    Transition,
    Trigger,
    is_terminal,
    transition,
    transition_from,
)

S = LifecycleStatus
T = Trigger
E = EventType
NONE = State(None)
RECEIVED = State(S.RECEIVED)
IN_FLIGHT = State(S.IN_FLIGHT)
SETTLED = State(S.SETTLED)
CANCELLED = State(S.CANCELLED)
FAILED = State(S.FAILED, parked=False)
PARKED = State(S.FAILED, parked=True)

#: The spec's table, row for row: (from, trigger, to, event).
SPEC_ROWS = [
    pytest.param(NONE, T.INITIATED, RECEIVED, E.RECEIVED, id="POST transactions -> received"),
    pytest.param(RECEIVED, T.VALIDATED, IN_FLIGHT, E.IN_FLIGHT, id="received -> in-flight"),
    pytest.param(IN_FLIGHT, T.PROOF_COMPLETE, SETTLED, E.SETTLED, id="in-flight -> settled"),
    pytest.param(RECEIVED, T.CANCEL, CANCELLED, E.CANCELLED, id="cancel from received"),
    pytest.param(IN_FLIGHT, T.CANCEL, CANCELLED, E.CANCELLED, id="cancel from in-flight"),
    pytest.param(IN_FLIGHT, T.ISSUER_REJECTED, FAILED, E.FAILED,
                 id="REJECTED -> failed parked false"),
    pytest.param(IN_FLIGHT, T.ISSUER_FAILED, PARKED, E.PARKED, id="FAILED -> failed parked true"),
    pytest.param(IN_FLIGHT, T.SILENCE, PARKED, E.PARKED, id="silence -> failed parked true"),
    pytest.param(PARKED, T.OPERATOR_FIX, IN_FLIGHT, E.IN_FLIGHT, id="operator fix -> in-flight"),
]

#: The spec's Events table: event type -> the lifecycleStatus and parked it announces.
EVENT_STATES = {
    "transaction.received": RECEIVED,
    "transaction.in_flight": IN_FLIGHT,
    "transaction.settled": SETTLED,
    "transaction.cancelled": CANCELLED,
    "transaction.parked": PARKED,
    "transaction.failed": FAILED,
}


@pytest.mark.parametrize(("source", "trigger", "target", "event"), SPEC_ROWS)
def test_transitions_contain_every_row_of_the_spec_table(
        source: State, trigger: Trigger, target: State, event: EventType) -> None:
    row = Transition(source, trigger, target, event)
    assert row in TRANSITIONS
    assert transition(source, trigger) == row


def test_each_state_and_trigger_has_at_most_one_row() -> None:
    keys = [(t.source, t.trigger) for t in TRANSITIONS]
    assert len(keys) == len(set(keys))


def test_every_row_publishes_the_event_of_its_target_state() -> None:
    """Events table: each event type fires with one lifecycleStatus (and parked)."""
    for row in TRANSITIONS:
        assert EVENT_STATES[row.event.value] == row.target, row


def test_exactly_six_event_types_matching_the_spec() -> None:
    assert len(EventType) == 6
    assert {e.value for e in EventType} == set(EVENT_STATES)


def test_lifecycle_status_values_are_the_specs_five() -> None:
    assert [s.value for s in LifecycleStatus] == [
        "received", "in-flight", "settled", "cancelled", "failed"]


@pytest.mark.parametrize("state", [SETTLED, CANCELLED, FAILED], ids=str)
def test_no_transition_leaves_settled_cancelled_or_resolved_failed(state: State) -> None:
    assert [t for t in TRANSITIONS if t.source == state] == []
    for trigger in Trigger:
        assert transition(state, trigger) is None


def test_only_the_operator_fix_leaves_parked() -> None:
    assert [t.trigger for t in TRANSITIONS if t.source == PARKED] == [T.OPERATOR_FIX]


@pytest.mark.parametrize(("state", "trigger"), [
    (SETTLED, T.CANCEL),              # spec: settled + POST cancel -> unchanged (409)
    (CANCELLED, T.CANCEL),
    (RECEIVED, T.PROOF_COMPLETE),
    (RECEIVED, T.ISSUER_REJECTED),
    (IN_FLIGHT, T.VALIDATED),
    (IN_FLIGHT, T.OPERATOR_FIX),
    (PARKED, T.CANCEL),
    (NONE, T.CANCEL),
])
def test_transition_returns_none_for_moves_not_in_the_table(
        state: State, trigger: Trigger) -> None:
    assert transition(state, trigger) is None


@pytest.mark.parametrize("state", [NONE, RECEIVED, IN_FLIGHT, SETTLED, CANCELLED, FAILED, PARKED],
                         ids=str)
def test_transition_from_the_parts_is_the_tables_row(state: State) -> None:
    """The book's lookup (status, parked, trigger) answers the table's row, or None."""
    for trigger in Trigger:
        rows = [t for t in TRANSITIONS if t.source == state and t.trigger == trigger]
        assert transition_from(state.status, state.parked, trigger) is transition(state, trigger)
        assert transition(state, trigger) is (rows[0] if rows else None)


@pytest.mark.parametrize(("status", "terminal"), [
    (S.RECEIVED, False), (S.IN_FLIGHT, False),
    (S.SETTLED, True), (S.CANCELLED, True), (S.FAILED, True),
])
def test_is_terminal(status: LifecycleStatus, terminal: bool) -> None:
    """Spec: settled, cancelled, failed (parked or not) have terminal true."""
    assert is_terminal(status) is terminal


def test_every_row_into_a_terminal_state_comes_from_an_open_state() -> None:
    for row in TRANSITIONS:
        if row.target.status is not None and is_terminal(row.target.status):
            assert row.source in (RECEIVED, IN_FLIGHT), row


def test_state_defaults_to_not_parked() -> None:
    assert State(S.FAILED) == FAILED
    assert State(S.FAILED) != PARKED
