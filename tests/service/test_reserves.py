"""Reserve proof routes: generate, read the latest, verify.

Spec, "Reserve proofs (issuers)": generate needs ``generateReserveProof`` (issuer tenant
admins only); GET returns the proof artifact; verify takes ``{artifact}``, any valid portal
session, answers ``{pass, keyId}`` and 400 when ``keyId`` is not ``reserve-policy-v1-sandbox``.
Spec, "Reserve proof artifact": issuerId, keyId, generatedAt, pass, snapshot {reservesGbp,
supplyIssued, centralBankDepositRatio (number)}. Errors: 400 for a foreign keyId.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

import pytest

from clearing_sim.sim.examples import issuer_profile
from tests.service.conftest import Caller, Service, make_service

UNKNOWN_UUID = "7f0c2a8e-1b1d-4c4e-9a0e-5a9d6c3b2a10"


def generate(svc: Service, caller: Caller, issuer_id: str | None = None,
             token: str | None = None, **kwargs: Any) -> Any:
    target = issuer_id or caller.participant.id
    return svc.call("POST", f"/api/v1/reserves/{target}/proof/generate", token or caller.admin,
                    **kwargs)


def latest(svc: Service, caller: Caller, issuer_id: str | None = None,
           token: str | None = None) -> Any:
    target = issuer_id or caller.participant.id
    return svc.call("GET", f"/api/v1/reserves/{target}/proof", token or caller.admin)


def verify(svc: Service, token: str, body: Any) -> Any:
    return svc.call("POST", "/api/v1/reserves/proof/verify", token, body)


def codes(response: Any) -> list[str]:
    return [e["code"] for e in response.json()["errors"]]


def small_issuer(svc: Service, reserves: str = "50.00", minted: str = "100.00") -> Caller:
    """An issuer with ``reserves`` at the RTGS adapter and ``minted`` of GBPT in circulation."""
    world = svc.world
    tiny = world.add_issuer("Tiny Pound", issuer_profile(2, ledger="evm"), ("GBPT",),
                            Decimal(reserves))
    world.fund(svc.member.participant, tiny.assets[0], Decimal(minted))
    return Caller(tiny, svc.api.credentials.issue_api_key(tiny.id)[1],
                  svc.api.credentials.issue_session(tiny.id))


# generate and GET ---------------------------------------------------------------------------
def test_generate_answers_201_with_the_artifact_at_the_current_virtual_time(
        svc: Service) -> None:
    issuer = svc.issuers[2]
    svc.world.advance(90_000)
    response = generate(svc, issuer)
    assert response.status == 201
    data = response.json()["data"]
    assert data["issuerId"] == issuer.participant.id
    assert data["keyId"] == "reserve-policy-v1-sandbox"
    assert data["generatedAt"] == "2026-01-01T00:01:30.000Z"
    assert data["pass"] is True
    assert data["snapshot"] == {"reservesGbp": "10000000.00", "supplyIssued": "10000.00",
                                "centralBankDepositRatio": 1000}
    assert isinstance(data["snapshot"]["centralBankDepositRatio"], float)
    assert data["proofSystem"] == "simulated-hmac-sha256" and len(data["proof"]) == 64
    record = svc.world.log.select("reserve.proof_generated")[-1]
    assert record["artifactId"] == data["artifactId"] and record["passed"] is True


def test_get_is_404_before_the_first_proof_then_the_latest_artifact(svc: Service) -> None:
    issuer = svc.issuers[1]
    missing = latest(svc, issuer)
    assert missing.status == 404 and codes(missing) == ["reserve_proof_not_found"]
    first = generate(svc, issuer).json()["data"]
    assert latest(svc, issuer).json()["data"] == first
    svc.world.advance(1_000)
    second = generate(svc, issuer).json()["data"]
    assert second["artifactId"] != first["artifactId"]
    assert latest(svc, issuer).json()["data"] == second
    assert latest(svc, svc.issuers[2]).status == 404  # one issuer's proof is not another's


def test_an_issuer_whose_reserves_fall_below_supply_fails_and_verify_agrees(
        svc: Service) -> None:
    """Policy: reserves ≥ supply. 50.00 of deposits behind 100.00 issued: pass false."""
    tiny = small_issuer(svc)
    data = generate(svc, tiny).json()["data"]
    assert data["pass"] is False
    assert data["snapshot"] == {"reservesGbp": "50.00", "supplyIssued": "100.00",
                                "centralBankDepositRatio": 0.5}
    verdict = verify(svc, svc.member.admin, {"artifact": data})
    assert verdict.status == 200
    assert verdict.json()["data"] == {"pass": False, "keyId": "reserve-policy-v1-sandbox",
                                      "proofVerified": True, "policySatisfied": False}


def test_reserves_exactly_equal_to_supply_pass(svc: Service) -> None:
    tiny = small_issuer(svc, reserves="100.00", minted="100.00")
    data = generate(svc, tiny).json()["data"]
    assert data["pass"] is True and data["snapshot"]["centralBankDepositRatio"] == 1
    assert verify(svc, tiny.admin, {"artifact": data}).json()["data"]["pass"] is True


def test_an_issuer_with_nothing_issued_passes_with_ratio_one(svc: Service) -> None:
    world = svc.world
    bare = world.add_issuer("Bare Pound", issuer_profile(3), (), Decimal("0.00"))
    caller = Caller(bare, "", svc.api.credentials.issue_session(bare.id))
    data = generate(svc, caller).json()["data"]
    assert data["snapshot"] == {"reservesGbp": "0.00", "supplyIssued": "0.00",
                                "centralBankDepositRatio": 1}
    assert data["pass"] is True


def test_the_snapshot_follows_settlement(svc: Service) -> None:
    """A settled redeem of 100.00 burns 100.00 of supply and pays 100.00 out of reserves."""
    issuer = svc.issuers[2]
    assert svc.call("POST", "/api/v1/transactions", svc.member.key,
                    svc.redeem_body(2, "100.00")).status == 201
    svc.world.run_all()
    snapshot = generate(svc, issuer).json()["data"]["snapshot"]
    assert snapshot["supplyIssued"] == "9900.00"
    assert snapshot["reservesGbp"] == "9999900.00"


def test_an_earmark_the_issuer_pays_still_counts_as_its_reserves(svc: Service) -> None:
    """Until it settles, earmarked money is still the issuer's central-bank deposit."""
    issuer = svc.issuers[2]
    svc.call("POST", "/api/v1/transactions", svc.member.key, svc.redeem_body(2, "100.00"))
    for _ in range(2_000):
        if svc.world.rtgs.earmarks:
            break
        svc.world.advance(50)
    assert svc.world.rtgs.earmarks, "the redeem never earmarked"
    assert svc.world.rtgs.balances[issuer.participant.id] < Decimal("10000000.00")
    snapshot = generate(svc, issuer).json()["data"]["snapshot"]
    assert snapshot["reservesGbp"] == "10000000.00"


