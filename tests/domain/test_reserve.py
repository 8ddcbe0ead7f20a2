"""Reserve proof rules (spec, "Reserve proof artifact" and "Reserve proofs (issuers)").

The policy (reserves ≥ supply), the ratio (a JSON number, rounded down, 1 with nothing issued),
the canonical content and the simulated proof: a verdict passes only when the proof verifies
over the presented content and that content satisfies the policy.
"""

from __future__ import annotations

import json
from decimal import Decimal

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.reserve import (
    KEY_ID,
    RATIO_DIGITS_MAX,
    ReserveArtifact,
    ReserveSnapshot,
    canonical_content,
    deposit_ratio,
    policy_holds,
    prove,
    ratio_text,
    verify,
)

KEY = b"k" * 32
ISSUER = "0b0e5f5e-7a4a-4a52-9d0c-3a1c8a1b2c3d"


def _decimals(places: int, high: str = "1e12") -> st.SearchStrategy[Decimal]:
    return st.decimals(min_value=Decimal(0), max_value=Decimal(high), places=places,
                       allow_nan=False, allow_infinity=False)


def _artifact(reserves: str = "150.00", supply: str = "100.00") -> ReserveArtifact:
    snapshot = ReserveSnapshot.take(Decimal(reserves), Decimal(supply))
    return ReserveArtifact("art-1", ISSUER, "2026-01-01T00:00:00.000Z", policy_holds(snapshot),
                           snapshot)


def test_key_id_is_the_sandbox_policy_key() -> None:
    assert KEY_ID == "reserve-policy-v1-sandbox"


@pytest.mark.parametrize(("reserves", "supply", "ratio"), [
    ("150.00", "100.00", "1.5"),
    ("100.00", "100.00", "1"),
    ("2.00", "3.00", "0.666666"),  # rounded down, never up to a pass
    ("99999.99", "100000.00", "0.999999"),
    ("0.00", "100.00", "0"),
    ("10000000.00", "0.01", "1000000000"),
])
def test_ratio_is_reserves_over_supply_rounded_down(reserves: str, supply: str,
                                                    ratio: str) -> None:
    assert ratio_text(deposit_ratio(Decimal(reserves), Decimal(supply))) == ratio


def test_ratio_with_nothing_issued_is_one_and_the_policy_holds() -> None:
    snapshot = ReserveSnapshot.take(Decimal("0.00"), Decimal("0.00"))
    assert snapshot.ratio == 1 and policy_holds(snapshot)
    assert ReserveSnapshot.take(Decimal("5.00"), Decimal(0)).ratio == 1


@given(_decimals(2), _decimals(18, "1e6"))
def test_pass_is_exactly_ratio_at_least_one(reserves: Decimal, supply: Decimal) -> None:
    """Policy v1: reserves ≥ supply; the published ratio agrees with the verdict."""
    snapshot = ReserveSnapshot.take(reserves, supply)
    assert policy_holds(snapshot) is (reserves >= supply)
    assert policy_holds(snapshot) is (snapshot.ratio >= 1)


@given(_decimals(2), _decimals(18, "1e6"))
def test_ratio_survives_a_json_float_round_trip(reserves: Decimal, supply: Decimal) -> None:
    """``centralBankDepositRatio`` is a JSON number: as a float it keeps its exact value."""
    ratio = deposit_ratio(reserves, supply)
    assert len(ratio.normalize().as_tuple().digits) <= RATIO_DIGITS_MAX
    back = json.loads(json.dumps(float(ratio)))
    assert ratio_text(back) == ratio_text(ratio)


def test_ratio_text_is_one_value_for_one_number() -> None:
    assert ratio_text(1) == ratio_text(1.0) == ratio_text(Decimal("1.000000")) == "1"
    assert ratio_text(1e21) == "1000000000000000000000"
    assert ratio_text(Decimal("0.000")) == "0"
    assert ratio_text(1.5) != ratio_text(1.5000001)


def test_canonical_content_is_sorted_compact_json_without_the_proof() -> None:
    content = json.loads(canonical_content(_artifact()))
    assert list(content) == sorted(content)
    assert "proof" not in content
    assert content["snapshot"] == {"centralBankDepositRatio": "1.5", "reservesGbp": "150.00",
                                   "supplyIssued": "100.00"}
    assert b" " not in canonical_content(_artifact())


def test_a_genuine_passing_artifact_verifies() -> None:
    artifact = _artifact()
    verdict = verify(KEY, artifact, prove(KEY, artifact))
    assert verdict.proof_verified and verdict.policy_satisfied and verdict.passed


def test_a_genuine_failing_artifact_verifies_but_does_not_pass() -> None:
    """Reserves below supply: the proof is sound, the policy is not met, so pass is false."""
    artifact = _artifact("50.00", "100.00")
    assert not artifact.passed
    verdict = verify(KEY, artifact, prove(KEY, artifact))
    assert verdict.proof_verified and not verdict.policy_satisfied and not verdict.passed


@pytest.mark.parametrize("tamper", [
    lambda a: attrs.evolve(a, snapshot=ReserveSnapshot.take(Decimal("999.00"),
                                                            Decimal("100.00"))),
    lambda a: attrs.evolve(a, snapshot=attrs.evolve(a.snapshot, supply_issued=Decimal("90.00"))),
    lambda a: attrs.evolve(a, issuer_id="11111111-1111-4111-8111-111111111111"),
    lambda a: attrs.evolve(a, generated_at="2026-01-02T00:00:00.000Z"),
    lambda a: attrs.evolve(a, passed=not a.passed),
    lambda a: attrs.evolve(a, artifact_id="art-2"),
    lambda a: attrs.evolve(a, snapshot=attrs.evolve(a.snapshot, ratio=Decimal("1.4"))),
])
def test_any_change_to_the_content_breaks_the_proof(tamper: object) -> None:
    artifact = _artifact()
    proof = prove(KEY, artifact)
    changed = tamper(artifact)  # type: ignore[operator]
    assert not verify(KEY, changed, proof).passed
    assert not verify(KEY, changed, proof).proof_verified


def test_a_failing_artifact_relabelled_pass_does_not_pass() -> None:
    artifact = attrs.evolve(_artifact("50.00", "100.00"), passed=True)
    verdict = verify(KEY, artifact, prove(KEY, artifact))  # even re-proved by the key holder
    assert verdict.proof_verified and not verdict.passed


def test_a_ratio_inconsistent_with_its_amounts_does_not_pass() -> None:
    artifact = _artifact()
    artifact = attrs.evolve(artifact, snapshot=attrs.evolve(artifact.snapshot,
                                                            ratio=Decimal("7")))
    assert not verify(KEY, artifact, prove(KEY, artifact)).policy_satisfied


def test_another_key_does_not_verify() -> None:
    artifact = _artifact()
    assert not verify(b"x" * 32, artifact, prove(KEY, artifact)).passed
    assert prove(KEY, artifact) == prove(KEY, artifact)  # deterministic
