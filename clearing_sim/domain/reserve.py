"""Reserve proofs: the policy, the snapshot's ratio, the artifact's canonical content and proof.

Public names: ``KEY_ID``, ``PROOF_SYSTEM``, ``RATIO_DIGITS_MAX``, ``RATIO_PLACES``,
``ReserveArtifact``, ``ReserveSnapshot``, ``Verdict``, ``canonical_content``, ``deposit_ratio``,
``policy_holds``, ``prove``, ``ratio_text``, ``verify``.

Policy ``reserve-policy-v1-sandbox`` (spec, "Reserve proof artifact"; docs/semantics.md): an
issuer passes when its central-bank deposits cover its issued supply, ``reservesGbp`` ≥
``supplyIssued``. ``centralBankDepositRatio`` is reserves ÷ supply rounded *down* to
``RATIO_PLACES`` places (and to ``RATIO_DIGITS_MAX`` significant digits, so the JSON number
survives any client's float round trip exactly), hence ``pass`` ⇔ ratio ≥ 1. With nothing
issued the ratio is 1: nothing issued is fully backed, and ``pass`` ⇔ ratio ≥ 1 still holds.

The proof is a **simulated** zero-knowledge proof: HMAC-SHA256 under the world's sandbox
policy key over the artifact's canonical content (every field but ``proof``: sorted keys,
compact JSON, the ratio as its normalised decimal text so ``1``, ``1.0`` and ``1e0`` are one
value). It stands in for a real ZK proof: it binds the published snapshot to the key holder,
but unlike a real ZK proof it is checked with the same secret that made it, so only the
service can verify it. A verdict passes when the proof verifies over the presented content
and that content satisfies the policy.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from decimal import ROUND_FLOOR, Context, Decimal

from attrs import frozen

__all__ = ["KEY_ID", "PROOF_SYSTEM", "RATIO_DIGITS_MAX", "RATIO_PLACES", "ReserveArtifact",
           "ReserveSnapshot", "Verdict", "canonical_content", "deposit_ratio", "policy_holds",
           "prove", "ratio_text", "verify"]

KEY_ID = "reserve-policy-v1-sandbox"
PROOF_SYSTEM = "simulated-hmac-sha256"
RATIO_PLACES = 6
RATIO_DIGITS_MAX = 15  # a double holds any 15-significant-digit decimal exactly (DBL_DIG)

_EXACT = Context(prec=80)
_DIGITS = Context(prec=RATIO_DIGITS_MAX, rounding=ROUND_FLOOR)


def deposit_ratio(reserves_gbp: Decimal, supply_issued: Decimal) -> Decimal:
    """reserves ÷ supply, rounded down (to 6 places, at most 15 digits); 1 when supply is 0."""
    assert reserves_gbp >= 0 and supply_issued >= 0, (reserves_gbp, supply_issued)
    if supply_issued == 0:
        return Decimal(1)
    exact = _EXACT.divide(reserves_gbp, supply_issued)
    places = exact.quantize(Decimal(1).scaleb(-RATIO_PLACES), ROUND_FLOOR, _EXACT)
    return _DIGITS.plus(places)


def ratio_text(ratio: Decimal | float | int) -> str:
    """The ratio's canonical text: its exact decimal value, normalised, in plain notation.

    A float is read through its shortest repr, which is the digits it was written from."""
    value = Decimal(repr(ratio)) if isinstance(ratio, float) else Decimal(ratio)
    text = format(value.normalize(_EXACT), "f")
    return "0" if text in ("-0", "0") else text


@frozen
class ReserveSnapshot:
    """What the proof attests: deposits, supply and their ratio, at one moment."""

    reserves_gbp: Decimal
    supply_issued: Decimal
    ratio: Decimal

    @classmethod
    def take(cls, reserves_gbp: Decimal, supply_issued: Decimal) -> ReserveSnapshot:
        return cls(reserves_gbp, supply_issued, deposit_ratio(reserves_gbp, supply_issued))


def policy_holds(snapshot: ReserveSnapshot) -> bool:
    """``reserve-policy-v1``: central-bank deposits cover the issued supply."""
    return snapshot.reserves_gbp >= snapshot.supply_issued


@frozen
class ReserveArtifact:
    """A reserve proof artifact without its proof (the content the proof is made over)."""

    artifact_id: str
    issuer_id: str
    generated_at: str  # ISO 8601, as published
    passed: bool  # ``pass`` on the wire
    snapshot: ReserveSnapshot
    key_id: str = KEY_ID
    proof_system: str = PROOF_SYSTEM


def canonical_content(artifact: ReserveArtifact) -> bytes:
    """The bytes the proof covers: every published field but ``proof``, canonically."""
    content = {
        "artifactId": artifact.artifact_id,
        "generatedAt": artifact.generated_at,
        "issuerId": artifact.issuer_id,
        "keyId": artifact.key_id,
        "pass": artifact.passed,
        "proofSystem": artifact.proof_system,
        "snapshot": {
            "centralBankDepositRatio": ratio_text(artifact.snapshot.ratio),
            "reservesGbp": f"{artifact.snapshot.reserves_gbp:f}",
            "supplyIssued": f"{artifact.snapshot.supply_issued:f}",
        },
    }
    return json.dumps(content, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True).encode()


def prove(key: bytes, artifact: ReserveArtifact) -> str:
    """The simulated proof: lowercase hex HMAC-SHA256 of the canonical content."""
    return hmac.new(key, canonical_content(artifact), hashlib.sha256).hexdigest()


@frozen
class Verdict:
    proof_verified: bool  # the proof matches the presented content under the policy key
    policy_satisfied: bool  # the presented snapshot meets the policy and says so

    @property
    def passed(self) -> bool:
        return self.proof_verified and self.policy_satisfied


def verify(key: bytes, artifact: ReserveArtifact, proof: str) -> Verdict:
    """Check a presented artifact: proof over its content, and the policy over its snapshot."""
    proof_verified = hmac.compare_digest(prove(key, artifact).encode(), proof.encode())
    snapshot = artifact.snapshot
    consistent = (ratio_text(snapshot.ratio) == ratio_text(
        deposit_ratio(snapshot.reserves_gbp, snapshot.supply_issued)))
    policy_satisfied = policy_holds(snapshot) and artifact.passed and consistent
    return Verdict(proof_verified, policy_satisfied)
