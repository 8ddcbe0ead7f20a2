"""Issuer instruction statuses and normalised events (spec, "States and transitions": issuer
instruction statuses, normalised internal events; "Conformance": the three scenarios)."""

from __future__ import annotations

from clearing_sim.domain.instruction import (
    FINAL,
    InstructionStatus,
    NormalisedEvent,
    Outcome,
)


def test_instruction_statuses_are_the_specs_seven() -> None:
    assert [s.value for s in InstructionStatus] == [
        "RECEIVED", "PENDING_APPROVAL", "APPROVED", "EXECUTING", "COMPLETED", "REJECTED",
        "FAILED"]


def test_final_statuses_are_completed_rejected_failed() -> None:
    """APPROVED and EXECUTING are progress only; settlement moves only on a final answer."""
    assert set(FINAL) == {InstructionStatus.COMPLETED, InstructionStatus.REJECTED,
                          InstructionStatus.FAILED}
    assert InstructionStatus.APPROVED not in FINAL
    assert InstructionStatus.EXECUTING not in FINAL


def test_normalised_events_are_the_specs_five() -> None:
    assert {e.value for e in NormalisedEvent} == {
        "Burned", "Minted", "InstructionRejected", "InstructionFailed", "ParkedOnSilence"}


def test_outcomes_are_the_default_and_the_three_conformance_scenarios() -> None:
    assert {o.value for o in Outcome} == {"complete", "rejected", "failed", "silence"}
