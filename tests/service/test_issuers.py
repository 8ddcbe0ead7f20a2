"""Issuer routes: PUT capabilities and POST custody/verify-delegation.

Spec, "Issuers"; "Issuer capability profile" and its "Saved profile response"; "Custody
delegation result"; Authentication 2 (``manageIssuedAssets``: issuer tenant admins, own
participant only) and 3 ("issuer profiles apply only to the caller's own participant");
Versioning 3 (``profileVersion`` + 1 per save; in-flight transactions keep theirs).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from clearing_sim.domain.profile import Ledger, SettlementMode
from clearing_sim.sim import chain_formats
from clearing_sim.sim.custody import Signer, Thresholds, parse_account
from tests.service.conftest import Caller, Service

NOT_A_UUID = "not-a-uuid"
UNKNOWN_UUID = "7f0c2a8e-1b1d-4c4e-9a0e-5a9d6c3b2a10"


def profile_body(mode: int, ledger: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "commitPoint": "ON_OBSERVATION" if mode == 1 else "ON_INSTRUCTION",
        "custodyModel": "POOLED_ISSUER_WALLET",
        "feedbackChannel": ["POLLABLE_RESOURCE"],
        "fiatLeg": "NUVANTE_SETTLES_RTGS",
        "ledger": ledger,
    }
    if mode != 1:
        body["preBurnTransferRequired"] = mode == 3
        body["apiBaseUrl"] = f"https://issuer-{mode}.example/api"
    return {**body, **extra}


def put(svc: Service, caller: Caller, body: Any, issuer_id: str | None = None,
        token: str | None = None, headers: dict[str, str] | None = None) -> Any:
    target = issuer_id or caller.participant.id
    return svc.call("PUT", f"/api/v1/issuers/{target}/capabilities",
                    token or caller.admin, body, headers=headers)


def delegation(svc: Service, caller: Caller, body: Any, issuer_id: str | None = None,
               token: str | None = None) -> Any:
    target = issuer_id or caller.participant.id
    return svc.call("POST", f"/api/v1/issuers/{target}/custody/verify-delegation",
                    token or caller.admin, body)


def codes(response: Any) -> list[str]:
    return [e["code"] for e in response.json()["errors"]]


# PUT /issuers/{issuerId}/capabilities ------------------------------------------------------
def test_put_answers_the_saved_profile_response_with_version_plus_one(svc: Service) -> None:
    """Saved profile response: issuerId, profileVersion, commitPoint, custodyModel,
    feedbackChannel, fiatLeg, ledger, effectiveFrom (the save's virtual time)."""
    issuer = svc.issuers[2]
    svc.world.advance(61_000)
    response = put(svc, issuer, profile_body(2, "evm", approvalSlaSeconds=120))
    assert response.status == 200
    data = response.json()["data"]
    assert {k: data[k] for k in ("issuerId", "profileVersion", "commitPoint", "custodyModel",
                                 "feedbackChannel", "fiatLeg", "ledger", "effectiveFrom")} == {
        "issuerId": issuer.participant.id, "profileVersion": 2,
        "commitPoint": "ON_INSTRUCTION", "custodyModel": "POOLED_ISSUER_WALLET",
        "feedbackChannel": ["POLLABLE_RESOURCE"], "fiatLeg": "NUVANTE_SETTLES_RTGS",
        "ledger": "evm", "effectiveFrom": "2026-01-01T00:01:01.000Z"}
    assert data["settlementMode"] == "MODE_2_TWO_PHASE"
    assert data["approvalSlaSeconds"] == 120 and data["webhookUrl"] is None
    assert data["issuingAccount"] == issuer.participant.issuing_account
    assert issuer.participant.profile.approval_sla_s == 120


def test_each_save_increases_profile_version_by_one(svc: Service) -> None:
    issuer = svc.issuers[3]
    versions = [put(svc, issuer, profile_body(3, "solana", approvalSlaSeconds=s))
                .json()["data"]["profileVersion"] for s in (60, 61, 62)]
    assert versions == [2, 3, 4]
    assert issuer.participant.profile_version == 4
    assert [r["profileVersion"] for r in svc.world.log.select(
        "profile.saved", issuerId=issuer.participant.id)] == [1, 2, 3, 4]


def test_a_transaction_keeps_the_profile_version_it_captured(svc: Service) -> None:
    """Versioning 3: an update applies only to transactions started after the write."""
    issuer = svc.issuers[2]
    before = svc.call("POST", "/api/v1/transactions", svc.member.key,
                      svc.redeem_body(2, reference="BEFORE"))
    assert before.status == 201
    saved = put(svc, issuer, profile_body(3, "evm"))  # Mode 2 → Mode 3
    assert saved.json()["data"]["settlementMode"] == "MODE_3_PRE_BURN_TRANSFER"
    after = svc.call("POST", "/api/v1/transactions", svc.member.key,
                     svc.redeem_body(2, reference="AFTER"))
    old = svc.world.transactions[before.json()["data"]["id"]]
    new = svc.world.transactions[after.json()["data"]["id"]]
    assert (old.legs[0].profile_version, old.legs[0].mode) == (1, SettlementMode.MODE_2)
    assert (new.legs[0].profile_version, new.legs[0].mode) == (2, SettlementMode.MODE_3)
    svc.world.run_all()
    for tx_id in (old.id, new.id):
        got = svc.call("GET", f"/api/v1/transactions/{tx_id}", svc.member.key).json()["data"]
        assert got["lifecycleStatus"] == "settled"
        assert "profileVersion" not in got  # "clients cannot read it on the transaction"


@pytest.mark.parametrize(("body", "code"), [
    ({**profile_body(2, "evm"), "colour": "blue"}, "unknown_field"),
    ({k: v for k, v in profile_body(2, "evm").items() if k != "ledger"}, "required"),
    (profile_body(2, "evm", commitPoint="LATER"), "invalid_value"),
    (profile_body(2, "stellar"), "ledger_change"),
    ([profile_body(2, "evm")], "invalid_body"),
])
def test_a_refused_put_leaves_the_profile_version_unchanged(svc: Service, body: Any,
                                                            code: str) -> None:
    issuer = svc.issuers[2]
    response = put(svc, issuer, body)
    assert response.status == 400 and codes(response)[0] == code
    assert issuer.participant.profile_version == 1
    assert svc.world.log.select("profile.saved", issuerId=issuer.participant.id)[-1][
        "profileVersion"] == 1
    assert put(svc, issuer, profile_body(2, "evm")).json()["data"]["profileVersion"] == 2


def test_a_malformed_json_body_is_400(svc: Service) -> None:
    issuer = svc.issuers[1]
    response = svc.call("PUT", f"/api/v1/issuers/{issuer.participant.id}/capabilities",
                        issuer.admin, body=b"{not json")
    assert response.status == 400 and codes(response) == ["malformed_json"]


@pytest.mark.parametrize("target", ["other_issuer", "member", UNKNOWN_UUID, NOT_A_UUID])
def test_put_for_any_participant_but_ones_own_is_403(svc: Service, target: str) -> None:
    """Authentication 3: issuer profiles apply only to the caller's own participant."""
    issuer_id = {"other_issuer": svc.issuers[3].participant.id,
                 "member": svc.member.participant.id}.get(target, target)
    response = put(svc, svc.issuers[2], profile_body(2, "evm"), issuer_id=issuer_id)
    assert response.status == 403 and codes(response) == ["not_own_participant"]
    assert svc.issuers[3].participant.profile_version == 1
    assert svc.issuers[2].participant.profile_version == 1


@pytest.mark.parametrize("who", ["member_admin", "issuer_key", "member_key"])
def test_put_needs_manage_issued_assets(svc: Service, who: str) -> None:
    """manageIssuedAssets: issuer tenant admins only (not their API keys, not members)."""
    token = {"member_admin": svc.member.admin, "issuer_key": svc.issuers[2].key,
             "member_key": svc.member.key}[who]
    response = put(svc, svc.issuers[2], profile_body(2, "evm"), token=token)
    assert response.status == 403 and codes(response) == ["missing_capability"]
    assert svc.issuers[2].participant.profile_version == 1


def test_put_without_credentials_is_401(svc: Service) -> None:
    issuer = svc.issuers[2].participant.id
    response = svc.call("PUT", f"/api/v1/issuers/{issuer}/capabilities", None,
                        profile_body(2, "evm"))
    assert response.status == 401


def test_an_idempotent_replay_returns_identical_bytes_and_saves_once(svc: Service) -> None:
    issuer = svc.issuers[2]
    headers = {"Idempotency-Key": "profile-save-1"}
    first = put(svc, issuer, profile_body(2, "evm"), headers=headers)
    svc.world.advance(5_000)
    second = put(svc, issuer, profile_body(2, "evm"), headers=headers)
    assert first.status == second.status == 200
    assert first.body == second.body
    assert issuer.participant.profile_version == 2
    conflict = put(svc, issuer, profile_body(2, "evm", approvalSlaSeconds=5), headers=headers)
    assert conflict.status == 409 and issuer.participant.profile_version == 2


def test_the_first_save_of_an_issuer_without_a_profile_opens_its_issuing_account(
        svc: Service) -> None:
    world = svc.world
    fresh = world.add_issuer("Fresh Pound")
    admin = svc.api.credentials.issue_session(fresh.id)
    caller = Caller(fresh, "", admin)
    response = put(svc, caller, profile_body(1, "solana"))
    data = response.json()["data"]
    assert response.status == 200 and data["profileVersion"] == 1
    account = data["issuingAccount"]
    assert account == fresh.issuing_account
    assert parse_account(Ledger.SOLANA, account) == account
    assert world.custody.check(Ledger.SOLANA, account).meets_policy  # first Mode 1 save


def test_put_works_in_production(prod: Service) -> None:
    """Issuer profiles are not sandbox-only (only agents and conformance are)."""
    response = put(prod, prod.issuers[2], profile_body(2, "evm"))
    assert response.status == 200 and response.json()["data"]["profileVersion"] == 2


# POST /issuers/{issuerId}/custody/verify-delegation ----------------------------------------
def test_the_mode_1_example_issuer_verifies_and_meets_the_policy(svc: Service) -> None:
    issuer = svc.issuers[1]
    account = issuer.participant.issuing_account
    response = delegation(svc, issuer, {"chain": "stellar", "accountId": account})
    assert response.status == 200
    data = response.json()["data"]
    operator = svc.world.custody.operator_keys[Ledger.STELLAR]
    assert data["verified"] is True and data["meetsPolicyRequirement"] is True
    assert data["serviceOperatorKey"] == operator
    assert data["signers"] == [{"key": account, "weight": 1}, {"key": operator, "weight": 1}]
    assert data["thresholds"] == {"low": 1, "medium": 2, "high": 2}
    record = svc.world.log.select("custody.checked")[-1]
    assert record["issuerId"] == issuer.participant.id and record["account"] == account
    assert record["meetsPolicyRequirement"] is True


@pytest.mark.parametrize("mode", [2, 3])
def test_any_custody_model_is_checked_on_chain(svc: Service, mode: int) -> None:
    """A Mode 2 or 3 account exists but has no operator co-signer: verified, policy not met."""
    issuer = svc.issuers[mode]
    chain = issuer.participant.profile.ledger.value
    account = issuer.participant.issuing_account
    data = delegation(svc, issuer, {"chain": chain, "accountId": account}).json()["data"]
    assert data["verified"] is True and data["meetsPolicyRequirement"] is False
    assert data["signers"] == [{"key": account, "weight": 1}]
    assert data["thresholds"] == {"low": 0, "medium": 0, "high": 0}
    assert data["serviceOperatorKey"] == svc.world.custody.operator_keys[Ledger(chain)]


def test_an_unknown_account_is_200_not_verified(svc: Service) -> None:
    account = chain_formats.account_id(Ledger.STELLAR, b"\x42" * 32)
    response = delegation(svc, svc.issuers[1], {"chain": "stellar", "accountId": account})
    assert response.status == 200
    data = response.json()["data"]
    assert data["verified"] is False and data["meetsPolicyRequirement"] is False
    assert data["signers"] == [] and data["thresholds"] == {"low": 0, "medium": 0, "high": 0}


def test_an_account_in_another_chains_format_is_400(svc: Service) -> None:
    """accountId must look like an account of the named chain."""
    issuer = svc.issuers[3]
    stellar = svc.issuers[1].participant.issuing_account
    for chain in ("evm", "solana"):
        response = delegation(svc, issuer, {"chain": chain, "accountId": stellar})
        assert response.status == 400 and codes(response) == ["invalid_value"]


def test_a_misconfigured_account_does_not_meet_the_policy(svc: Service) -> None:
    issuer = svc.issuers[1]
    account = issuer.participant.issuing_account
    assert account is not None
    operator = svc.world.custody.operator_keys[Ledger.STELLAR]
    svc.world.custody.set_signers(Ledger.STELLAR, account,
                                  [Signer(account, 1), Signer(operator, 1)], Thresholds(1, 1, 2))
    data = delegation(svc, issuer, {"chain": "stellar", "accountId": account}).json()["data"]
    assert data["verified"] is True and data["meetsPolicyRequirement"] is False
    assert data["thresholds"] == {"low": 1, "medium": 1, "high": 2}


def test_evm_accounts_are_matched_whatever_their_case(svc: Service) -> None:
    issuer = svc.issuers[2]
    account = issuer.participant.issuing_account
    assert account is not None
    upper = "0x" + account[2:].upper()
    data = delegation(svc, issuer, {"chain": "evm", "accountId": upper}).json()["data"]
    assert data["verified"] is True and data["accountId"] == account


@pytest.mark.parametrize(("body", "param", "code"), [
    ({"accountId": "x"}, "chain", "required"),
    ({"chain": "stellar"}, "accountId", "required"),
    ({"chain": "canton", "accountId": "x"}, "chain", "invalid_value"),
    ({"chain": "stellar", "accountId": 7}, "accountId", "invalid_type"),
    ({"chain": "stellar", "accountId": "GABC"}, "accountId", "invalid_value"),
    ({"chain": "evm", "accountId": "0x1234"}, "accountId", "invalid_value"),
    ({"chain": "solana", "accountId": "0" * 44}, "accountId", "invalid_value"),
    ({"chain": "stellar", "accountId": "x", "custodyModel": "mpc"}, "custodyModel",
     "unknown_field"),
])
def test_verify_delegation_refuses_a_bad_body(svc: Service, body: dict[str, Any], param: str,
                                              code: str) -> None:
    response = delegation(svc, svc.issuers[1], body)
    assert response.status == 400
    errors = response.json()["errors"]
    assert any(e["param"] == param and e["code"] == code for e in errors), errors
    assert svc.world.log.select("custody.checked") == []


@pytest.mark.parametrize("target", ["other_issuer", UNKNOWN_UUID, NOT_A_UUID])
def test_verify_delegation_for_another_participant_is_403(svc: Service, target: str) -> None:
    issuer_id = {"other_issuer": svc.issuers[1].participant.id}.get(target, target)
    body = {"chain": "stellar", "accountId": svc.issuers[1].participant.issuing_account}
    response = delegation(svc, svc.issuers[2], body, issuer_id=issuer_id)
    assert response.status == 403 and codes(response) == ["not_own_participant"]


@pytest.mark.parametrize("who", ["member_admin", "issuer_key"])
def test_verify_delegation_needs_manage_issued_assets(svc: Service, who: str) -> None:
    token = {"member_admin": svc.member.admin, "issuer_key": svc.issuers[1].key}[who]
    body = {"chain": "stellar", "accountId": svc.issuers[1].participant.issuing_account}
    response = delegation(svc, svc.issuers[1], body, token=token)
    assert response.status == 403 and codes(response) == ["missing_capability"]


def test_switching_to_mode_1_by_put_delegates_the_issuing_account(svc: Service) -> None:
    """The first Mode 1 save configures the operator co-signer, so Mode 1 can go live."""
    issuer = svc.issuers[2]
    account = issuer.participant.issuing_account
    body = {"chain": "evm", "accountId": account}
    assert delegation(svc, issuer, body).json()["data"]["meetsPolicyRequirement"] is False
    assert put(svc, issuer, profile_body(1, "evm")).status == 200
    assert delegation(svc, issuer, body).json()["data"]["meetsPolicyRequirement"] is True


def test_verify_delegation_reads_state_without_changing_it(svc: Service) -> None:
    world = svc.world
    world.fund(svc.member.participant, svc.cast.asset(1), Decimal("1.00"))
    issuer = svc.issuers[1]
    account = issuer.participant.issuing_account
    assert account is not None
    before = world.custody.config(Ledger.STELLAR, account)
    delegation(svc, issuer, {"chain": "stellar", "accountId": account})
    assert world.custody.config(Ledger.STELLAR, account) == before
    assert world.log.select("custody.signers", account=account)[-1]["cause"] == "mode_1_profile"
