"""The Burning step's legs: the order they run in, their phases and their outcomes.

Public names: ``plan``, ``Phase``, ``LegOutcome``, ``Sent``, ``COMPENSATION_LEG``; and the
members ``sim.saga`` reads at every leg, bound once (``INSTRUCT``…, ``MODE_1``…, ``DONE``…).

The Burning step runs its legs in three phases, without knowing where a real issuer holds
(spec, Issuer instruction statuses: "In Mode 2 the issuer stops at RECEIVED or
PENDING_APPROVAL and does not execute until the execute call arrives"; docs/semantics.md
"The swap saga"):

1. instruct: each Mode 2 leg's instruction goes out, burn first; the creation answer is all
   the saga waits for (an issuer may hold at RECEIVED, PENDING_APPROVAL or APPROVED).
2. decide-and-move, burn first: a Mode 2 leg is executed (the earmark is confirmed: Burning
   starts only then) and awaited until COMPLETED; a Mode 3 leg (single-phase: the
   instruction is the decision and the move) first transfers a burn's locked tokens to the
   issuer, then is instructed and awaited until COMPLETED. The member's value is taken
   before any is given.
3. co-sign: each Mode 1 leg is co-signed on chain by the service, burn first. No issuer can
   refuse it, so it comes after every issuer's decision.
"""

from __future__ import annotations

from enum import StrEnum

from attrs import frozen

from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.domain.profile import FeedbackChannel, SettlementMode
from clearing_sim.domain.transaction import LegTerms
from clearing_sim.sim.gateway import Gateway

__all__ = ["COMPENSATION_LEG", "LegOutcome", "Phase", "Sent", "plan"]


class LegOutcome(StrEnum):
    """How a leg ended, as the saga acts on it."""

    DONE = "done"
    RELOCK_REFUSED = "relock_refused"  # Mode 3 after a refund: the member spent the tokens
    REJECTED = "rejected"
    FAILED = "failed"
    SILENCE = "silence"


class Phase(StrEnum):
    """What the saga does with a leg at one point of the plan."""

    INSTRUCT = "instruct"  # Mode 2: the instruction, answered by its creation
    SINGLE = "single"  # Mode 3: (transfer,) instruct, await COMPLETED
    EXECUTE = "execute"  # Mode 2: execute, await COMPLETED
    CO_SIGN = "co-sign"  # Mode 1: the service co-signs the burn or mint
    COMPENSATE = "compensate"  # Mode 2 source: re-issue a burned amount, await COMPLETED


@frozen
class Sent:
    """An instruction the saga is waiting on, and until when."""

    gateway: Gateway
    instruction_id: str
    deadline_ms: int
    phase: Phase


#: The members read at every leg and every wake, bound once: on Python 3.11 reading
#: ``Enum.MEMBER`` goes through ``EnumType.__getattr__``'s slow path (~750 instructions).
INSTRUCT, SINGLE, EXECUTE = Phase.INSTRUCT, Phase.SINGLE, Phase.EXECUTE
CO_SIGN, COMPENSATE = Phase.CO_SIGN, Phase.COMPENSATE
MODE_1, MODE_2, MODE_3 = SettlementMode.MODE_1, SettlementMode.MODE_2, SettlementMode.MODE_3
DONE = LegOutcome.DONE
COMPLETED, REJECTED, FAILED = (InstructionStatus.COMPLETED, InstructionStatus.REJECTED,
                               InstructionStatus.FAILED)
WEBHOOK = FeedbackChannel.SIGNED_WEBHOOK
POLL = FeedbackChannel.POLLABLE_RESOURCE
#: The compensating mint's leg name: its idempotency key is UUIDv5(command id, this).
COMPENSATION_LEG = "compensation"


def plan(legs: tuple[LegTerms, ...]) -> list[tuple[Phase, LegTerms]]:
    """The Burning step's order (legs are burn first): every Mode 2 instruction, then each
    issuer's decide-and-move, then the Mode 1 co-signatures."""
    return ([(INSTRUCT, t) for t in legs if t.mode is MODE_2]
            + [(EXECUTE if t.mode is MODE_2 else SINGLE, t) for t in legs
               if t.mode.has_instructions]
            + [(CO_SIGN, t) for t in legs if t.mode is MODE_1])
