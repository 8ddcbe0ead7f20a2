"""Strict reading of an issuer gateway's answers: untrusted input, never a crash.

Public names: ``CONFLICTED``, ``MOVED``, ``RESERVED_PREFIXES``, ``UNANSWERED``,
``moved_before_execute``, ``read_created``, ``read_refund``, ``read_snapshot``,
``read_status_body``, ``step_allowed``, ``step_problem``.

Each reader returns the value or a sentence naming the rule and the field the answer breaks
("status 'completed' is not one of the spec's seven", "onchain.ledgerSequence must be an
integer"): the kit reports that sentence as the peer's fault. A status may only move forward
along RECEIVED → PENDING_APPROVAL → APPROVED → EXECUTING → COMPLETED, to REJECTED before
APPROVED, or from a non-final status to FAILED (sim.issuer); COMPLETED needs its on-chain
proof (``onchain.txHash`` and an integer ``onchain.ledgerSequence``). An
``instructionId`` is 1 to 200 characters without control characters, not ``.`` or ``..``,
not one of the client's own placeholders: it becomes a percent-encoded path segment of the
next read (one with a control character made no URL at all, and the advance that read it
answered 500).
"""

from __future__ import annotations

import re
from typing import Any

from clearing_sim.domain.instruction import FINAL, InstructionStatus
from clearing_sim.gateway.transport import Call
from clearing_sim.sim.issuer import Snapshot

__all__ = ["CONFLICTED", "MOVED", "RESERVED_PREFIXES", "UNANSWERED", "moved_before_execute",
           "read_created", "read_refund", "read_snapshot", "read_status_body", "step_allowed",
           "step_problem"]

_S = InstructionStatus
#: any text but control characters (the spec says "string"; the client percent-encodes it
#: as a path segment), not starting with the client's own placeholders' prefixes
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
UNANSWERED = "unanswered:"  # the client's id for an instruction no answer named yet
CONFLICTED = "conflicted:"  # ... and for one created with another instruction's id
RESERVED_PREFIXES = (UNANSWERED, CONFLICTED)
_ORDER = [_S.RECEIVED, _S.PENDING_APPROVAL, _S.APPROVED, _S.EXECUTING, _S.COMPLETED]
_SEVEN = tuple(s.value for s in InstructionStatus)
assert len(_SEVEN) == 7, "the spec names seven issuer instruction statuses"
#: statuses that say the asset is moving or has moved
MOVED = (_S.EXECUTING.value, _S.COMPLETED.value)
_TWO_PHASE = ("in Mode 2 the issuer does not execute until the execute call arrives "
              "(spec, issuer instruction statuses)")


def step_allowed(before: InstructionStatus, after: InstructionStatus) -> bool:
    if before == after:
        return True
    if before in FINAL:
        return False
    if after is _S.REJECTED:  # the decision: never after APPROVED (domain.instruction)
        return before in (_S.RECEIVED, _S.PENDING_APPROVAL)
    if after is _S.FAILED:
        return True
    return _ORDER.index(after) > _ORDER.index(before)


def step_problem(before: InstructionStatus, after: InstructionStatus) -> str:
    """The rule a forbidden step breaks, in words (``step_allowed`` said no)."""
    if before in FINAL:
        return f"{after.value} after {before.value}: a final status never changes"
    if after is _S.REJECTED:
        return (f"REJECTED after {before.value}: REJECTED is the issuer's decision, made "
                "before it approves; an approved instruction executes or FAILs")
    return f"{before.value} → {after.value}: a status never moves backwards"


def moved_before_execute(body: Any) -> str | None:
    """What in an instruction's body (a read or a status webhook) says the asset moved:
    EXECUTING, COMPLETED or an on-chain hash; None when nothing does. Read leniently (a
    lowercase ``completed`` is a move too): the question is what the issuer did."""
    if not isinstance(body, dict):
        return None
    status = body.get("status")
    if isinstance(status, str) and status.upper() in MOVED:
        return f"{status} before execute: {_TWO_PHASE}"
    onchain = body.get("onchain")
    tx_hash = onchain.get("txHash") if isinstance(onchain, dict) else None
    if isinstance(tx_hash, str) and tx_hash:
        return (f"an on-chain hash (onchain.txHash {tx_hash[:16]}…) at {status!r} before "
                f"execute: {_TWO_PHASE}")
    return None