def test_generate_refuses_a_body_field(svc: Service) -> None:
    response = generate(svc, svc.issuers[1], json={"asOf": "2026-01-01T00:00:00Z"})
    assert response.status == 400 and codes(response) == ["unknown_field"]
    assert svc.world.log.select("reserve.proof_generated") == []


def test_an_idempotent_replay_of_generate_returns_the_same_artifact(svc: Service) -> None:
    issuer = svc.issuers[1]
    headers = {"Idempotency-Key": "proof-1"}
    first = generate(svc, issuer, headers=headers)
    svc.world.advance(10_000)
    second = generate(svc, issuer, headers=headers)
    assert first.status == second.status == 201 and first.body == second.body
    assert len(svc.world.log.select("reserve.proof_generated")) == 1


@pytest.mark.parametrize("who", ["member_admin", "issuer_key", "member_key"])
def test_generate_and_get_need_generate_reserve_proof(svc: Service, who: str) -> None:
    """generateReserveProof: issuer tenant admins only."""
    token = {"member_admin": svc.member.admin, "issuer_key": svc.issuers[1].key,
             "member_key": svc.member.key}[who]
    for response in (generate(svc, svc.issuers[1], token=token),
                     latest(svc, svc.issuers[1], token=token)):
        assert response.status == 403 and codes(response) == ["missing_capability"]


@pytest.mark.parametrize("target", ["other_issuer", "member", UNKNOWN_UUID, "not-a-uuid"])
def test_generate_and_get_for_another_participant_are_403(svc: Service, target: str) -> None:
    issuer_id = {"other_issuer": svc.issuers[2].participant.id,
                 "member": svc.member.participant.id}.get(target, target)
    generate(svc, svc.issuers[2])  # the other issuer has a proof: still not readable
    for response in (generate(svc, svc.issuers[1], issuer_id=issuer_id),
                     latest(svc, svc.issuers[1], issuer_id=issuer_id)):
        assert response.status == 403 and codes(response) == ["not_own_participant"]
    assert len(svc.world.log.select("reserve.proof_generated")) == 1


