"""Defects the reference gateway can be started with: each breaks one rule of the contract.

Public names: ``DEFECTS``, ``Defect``.

``clearing-sim issuer serve --defect NAME`` turns one on; ``--defect list`` prints this
table. ``catches`` names the conformance scenarios that must fail against it (every other
scenario must still pass); the kit's CI test holds each defect to that.
"""

from __future__ import annotations

from enum import StrEnum

from attrs import frozen

__all__ = ["DEFECTS", "Defect", "DefectInfo"]


class Defect(StrEnum):
    REPLAY_CREATES_SECOND = "replay-creates-second"
    UNSIGNED_CALLBACKS = "unsigned-callbacks"
    WRONG_SECRET_CALLBACKS = "wrong-secret-callbacks"
    IGNORES_REJECTION = "ignores-rejection"
    FAILS_INSTEAD_OF_SILENCE = "fails-instead-of-silence"
    EXECUTE_BEFORE_APPROVAL = "execute-before-approval"
    COMPLETED_WITHOUT_PROOF = "completed-without-proof"
    REFUND_NEVER_COMES = "refund-never-comes"


@frozen
class DefectInfo:
    rule: str  # the rule of the spec it breaks
    does: str  # what the gateway then does
    catches: tuple[str, ...]  # scenarios that must fail against it
    modes: tuple[str, ...] = ("MODE_2", "MODE_3")  # where the defect can show


_HAPPY = ("happy_path_burn", "happy_path_mint")

DEFECTS: dict[Defect, DefectInfo] = {
    Defect.REPLAY_CREATES_SECOND: DefectInfo(
        "replaying the same idempotency key and body returns the original result and creates "
        "no second instruction", "creates a second instruction on a replay",
        ("idempotent_replay",)),
    Defect.UNSIGNED_CALLBACKS: DefectInfo(
        "status webhooks are signed with the scheme of outgoing webhooks",
        "sends status webhooks without a Service-Signature header", ("callback_signatures",)),
    Defect.WRONG_SECRET_CALLBACKS: DefectInfo(
        "status webhooks are signed with the webhook signing secret issued to the issuer",
        "signs status webhooks with another secret", ("callback_signatures",)),
    Defect.IGNORES_REJECTION: DefectInfo(
        "an instruction the issuer refuses ends REJECTED (automatic unwind)",
        "completes instructions it was set up to reject", ("rejection_unwinds",)),
    Defect.FAILS_INSTEAD_OF_SILENCE: DefectInfo(
        "silence: no answer until approvalSlaSeconds elapses, then the transaction parks",
        "reports FAILED where it was set up to stay silent", ("silence_parks",)),
    Defect.EXECUTE_BEFORE_APPROVAL: DefectInfo(
        "Mode 2: the issuer decides (APPROVED) and then waits for execute, the irrevocable "
        "signal sent after the earmark, before it moves the asset",
        "moves the asset without approving and without waiting for execute", _HAPPY,
        ("MODE_2",)),
    Defect.COMPLETED_WITHOUT_PROOF: DefectInfo(
        "COMPLETED comes with its on-chain proof (onchain.txHash and ledgerSequence)",
        "answers COMPLETED with onchain.txHash null", _HAPPY),
    Defect.REFUND_NEVER_COMES: DefectInfo(
        "Mode 3: POST /treasury/refunds returns the transferred tokens (status refunded)",
        "answers a refund with status pending and never refunds", ("rejection_unwinds",),
        ("MODE_3",)),
}
