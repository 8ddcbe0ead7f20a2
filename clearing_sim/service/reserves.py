"""Reserve proofs: generate an issuer's proof, read the latest one, verify an artifact.

Public names: ``ROUTES``, ``ReserveProofs``, ``artifact_wire``, ``reserve_snapshot``.

Generate (``generateReserveProof``, own issuer only, else 403 ``not_own_participant``) takes a
snapshot at the current virtual time: ``supplyIssued`` is the on-ledger supply of the issuer's
GBP assets (locked amounts included: they are still issued), ``reservesGbp`` its GBP at the
RTGS adapter (its balance plus any earmark it pays, which is still its deposit until it
settles). The artifact is the spec's fields plus, of ours, ``artifactId``, ``proofSystem`` and
``proof`` (a simulated ZK proof, see ``clearing_sim.domain.reserve``). GET answers the latest
artifact (404 ``reserve_proof_not_found`` before the first). Verify is open to any portal
session (a tenant-admin JWT of any participant; an API key is 403) and computes ``pass``: the
proof verifies over the presented content and that content meets the policy. A malformed
artifact is 400, a ``keyId`` other than ``reserve-policy-v1-sandbox`` 400 ``unknown_key_id``.

The routes are not sandbox-only: the spec marks only agents and conformance so, and
``reserve-policy-v1-sandbox`` is the only key it names, so production proofs are made and
verified under it too (docs/semantics.md). The policy key is derived from the world's ids.
"""

from __future__ import annotations

import math
import re
import uuid
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from clearing_sim.domain.errors import NotFound
from clearing_sim.domain.money import GBP
from clearing_sim.domain.parties import Capability, CredentialKind
from clearing_sim.domain.reserve import (
    KEY_ID,
    PROOF_SYSTEM,
    ReserveArtifact,
    ReserveSnapshot,
    policy_holds,
    prove,
    ratio_text,
    verify,
)
from clearing_sim.domain.timefmt import parse_iso
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Context, Reply, Route
from clearing_sim.service.issuers import own_issuer
from clearing_sim.sim.participants import Participant

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["ROUTES", "ReserveProofs", "artifact_wire", "reserve_snapshot"]

_PLAIN_DECIMAL = re.compile(r"(0|[1-9][0-9]{0,29})(\.[0-9]{1,18})?")
_PROOF = re.compile(r"[0-9a-f]{64}")
_PENNY = Decimal("0.01")
_RATIO = "centralBankDepositRatio"


class ReserveProofs:
    """The sandbox policy key and each issuer's latest artifact with its proof."""

    def __init__(self, world: World) -> None:
        self.key = world.ids.key("reserve-policy-key", 32)
        self.latest: dict[str, tuple[ReserveArtifact, str]] = {}


def _pennies(amount: Decimal) -> Decimal:
    """At least two places, as money reads (more when an asset's precision has more)."""
    exponent = amount.as_tuple().exponent
    assert isinstance(exponent, int), amount
    return amount.quantize(_PENNY) if exponent > -2 else amount


def reserve_snapshot(world: World, issuer: Participant) -> ReserveSnapshot:
    """The issuer's GBP deposits and GBP-asset supply now."""
    supply = Decimal(0)
    if issuer.profiles:
        ledger = world.ledgers[issuer.profile.ledger]
        for asset in issuer.assets:
            if asset.currency == GBP.code:
                supply += ledger.supply.get(asset, Decimal(0))
    rtgs = world.rtgs
    reserves = rtgs.balances.get(issuer.id, Decimal(0)) + sum(
        (mark.amount for mark in rtgs.earmarks.values() if mark.payer == issuer.id), Decimal(0))
    return ReserveSnapshot.take(_pennies(reserves), _pennies(supply))


def artifact_wire(artifact: ReserveArtifact, proof: str) -> dict[str, Any]:
    snapshot = artifact.snapshot
    return {
        "artifactId": artifact.artifact_id,
        "issuerId": artifact.issuer_id,
        "keyId": artifact.key_id,
        "generatedAt": artifact.generated_at,
        "pass": artifact.passed,
        "snapshot": {"reservesGbp": f"{snapshot.reserves_gbp:f}",
                     "supplyIssued": f"{snapshot.supply_issued:f}",
                     _RATIO: float(snapshot.ratio)},
        "proofSystem": artifact.proof_system,
        "proof": proof,
    }


def generate(ctx: Context) -> Reply:
    ctx.fields(empty_ok=True).done()
    issuer = own_issuer(ctx)
    store = ctx.store(ReserveProofs)
    snapshot = reserve_snapshot(ctx.world, issuer)
    artifact = ReserveArtifact(ctx.world.ids.uuid("reserve-proof"), issuer.id, ctx.world.iso(),
                               policy_holds(snapshot), snapshot)
    proof = prove(store.key, artifact)
    store.latest[issuer.id] = (artifact, proof)
    ctx.world.log.append("reserve.proof_generated", issuerId=issuer.id,
                         artifactId=artifact.artifact_id, keyId=artifact.key_id,
                         passed=artifact.passed, reservesGbp=f"{snapshot.reserves_gbp:f}",
                         supplyIssued=f"{snapshot.supply_issued:f}",
                         ratio=ratio_text(snapshot.ratio))
    return Reply(201, artifact_wire(artifact, proof))


