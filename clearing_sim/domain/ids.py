"""Typed identifiers and the derivations the spec fixes.

Public names: ``TransactionId``, ``ParticipantId``, ``InstructionId``, ``CommandId``,
``instruction_idempotency_key``, ``instruction_reference``.

Ids themselves are minted by the world's id factory (``clearing_sim.sim.ids``); this module
only names their types and the pure rules derived from them.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import NewType

__all__ = [
    "CommandId",
    "InstructionId",
    "ParticipantId",
    "TransactionId",
    "instruction_idempotency_key",
    "instruction_reference",
    "transaction_id_of_reference",
]

TransactionId = NewType("TransactionId", str)
ParticipantId = NewType("ParticipantId", str)
InstructionId = NewType("InstructionId", str)
CommandId = NewType("CommandId", str)

REFERENCE_LENGTH_MAX = 35


#: A UUID as the id factory writes it (lower-case, hyphenated): read without ``uuid.UUID``.
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX32 = re.compile(r"[0-9a-f]{32}")
#: What ``uuid.UUID(bytes=..., version=5)`` does to the bits: variant 10, version 5.
_V5_KEEP = ~((0xC000 << 48) | (0xF000 << 64))
_V5_SET = (0x8000 << 48) | (5 << 76)


def _hex(uuid_text: str) -> str:
    """The 32 hex digits of a UUID (any form ``uuid.UUID`` reads; ValueError if none)."""
    if _CANONICAL.fullmatch(uuid_text):
        return uuid_text.replace("-", "")
    return uuid.UUID(uuid_text).hex


def _hyphenated(digits: str) -> str:
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def instruction_idempotency_key(command_id: CommandId, leg: str) -> str:
    """The issuer instruction's ``idempotencyKey``: UUIDv5 of the command id and the leg.

    The command id is itself a UUID, so it serves as the v5 namespace and the leg
    (``burn`` or ``mint``) as the name: one key per command and leg, stable across replays.
    (``str(uuid.uuid5(uuid.UUID(command_id), leg))``, without the intermediate objects.)
    """
    digest = hashlib.sha1(bytes.fromhex(_hex(command_id)) + leg.encode()).digest()
    bits = int.from_bytes(digest[:16], "big") & _V5_KEEP | _V5_SET
    return _hyphenated(f"{bits:032x}")


def instruction_reference(transaction_id: TransactionId) -> str:
    """The service transaction reference sent to issuers: the id's 32 hex digits (≤ 35 chars)."""
    reference = _hex(transaction_id)
    assert len(reference) <= REFERENCE_LENGTH_MAX
    return reference


def transaction_id_of_reference(reference: str) -> TransactionId:
    """The transaction id an issuer reads back from a ``reference``
    (``str(uuid.UUID(hex=reference))``; ValueError if it is no UUID)."""
    if _HEX32.fullmatch(reference):
        return TransactionId(_hyphenated(reference))
    return TransactionId(str(uuid.UUID(hex=reference)))