# verify -------------------------------------------------------------------------------------
def test_any_portal_session_verifies_a_genuine_artifact(svc: Service) -> None:
    artifact = generate(svc, svc.issuers[3]).json()["data"]
    for token in (svc.member.admin, svc.other.admin, svc.issuers[1].admin, svc.issuers[3].admin):
        response = verify(svc, token, {"artifact": artifact})
        assert response.status == 200
        assert response.json()["data"] == {"pass": True, "keyId": "reserve-policy-v1-sandbox",
                                           "proofVerified": True, "policySatisfied": True}
    assert len(svc.world.log.select("reserve.proof_verified", passed=True)) == 4


@pytest.mark.parametrize("who", ["member_key", "issuer_key"])
def test_verify_with_an_api_key_is_403(svc: Service, who: str) -> None:
    """"any valid portal session (JWT)": a machine API key is not one."""
    artifact = generate(svc, svc.issuers[1]).json()["data"]
    token = {"member_key": svc.member.key, "issuer_key": svc.issuers[1].key}[who]
    response = verify(svc, token, {"artifact": artifact})
    assert response.status == 403 and codes(response) == ["missing_capability"]


def test_verify_without_credentials_is_401(svc: Service) -> None:
    artifact = generate(svc, svc.issuers[1]).json()["data"]
    assert verify(svc, "", {"artifact": artifact}).status == 401