def _body(call: Call, ok: tuple[int, ...]) -> dict[str, Any] | str:
    if call.error is not None:
        return call.error
    assert call.status is not None
    if call.status not in ok:
        return f"answered HTTP {call.status}"
    body = call.parsed()
    if not isinstance(body, dict):
        return "the answer is not a JSON object"
    return body


def _status(body: dict[str, Any]) -> InstructionStatus | str:
    value = body.get("status")
    if value is None:
        return "status is missing: it must be one of the spec's seven"
    if isinstance(value, str) and value in _SEVEN:
        return InstructionStatus(value)
    return f"status {value!r} is not one of the spec's seven ({', '.join(_SEVEN)})"


def read_created(call: Call) -> tuple[str, InstructionStatus] | str:
    """POST /burn-instructions or /mint-instructions: ``{instructionId, status}``."""
    body = _body(call, (200, 201, 202))
    if isinstance(body, str):
        return body
    instruction_id = body.get("instructionId")
    if not isinstance(instruction_id, str) or not instruction_id:
        return "instructionId is missing or not a string"
    if len(instruction_id) > 200 or _CONTROL.search(instruction_id) \
            or instruction_id.startswith(RESERVED_PREFIXES) or instruction_id in (".", ".."):
        return (f"instructionId {instruction_id[:60]!r} is not 1 to 200 characters without "
                "control characters (nor . or .., nor one of this client's own prefixes "
                f"{', '.join(RESERVED_PREFIXES)})")
    status = _status(body)
    return (instruction_id, status) if isinstance(status, InstructionStatus) else status


def read_snapshot(call: Call, instruction_id: str) -> Snapshot | str:
    """GET /instructions/{id}: the instruction, its status and, when COMPLETED, its proof."""
    body = _body(call, (200,))
    if isinstance(body, str):
        return body
    if body.get("instructionId", instruction_id) != instruction_id:
        return f"the answer names instruction {body.get('instructionId')!r}, not {instruction_id}"
    return read_status_body(body, instruction_id)


def read_status_body(body: dict[str, Any], instruction_id: str) -> Snapshot | str:
    """An instruction's status as a read or a status webhook carries it."""
    status = _status(body)
    if not isinstance(status, InstructionStatus):
        return status
    onchain = body.get("onchain")
    tx_hash = onchain.get("txHash") if isinstance(onchain, dict) else None
    sequence = onchain.get("ledgerSequence") if isinstance(onchain, dict) else None
    if status is _S.COMPLETED:
        if not isinstance(tx_hash, str) or not tx_hash:
            return f"COMPLETED must carry onchain.txHash (its proof), not {tx_hash!r}"
        if sequence is None:
            return "COMPLETED must carry onchain.ledgerSequence (an integer)"
        if not isinstance(sequence, int) or isinstance(sequence, bool):
            return f"onchain.ledgerSequence must be an integer, not {sequence!r}"
        return Snapshot(instruction_id, status, tx_hash, sequence)
    return Snapshot(instruction_id, status)


def read_refund(call: Call, transaction_id: str) -> tuple[str, str] | str:
    """POST /treasury/refunds: ``(status, refundTxHash)``; refunded needs a hash."""
    body = _body(call, (200, 201, 202))
    if isinstance(body, str):
        return body
    status = body.get("status")
    if body.get("transactionId") != transaction_id or not isinstance(status, str):
        return "the answer does not name the transaction or has no status"
    tx_hash = body.get("refundTxHash")
    if status == "refunded" and (not isinstance(tx_hash, str) or not tx_hash):
        return "refunded without refundTxHash"
    return status, tx_hash if isinstance(tx_hash, str) else ""
