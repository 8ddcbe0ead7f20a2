"""Typed identifiers and the derivations the spec fixes.

Public names: ``TransactionId``, ``ParticipantId``, ``InstructionId``, ``CommandId``,
``instruction_idempotency_key``, ``instruction_reference``.

Ids themselves are minted by the world's id factory (``clearing_sim.sim.ids``); this module
only names their types and the pure rules derived from them.
"""

from __future__ import annotations

import uuid
from typing import NewType

__all__ = [
    "CommandId",
    "InstructionId",
    "ParticipantId",
    "TransactionId",
    "instruction_idempotency_key",
    "instruction_reference",
]

TransactionId = NewType("TransactionId", str)
ParticipantId = NewType("ParticipantId", str)
InstructionId = NewType("InstructionId", str)
CommandId = NewType("CommandId", str)

REFERENCE_LENGTH_MAX = 35


def instruction_idempotency_key(command_id: CommandId, leg: str) -> str:
    """The issuer instruction's ``idempotencyKey``: UUIDv5 of the command id and the leg.

    The command id is itself a UUID, so it serves as the v5 namespace and the leg
    (``burn`` or ``mint``) as the name: one key per command and leg, stable across replays.
    """
    return str(uuid.uuid5(uuid.UUID(command_id), leg))


def instruction_reference(transaction_id: TransactionId) -> str:
    """The service transaction reference sent to issuers: the id's 32 hex digits (≤ 35 chars)."""
    reference = uuid.UUID(transaction_id).hex
    assert len(reference) <= REFERENCE_LENGTH_MAX
    return reference