def _tamper(artifact: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(artifact)
    target = changed
    for name in path[:-1]:
        target = target[name]
    target[path[-1]] = value
    return changed


@pytest.mark.parametrize(("path", "value"), [
    (("snapshot", "supplyIssued"), "1.00"),
    (("snapshot", "reservesGbp"), "20000000.00"),
    (("snapshot", "centralBankDepositRatio"), 999.5),
    (("issuerId", ), UNKNOWN_UUID),
    (("generatedAt",), "2027-01-01T00:00:00.000Z"),
    (("artifactId",), "another"),
    (("proof",), "0" * 64),
])
def test_a_tampered_artifact_does_not_pass(svc: Service, path: tuple[str, ...],
                                           value: Any) -> None:
    artifact = generate(svc, svc.issuers[2]).json()["data"]
    response = verify(svc, svc.member.admin, {"artifact": _tamper(artifact, path, value)})
    assert response.status == 200
    data = response.json()["data"]
    assert data["pass"] is False and data["proofVerified"] is False


def test_a_failing_artifact_doctored_to_pass_does_not_pass(svc: Service) -> None:
    tiny = small_issuer(svc)
    artifact = generate(svc, tiny).json()["data"]
    doctored = _tamper(_tamper(artifact, ("pass",), True),
                       ("snapshot", "reservesGbp"), "150.00")
    doctored["snapshot"]["centralBankDepositRatio"] = 1.5
    assert verify(svc, svc.member.admin, {"artifact": doctored}).json()["data"]["pass"] is False


def test_an_artifact_re_serialised_by_another_client_still_verifies(svc: Service) -> None:
    """A JSON number is a value: 1000.0 sent back as 1000, fields in another order, verifies."""
    artifact = generate(svc, svc.issuers[2]).json()["data"]
    ratio = artifact["snapshot"]["centralBankDepositRatio"]
    assert ratio == 1000
    reordered = dict(reversed(list(artifact.items())))
    body = json.dumps({"artifact": reordered}).replace("1000.0", "1000").encode()
    response = svc.call("POST", "/api/v1/reserves/proof/verify", svc.member.admin, body=body)
    assert response.json()["data"]["pass"] is True


def test_a_foreign_key_id_is_400_unknown_key_id(svc: Service) -> None:
    artifact = generate(svc, svc.issuers[1]).json()["data"]
    for key_id in ("reserve-policy-v1", "reserve-policy-v2-production", ""):
        response = verify(svc, svc.member.admin,
                          {"artifact": {**artifact, "keyId": key_id}})
        assert response.status == 400
        assert codes(response)[0] == ("unknown_key_id" if key_id else "invalid_value")
        assert response.json()["errors"][0]["param"] == "artifact.keyId"


def test_a_foreign_key_id_decides_the_400_even_with_other_problems(svc: Service) -> None:
    response = verify(svc, svc.member.admin, {"artifact": {"keyId": "k2", "pass": "yes"}})
    assert response.status == 400 and codes(response)[0] == "unknown_key_id"


@pytest.mark.parametrize(("body", "param", "code"), [
    ({}, "artifact", "required"),
    ({"artifact": "proof"}, "artifact", "invalid_type"),
    ({"artifact": None}, "artifact", "invalid_type"),
    ("artifact", None, "invalid_body"),
])
def test_verify_needs_an_artifact_object(svc: Service, body: Any, param: str | None,
                                         code: str) -> None:
    response = verify(svc, svc.member.admin, body)
    assert response.status == 400
    first = response.json()["errors"][0]
    assert (first["code"], first.get("param")) == (code, param)


@pytest.mark.parametrize(("path", "value", "param", "code"), [
    (("snapshot", "reservesGbp"), "-1.00", "artifact.snapshot.reservesGbp", "invalid_value"),
    (("snapshot", "supplyIssued"), 100, "artifact.snapshot.supplyIssued", "invalid_type"),
    (("snapshot", "centralBankDepositRatio"), "1.5",
     "artifact.snapshot.centralBankDepositRatio", "invalid_value"),
    (("snapshot", "centralBankDepositRatio"), True,
     "artifact.snapshot.centralBankDepositRatio", "invalid_value"),
    (("snapshot", "centralBankDepositRatio"), -1, "artifact.snapshot.centralBankDepositRatio",
     "invalid_value"),
    (("snapshot", "extra"), 1, "artifact.snapshot.extra", "unknown_field"),
    (("snapshot",), [], "artifact.snapshot", "invalid_type"),
    (("issuerId",), "issuer-7", "artifact.issuerId", "invalid_value"),
    (("generatedAt",), "yesterday", "artifact.generatedAt", "invalid_timestamp"),
    (("pass",), "true", "artifact.pass", "invalid_type"),
    (("proof",), "XYZ", "artifact.proof", "invalid_value"),
    (("proofSystem",), "groth16", "artifact.proofSystem", "invalid_value"),
    (("signature",), "abc", "artifact.signature", "unknown_field"),
])
def test_a_malformed_artifact_is_400(svc: Service, path: tuple[str, ...], value: Any,
                                     param: str, code: str) -> None:
    artifact = generate(svc, svc.issuers[1]).json()["data"]
    response = verify(svc, svc.member.admin, {"artifact": _tamper(artifact, path, value)})
    assert response.status == 400
    errors = response.json()["errors"]
    assert any(e.get("param") == param and e["code"] == code for e in errors), errors
    assert svc.world.log.select("reserve.proof_verified") == []


def test_a_missing_artifact_field_is_required(svc: Service) -> None:
    artifact = generate(svc, svc.issuers[1]).json()["data"]
    del artifact["proof"]
    del artifact["snapshot"]["centralBankDepositRatio"]
    response = verify(svc, svc.member.admin, {"artifact": artifact})
    params = {e["param"] for e in response.json()["errors"] if e["code"] == "required"}
    assert params == {"artifact.proof", "artifact.snapshot.centralBankDepositRatio"}


def test_verify_refuses_fields_beside_the_artifact(svc: Service) -> None:
    artifact = generate(svc, svc.issuers[1]).json()["data"]
    response = verify(svc, svc.member.admin, {"artifact": artifact, "strict": True})
    assert response.status == 400 and codes(response) == ["unknown_field"]


def test_an_artifact_from_another_world_does_not_verify(svc: Service) -> None:
    """The policy key is the world's: another seed's artifact has a proof that fails here."""
    elsewhere = make_service(seed=1)
    artifact = generate(elsewhere, elsewhere.issuers[1]).json()["data"]
    data = verify(svc, svc.member.admin, {"artifact": artifact}).json()["data"]
    assert data["pass"] is False and data["proofVerified"] is False


def test_proofs_are_deterministic_for_a_seed(svc: Service) -> None:
    again = make_service()
    assert generate(svc, svc.issuers[1]).body == generate(again, again.issuers[1]).body


def test_reserve_routes_work_in_production(prod: Service) -> None:
    """Not sandbox-only: the spec marks only agents and conformance so."""
    generated = generate(prod, prod.issuers[1])
    assert generated.status == 201
    artifact = generated.json()["data"]
    assert artifact["keyId"] == "reserve-policy-v1-sandbox"
    assert latest(prod, prod.issuers[1]).status == 200
    assert verify(prod, prod.member.admin, {"artifact": artifact}).json()["data"]["pass"] is True
