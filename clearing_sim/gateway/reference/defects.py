"""Defects the reference gateway can be started with: each breaks one rule of the contract.

Public names: ``DEFECTS``, ``Defect``.

``clearing-sim issuer serve --defect NAME`` turns one on; ``--defect list`` prints this
table. ``catches`` names the conformance scenarios that must fail against it (every other
scenario must still pass); ``names`` is what the failure's reason must say (the rule, in the
kit's words, not a symptom such as ``approval_sla_exceeded``). The kit's CI test holds each
defect to both.
"""

from __future__ import annotations

from enum import StrEnum

from attrs import frozen

__all__ = ["DEFECTS", "Defect", "DefectInfo"]


class Defect(StrEnum):
    REPLAY_CREATES_SECOND = "replay-creates-second"
    REPLAY_ANSWERS_CURRENT = "replay-answers-current"
    UNSIGNED_CALLBACKS = "unsigned-callbacks"
    WRONG_SECRET_CALLBACKS = "wrong-secret-callbacks"
    IGNORES_REJECTION = "ignores-rejection"
    FAILS_INSTEAD_OF_SILENCE = "fails-instead-of-silence"
    MOVES_BEFORE_EXECUTE = "moves-before-execute"
    COMPLETED_WITHOUT_PROOF = "completed-without-proof"
    LEDGER_SEQUENCE_STRING = "ledger-sequence-string"
    STATUS_LOWERCASE = "status-lowercase"
    REJECTS_AFTER_APPROVAL = "rejects-after-approval"
    REFUND_NEVER_COMES = "refund-never-comes"


@frozen
class DefectInfo:
    rule: str  # the rule of the spec it breaks
    does: str  # what the gateway then does
    catches: tuple[str, ...]  # scenarios that must fail against it
    names: str  # what each of their reasons says: the rule broken, the field
    modes: tuple[str, ...] = ("MODE_2", "MODE_3")  # where the defect can show


_HAPPY = ("happy_path_burn", "happy_path_mint")
_ALL = ("happy_path_burn", "happy_path_mint", "rejection_unwinds", "silence_parks",
        "idempotent_replay", "callback_signatures")

DEFECTS: dict[Defect, DefectInfo] = {
    Defect.REPLAY_CREATES_SECOND: DefectInfo(
        "replaying the same idempotency key and body returns the original result and creates "
        "no second instruction", "creates a second instruction on a replay",
        ("idempotent_replay",), "the replay answered the original instructionId"),
    Defect.REPLAY_ANSWERS_CURRENT: DefectInfo(
        "replaying the same idempotency key and body returns the original result",
        "answers a replay with the instruction's current status", ("idempotent_replay",),
        "the replay answered the original status"),
    Defect.UNSIGNED_CALLBACKS: DefectInfo(
        "status webhooks are signed with the scheme of outgoing webhooks",
        "sends status webhooks without a Service-Signature header", ("callback_signatures",),
        "without a Service-Signature header"),
    Defect.WRONG_SECRET_CALLBACKS: DefectInfo(
        "status webhooks are signed with the webhook signing secret issued to the issuer",
        "signs status webhooks with another secret", ("callback_signatures",),
        "failed verification"),
    Defect.IGNORES_REJECTION: DefectInfo(
        "an instruction the issuer refuses ends REJECTED (automatic unwind)",
        "completes instructions it was set up to reject", ("rejection_unwinds",),
        "expected failed"),
    Defect.FAILS_INSTEAD_OF_SILENCE: DefectInfo(
        "silence: no answer until approvalSlaSeconds elapses, then the transaction parks",
        "reports FAILED where it was set up to stay silent", ("silence_parks",),
        "no decision from the issuer"),
    Defect.MOVES_BEFORE_EXECUTE: DefectInfo(
        "Mode 2: the issuer stops at RECEIVED or PENDING_APPROVAL and does not execute until "
        "the execute call arrives (sent only after the RTGS earmark is confirmed)",
        "moves the asset (EXECUTING, COMPLETED) without waiting for execute",
        ("waits_for_execute", *_HAPPY), "before execute", ("MODE_2",)),
    Defect.COMPLETED_WITHOUT_PROOF: DefectInfo(
        "COMPLETED comes with its on-chain proof (onchain.txHash and ledgerSequence)",
        "answers COMPLETED with onchain.txHash null", _HAPPY,
        "COMPLETED must carry onchain.txHash"),
    Defect.LEDGER_SEQUENCE_STRING: DefectInfo(
        "COMPLETED's onchain.ledgerSequence is an integer",
        "answers COMPLETED with onchain.ledgerSequence as a string (\"1001\")", _HAPPY,
        "onchain.ledgerSequence must be an integer"),
    Defect.STATUS_LOWERCASE: DefectInfo(
        "an instruction's status is one of the spec's seven: RECEIVED, PENDING_APPROVAL, "
        "APPROVED, EXECUTING, COMPLETED, REJECTED, FAILED",
        "answers and sends its statuses in lowercase (received, completed)", _ALL,
        "is not one of the spec's seven"),
    Defect.REJECTS_AFTER_APPROVAL: DefectInfo(
        "REJECTED is the issuer's decision, made before it approves: an approved "
        "instruction executes or FAILs",
        "approves the instructions it was set up to reject, then rejects them",
        ("rejection_unwinds",), "REJECTED after APPROVED"),
    Defect.REFUND_NEVER_COMES: DefectInfo(
        "Mode 3: POST /treasury/refunds returns the transferred tokens (status refunded)",
        "answers a refund with status pending and never refunds", ("rejection_unwinds",),
        "not refunded", ("MODE_3",)),
}
