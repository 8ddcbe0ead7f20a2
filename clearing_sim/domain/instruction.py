"""Issuer instructions: statuses, the normalised internal events and outcome kinds.

Public names: ``InstructionStatus``, ``NormalisedEvent``, ``Outcome``, ``FINAL``.

Transitions among instruction statuses are not shown in the spec; ours (docs/semantics.md):

    RECEIVED → PENDING_APPROVAL → APPROVED → EXECUTING → COMPLETED
        any non-final status → REJECTED | FAILED
    Mode 2 stops at PENDING_APPROVAL until the execute call arrives.

APPROVED and EXECUTING are progress only; only COMPLETED with an on-chain hash lets
settlement move forward.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FINAL", "InstructionStatus", "NormalisedEvent", "Outcome"]


class InstructionStatus(StrEnum):
    RECEIVED = "RECEIVED"
    PENDING_APPROVAL = "PENDING_APPROVAL"
    APPROVED = "APPROVED"
    EXECUTING = "EXECUTING"
    COMPLETED = "COMPLETED"
    REJECTED = "REJECTED"
    FAILED = "FAILED"


#: Statuses after which an instruction never changes; they are also the ones that answer the
#: saga and stop the approval-SLA clock.
FINAL = (InstructionStatus.COMPLETED, InstructionStatus.REJECTED, InstructionStatus.FAILED)


class NormalisedEvent(StrEnum):
    """The internal events the saga acts on (spec, "States and transitions")."""

    BURNED = "Burned"
    MINTED = "Minted"
    INSTRUCTION_REJECTED = "InstructionRejected"
    INSTRUCTION_FAILED = "InstructionFailed"
    PARKED_ON_SILENCE = "ParkedOnSilence"


class Outcome(StrEnum):
    """What an issuer does with an instruction: the default and the three armed scenarios."""

    COMPLETE = "complete"
    REJECTED = "rejected"
    FAILED = "failed"
    SILENCE = "silence"