def latest(ctx: Context) -> Reply:
    issuer = own_issuer(ctx)
    found = ctx.store(ReserveProofs).latest.get(issuer.id)
    if found is None:
        raise NotFound.one(None, "reserve_proof_not_found",
                           "no reserve proof has been generated for this issuer yet")
    return Reply(200, artifact_wire(*found))


# verify ------------------------------------------------------------------------------------
def _amount(f: Fields, name: str) -> Decimal | None:
    text = f.text(name, length_max=60)
    if text is None:
        return None
    if not _PLAIN_DECIMAL.fullmatch(text):
        f.problem(name, "invalid_value", f"{f.path(name)} must be a non-negative decimal string")
        return None
    return Decimal(text)


def _ratio(f: Fields) -> Decimal | None:
    if _RATIO not in f.obj:
        f.problem(_RATIO, "required", f"{f.path(_RATIO)} is required")
        return None
    value = f.obj[_RATIO]
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and not math.isfinite(value)) or value < 0:
        f.problem(_RATIO, "invalid_value", f"{f.path(_RATIO)} must be a non-negative number")
        return None
    return Decimal(ratio_text(value))


def _snapshot(a: Fields) -> ReserveSnapshot | None:
    s = a.object("snapshot")
    if s is None:
        return None
    reserves = _amount(s, "reservesGbp")
    supply = _amount(s, "supplyIssued")
    ratio = _ratio(s)
    s.check_unknown(_RATIO)
    if reserves is None or supply is None or ratio is None:
        return None
    return ReserveSnapshot(reserves, supply, ratio)


def _issuer_id(a: Fields) -> str | None:
    text = a.text("issuerId", length_max=64)
    if text is None:
        return None
    try:
        uuid.UUID(text)
    except ValueError:
        a.problem("issuerId", "invalid_value", f"{a.path('issuerId')} must be a UUID")
        return None
    return text


def _generated_at(a: Fields) -> str | None:
    text = a.text("generatedAt", length_max=64)
    if text is None:
        return None
    try:
        parse_iso(text)
    except ValueError:
        a.problem("generatedAt", "invalid_timestamp",
                  f"{a.path('generatedAt')} must be an ISO 8601 timestamp with a time zone")
        return None
    return text


def _proof(a: Fields) -> str | None:
    text = a.text("proof", length_max=200)
    if text is not None and not _PROOF.fullmatch(text):
        a.problem("proof", "invalid_value", f"{a.path('proof')} must be 64 lowercase hex digits")
        return None
    return text


def _read_artifact(f: Fields) -> tuple[ReserveArtifact, str] | None:
    """The presented artifact and proof; ``keyId`` first, so a foreign key decides the 400."""
    a = f.object("artifact")
    if a is None:
        return None
    key_id = a.text("keyId", length_max=200)
    if key_id is not None and key_id != KEY_ID:
        a.problem("keyId", "unknown_key_id",
                  f"{a.path('keyId')} must be {KEY_ID}; no other policy key is known")
    artifact_id = a.text("artifactId", length_max=64)
    issuer_id = _issuer_id(a)
    generated_at = _generated_at(a)
    passed = a.flag("pass")
    snapshot = _snapshot(a)
    proof_system = a.text("proofSystem", choices=(PROOF_SYSTEM,))
    proof = _proof(a)
    a.check_unknown()
    if (artifact_id is None or issuer_id is None or generated_at is None or passed is None
            or snapshot is None or proof_system is None or proof is None):
        return None
    return ReserveArtifact(artifact_id, issuer_id, generated_at, passed, snapshot), proof


def verify_artifact(ctx: Context) -> Reply:
    f = ctx.fields()
    presented = _read_artifact(f)
    f.done()
    assert presented is not None
    artifact, proof = presented
    verdict = verify(ctx.store(ReserveProofs).key, artifact, proof)
    ctx.world.log.append("reserve.proof_verified", participantId=ctx.caller.id,
                         artifactId=artifact.artifact_id, issuerId=artifact.issuer_id,
                         passed=verdict.passed, proofVerified=verdict.proof_verified,
                         policySatisfied=verdict.policy_satisfied)
    return Reply(200, {"pass": verdict.passed, "keyId": KEY_ID,
                       "proofVerified": verdict.proof_verified,
                       "policySatisfied": verdict.policy_satisfied})


_PROOFS = (Capability.GENERATE_RESERVE_PROOF,)
ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/reserves/{issuerId}/proof/generate", generate,
          "generate the caller's reserve proof now", _PROOFS),
    Route("GET", "/api/v1/reserves/{issuerId}/proof", latest,
          "the caller's latest reserve proof artifact", _PROOFS),
    Route("POST", "/api/v1/reserves/proof/verify", verify_artifact,
          "verify a reserve proof artifact against the sandbox policy key", (),
          (CredentialKind.TENANT_ADMIN,)),
)
