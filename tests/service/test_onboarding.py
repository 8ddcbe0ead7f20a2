"""Onboarding applications (spec, "Onboarding", "Onboarding application result",
Authentication 5)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.integration import ParticipantCustody
from clearing_sim.domain.parties import ParticipantKind
from clearing_sim.service.onboarding import ApplicationBook
from clearing_sim.service.team import TeamBook
from tests.service.conftest import Service, make_service

APPLY = "/api/v1/onboarding/applications"
PATH = "/api/v1/tools/integration-path"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def _body(**change: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "organisationName": "Eastbank plc",
        "role": "participant",
        "primaryContact": {"name": "Ada Lovelace", "email": "ada@eastbank.example"},
        "custodyModel": "mpc",
        "chains": ["evm", "stellar"],
    }
    body.update(change)
    return {k: v for k, v in body.items() if v is not None}


def _issuer_body(**change: Any) -> dict[str, Any]:
    return _body(**{"organisationName": "Kilo Coin Ltd", "role": "issuer",
                    "commitPoint": "ON_INSTRUCTION", "preBurnTransferRequired": False,
                    "chains": ["solana"], **change})


def _apply(svc: Service, body: dict[str, Any], **kwargs: Any) -> Any:
    return svc.call("POST", APPLY, None, body, **kwargs)


def _snapshot(svc: Service) -> tuple[int, int, int]:
    return (len(svc.world.log), len(list(svc.world.participants)),
            len(svc.api.store(ApplicationBook).applications))


def _unchanged_but_the_request(svc: Service, before: tuple[int, int, int]) -> None:
    """Nothing saved: no participant, no application, the log only gains ``api.request``."""
    assert [r.kind for r in list(svc.world.log)[before[0]:]] == ["api.request"]
    assert _snapshot(svc)[1:] == before[1:]
    assert svc.api.store(TeamBook).members.keys() == set()


# the application ---------------------------------------------------------------------------
def test_an_application_is_201_with_every_field(svc: Service) -> None:
    """Onboarding application result: applicationId, status under_review, derivedMode,
    custodyCompatible, sandbox {accessGranted, apiKeyId, apiKeySecret, participantId},
    production {accessGranted, reviewEta}."""
    response = _apply(svc, _body())
    assert response.status == 201
    data = response.json()["data"]
    assert list(data) == ["applicationId", "status", "derivedMode", "custodyCompatible",
                          "sandbox", "production"]
    assert re.fullmatch(UUID, data["applicationId"])
    assert data["status"] == "under_review"
    assert (data["derivedMode"], data["custodyCompatible"]) == ("MODE_2_TWO_PHASE", True)
    sandbox = data["sandbox"]
    assert list(sandbox) == ["accessGranted", "apiKeyId", "apiKeySecret", "participantId"]
    assert sandbox["accessGranted"] is True
    assert re.fullmatch(UUID, sandbox["apiKeyId"])
    assert re.fullmatch(r"sk_sandbox_[0-9a-f]{64}", sandbox["apiKeySecret"])
    assert re.fullmatch(UUID, sandbox["participantId"])
    assert data["production"] == {"accessGranted": False, "reviewEta": "P14D"}


def test_the_application_creates_the_participant_of_its_role(svc: Service) -> None:
    """role participant = clearing member, issuer = stablecoin issuer (with no profile yet)."""
    member = _apply(svc, _body()).json()["data"]["sandbox"]["participantId"]
    issuer = _apply(svc, _issuer_body()).json()["data"]["sandbox"]["participantId"]
    world = svc.world
    assert (world.participants[member].kind, world.participants[member].name) == (
        ParticipantKind.CLEARING_MEMBER, "Eastbank plc")
    assert world.participants[issuer].kind is ParticipantKind.STABLECOIN_ISSUER
    assert world.participants[issuer].profiles == []
    added = [r["participantId"] for r in world.log.select("participant.added")]
    assert added[-2:] == [member, issuer]


def test_the_first_api_key_works(svc: Service) -> None:
    """Authentication 5: sandbox access and the first API key come with the application;
    the key passes the status check and reads the (empty) transaction list."""
    sandbox = _apply(svc, _body()).json()["data"]["sandbox"]
    key = sandbox["apiKeySecret"]
    assert svc.call("GET", "/api/v1/system/status", key).status == 200
    listing = svc.call("GET", "/api/v1/transactions", key)
    assert (listing.status, listing.json()["data"]) == (200, [])
    record = svc.world.log.select("auth.api_key")[-1]
    assert (record["participantId"], record["apiKeyId"]) == (sandbox["participantId"],
                                                             sandbox["apiKeyId"])


def test_an_issuers_first_key_works_too(svc: Service) -> None:
    key = _apply(svc, _issuer_body()).json()["data"]["sandbox"]["apiKeySecret"]
    assert svc.call("GET", "/api/v1/transactions", key).status == 200


def test_the_primary_contact_becomes_an_active_team_member(svc: Service) -> None:
    """The contact is on the team: inviting the same email is 409 already_member."""
    participant_id = _apply(svc, _body()).json()["data"]["sandbox"]["participantId"]
    member = svc.api.store(TeamBook).member(participant_id, "ADA@eastbank.example")
    assert member is not None and member.name == "Ada Lovelace"
    admin = svc.api.credentials.issue_session(participant_id)
    response = svc.call("POST", "/api/v1/team/invitations", admin,
                        {"email": "ada@eastbank.example"})
    assert (response.status, response.json()["errors"][0]["code"]) == (409, "already_member")


def test_the_application_is_recorded(svc: Service) -> None:
    data = _apply(svc, _issuer_body(custodyModel="self_custody", intendedUseCase="redeem GBPK",
                                    expectedMonthlyVolumeGbp="2500000.50")).json()["data"]
    application = svc.api.store(ApplicationBook).applications[data["applicationId"]]
    assert application.participant_id == data["sandbox"]["participantId"]
    assert application.api_key_id == data["sandbox"]["apiKeyId"]
    assert application.terms.custody is ParticipantCustody.SELF_CUSTODY  # normalised
    assert str(application.terms.expected_monthly_volume_gbp) == "2500000.50"
    assert application.terms.intended_use_case == "redeem GBPK"
    record = svc.world.log.select("onboarding.application")[-1]
    assert record["applicationId"] == data["applicationId"]
    assert "apiKeySecret" not in record.fields


@pytest.mark.parametrize(("change", "mode", "compatible"), [
    ({"commitPoint": "ON_OBSERVATION", "preBurnTransferRequired": None, "custodyModel": "caas"},
     "MODE_1_DELEGATED_SIGNING", False),
    ({"commitPoint": "ON_OBSERVATION", "preBurnTransferRequired": None}, "MODE_1_DELEGATED_SIGNING",
     True),
    ({}, "MODE_2_TWO_PHASE", True),
    ({"preBurnTransferRequired": True, "custodyModel": "caas"}, "MODE_3_PRE_BURN_TRANSFER",
     True),
])
def test_an_issuers_mode_is_derived_from_its_commit_point(
        svc: Service, change: dict[str, Any], mode: str, compatible: bool) -> None:
    """Settlement modes: derived from commitPoint and preBurnTransferRequired; a caas issuer
    cannot add the operator as a Mode 1 co-signer."""
    data = _apply(svc, _issuer_body(**change)).json()["data"]
    assert (data["derivedMode"], data["custodyCompatible"]) == (mode, compatible)


def test_a_participants_mode_is_its_primary_chains(svc: Service) -> None:
    """The first chain listed decides a participant's derived result."""
    stellar = _apply(svc, _body(chains=["stellar", "evm"])).json()["data"]
    solana = _apply(svc, _body(organisationName="Westbank", chains=["solana"])).json()["data"]
    assert (stellar["derivedMode"], solana["derivedMode"]) == (
        "MODE_1_DELEGATED_SIGNING", "MODE_3_PRE_BURN_TRANSFER")


# refusals -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("body", "param", "code"), [
    (_body(organisationName=None), "organisationName", "required"),
    (_body(organisationName=""), "organisationName", "invalid_value"),
    (_body(organisationName="x" * 201), "organisationName", "invalid_value"),
    (_body(role=None), "role", "required"),
    (_body(role="administrator"), "role", "invalid_value"),
    (_body(primaryContact=None), "primaryContact", "required"),
    (_body(primaryContact="ada@eastbank.example"), "primaryContact", "invalid_type"),
    (_body(primaryContact={"email": "ada@eastbank.example"}), "primaryContact.name", "required"),
    (_body(primaryContact={"name": "Ada"}), "primaryContact.email", "required"),
    (_body(primaryContact={"name": "Ada", "email": "ada"}), "primaryContact.email",
     "invalid_email"),
    (_body(primaryContact={"name": "Ada", "email": "a@b.example", "phone": "1"}),
     "primaryContact.phone", "unknown_field"),
    (_body(custodyModel=None), "custodyModel", "required"),
    (_body(custodyModel="custodian"), "custodyModel", "invalid_value"),
    (_body(chains=None), "chains", "required"),
    (_body(chains="evm"), "chains", "invalid_type"),
    (_body(chains=[]), "chains", "invalid_value"),
    (_body(chains=["tron"]), "chains[0]", "invalid_value"),
    (_body(chains=["evm", 7]), "chains[1]", "invalid_type"),
    (_body(chains=["evm", "evm"]), "chains[1]", "invalid_value"),
    (_body(commitPoint="ON_OBSERVATION"), "commitPoint", "field_not_applicable"),
    (_body(preBurnTransferRequired=False), "preBurnTransferRequired", "field_not_applicable"),
    (_issuer_body(commitPoint=None, preBurnTransferRequired=None), "commitPoint", "required"),
    (_issuer_body(commitPoint="LATER"), "commitPoint", "invalid_value"),
    (_issuer_body(preBurnTransferRequired=None), "preBurnTransferRequired", "required"),
    (_issuer_body(commitPoint="ON_OBSERVATION"), "preBurnTransferRequired",
     "field_not_applicable"),
    (_body(dryRun="true"), "dryRun", "invalid_type"),
    (_body(intendedUseCase=""), "intendedUseCase", "invalid_value"),
    (_body(intendedUseCase="x" * 501), "intendedUseCase", "invalid_value"),
    (_body(expectedMonthlyVolumeGbp=1000), "expectedMonthlyVolumeGbp", "invalid_type"),
    (_body(expectedMonthlyVolumeGbp="-5.00"), "expectedMonthlyVolumeGbp", "invalid_amount"),
    (_body(expectedMonthlyVolumeGbp="0"), "expectedMonthlyVolumeGbp", "invalid_amount"),
    (_body(expectedMonthlyVolumeGbp="1.005"), "expectedMonthlyVolumeGbp", "invalid_amount"),
    (_body(expectedMonthlyVolumeGbp="1e6"), "expectedMonthlyVolumeGbp", "invalid_amount"),
    (_body(expectedMonthlyVolumeGbp="lots"), "expectedMonthlyVolumeGbp", "invalid_amount"),
    (_body(website="https://eastbank.example"), "website", "unknown_field"),
])
@pytest.mark.parametrize("dry_run", [False, True])
def test_an_invalid_application_is_400_and_changes_nothing(
        svc: Service, body: dict[str, Any], param: str, code: str, dry_run: bool) -> None:
    """Onboarding body table; a dry run has the same validation."""
    if dry_run and "dryRun" not in body:
        body = {**body, "dryRun": True}
    before = _snapshot(svc)
    response = _apply(svc, body)
    assert response.status == 400
    errors = response.json()["errors"]
    assert (errors[0]["param"], errors[0]["code"]) == (param, code)
    _unchanged_but_the_request(svc, before)


def test_every_problem_is_listed_at_once(svc: Service) -> None:
    response = _apply(svc, {"role": "participant", "chains": ["evm", "evm"],
                            "commitPoint": "ON_OBSERVATION"})
    assert [(e["param"], e["code"]) for e in response.json()["errors"]] == [
        ("organisationName", "required"), ("primaryContact", "required"),
        ("custodyModel", "required"), ("chains[1]", "invalid_value"),
        ("commitPoint", "field_not_applicable")]


@pytest.mark.parametrize("name", ["Northbank", "northbank", "  NORTHBANK ", "Ether  Pound"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_an_organisation_already_known_is_409(svc: Service, name: str, dry_run: bool) -> None:
    """Participant names are unique: same name, any case or spacing → 409
    organisation_name_taken, nothing created (a dry run predicts it)."""
    before = _snapshot(svc)
    response = _apply(svc, _body(organisationName=name, dryRun=dry_run))
    error = response.json()["errors"][0]
    assert (response.status, error["code"], error["param"]) == (
        409, "organisation_name_taken", "organisationName")
    _unchanged_but_the_request(svc, before)


def test_a_second_application_for_the_same_name_is_409(svc: Service) -> None:
    assert _apply(svc, _body()).status == 201
    response = _apply(svc, _body(organisationName="EASTBANK PLC", role="issuer",
                                 commitPoint="ON_OBSERVATION"))
    assert response.status == 409


def test_onboarding_needs_no_credential_and_ignores_one(svc: Service) -> None:
    """Public: the applicant has no credential before the application issues one."""
    response = svc.call("POST", APPLY, "sk_sandbox_" + "0" * 64, _body())
    assert response.status == 201


# dry run ------------------------------------------------------------------------------------
def test_a_dry_run_saves_nothing_and_answers_the_integration_path(svc: Service) -> None:
    """dryRun: same validation and mode derivation, nothing saved, no sandbox access;
    200 {dryRun, derivedMode, custodyCompatible, chainStatus, steps}."""
    before = _snapshot(svc)
    response = _apply(svc, _issuer_body(dryRun=True))
    assert response.status == 200
    data = response.json()["data"]
    assert list(data) == ["dryRun", "derivedMode", "custodyCompatible", "chainStatus", "steps"]
    assert data["dryRun"] is True
    _unchanged_but_the_request(svc, before)
    assert _apply(svc, _issuer_body()).status == 201  # the name is still free


def test_dry_run_false_is_a_real_application(svc: Service) -> None:
    assert _apply(svc, _body(dryRun=False)).status == 201


CUSTODY_SPELLINGS = ["self-custody", "self_custody", "mpc", "caas"]
CHAINS = ["stellar", "evm", "solana", "canton"]


@st.composite
def applications(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A valid application (any role, custody spelling, chains, commit point) and the
    integration-path request with the same inputs."""
    role = draw(st.sampled_from(["participant", "issuer"]))
    custody = draw(st.sampled_from(CUSTODY_SPELLINGS))
    chains = draw(st.lists(st.sampled_from(CHAINS), min_size=1, max_size=4, unique=True))
    body = _body(role=role, custodyModel=custody, chains=chains, dryRun=True)
    path = {"role": role, "custodyModel": custody, "chain": chains[0]}
    if role == "issuer":
        commit = draw(st.sampled_from(["ON_OBSERVATION", "ON_INSTRUCTION"]))
        body["commitPoint"] = path["commitPoint"] = commit
        if commit == "ON_INSTRUCTION":
            body["preBurnTransferRequired"] = path["preBurnTransferRequired"] = draw(
                st.booleans())
    return body, path


@pytest.fixture(scope="module")
def shared() -> Service:
    """One service for the property: dry runs and the tool change nothing, and each real
    application takes a fresh name."""
    return make_service()


@settings(max_examples=100, deadline=None)
@given(applications())
def test_the_dry_run_equals_the_integration_path_result(
        shared: Service, case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Onboarding dryRun: "the derived result equals the integration-path result"."""
    body, path_body = case
    before = _snapshot(shared)
    dry = _apply(shared, body)
    assert dry.status == 200, dry.body
    path = shared.call("POST", PATH, None, path_body)
    assert path.status == 200, path.body
    assert dry.json()["data"] == {"dryRun": True, **path.json()["data"]}
    assert _snapshot(shared)[1:] == before[1:]
    body = {**body, "dryRun": False, "organisationName": f"Applicant {before[1]}"}
    applied = _apply(shared, body).json()["data"]
    assert (applied["derivedMode"], applied["custodyCompatible"]) == (
        path.json()["data"]["derivedMode"], path.json()["data"]["custodyCompatible"])


# replay and production ----------------------------------------------------------------------
def test_a_replayed_application_returns_the_original_answer_without_its_secret(
        svc: Service) -> None:
    """Idempotency-Key on a state-changing request: the replay is the original response,
    except that an anonymous replay never hands the API key secret to anyone (issue 14,
    finding 5: anyone knowing the key and body would get the first caller's secret)."""
    participants = len(list(svc.world.participants))
    headers = {"Idempotency-Key": "application-1"}
    first = _apply(svc, _body(), headers=headers)
    again = _apply(svc, _body(), headers=headers)
    assert first.status == again.status == 201
    assert first.json()["data"]["sandbox"]["apiKeySecret"].startswith("sk_sandbox_")
    replayed = again.json()
    assert replayed["data"]["sandbox"]["apiKeySecret"] is None
    replayed["data"]["sandbox"]["apiKeySecret"] = first.json()["data"]["sandbox"]["apiKeySecret"]
    assert replayed == first.json()
    assert len(list(svc.world.participants)) == participants + 1
    assert len(svc.api.store(ApplicationBook).applications) == 1
    assert svc.world.log.select("api.request")[-1]["replayed"] is True
    other = _apply(svc, _body(organisationName="Other"), headers=headers)
    assert (other.status, other.json()["errors"][0]["code"]) == (409, "idempotency_key_reused")


def test_in_production_the_application_is_recorded_for_review_only(prod: Service) -> None:
    """A production world has no sandbox to provision: no participant, no key, no team;
    sandbox.accessGranted false with null ids; production access still awaits review."""
    participants = len(list(prod.world.participants))
    keys = len(prod.world.log.select("auth.api_key"))
    response = _apply(prod, _body())
    assert response.status == 201
    data = response.json()["data"]
    assert data["status"] == "under_review"
    assert data["sandbox"] == {"accessGranted": False, "apiKeyId": None, "apiKeySecret": None,
                               "participantId": None}
    assert data["production"] == {"accessGranted": False, "reviewEta": "P14D"}
    assert data["derivedMode"] == "MODE_2_TWO_PHASE"
    assert len(list(prod.world.participants)) == participants
    assert len(prod.world.log.select("auth.api_key")) == keys
    application = prod.api.store(ApplicationBook).applications[data["applicationId"]]
    assert (application.participant_id, application.api_key_id) == (None, None)
    assert prod.api.store(TeamBook).members == {}
    assert _apply(prod, _body()).status == 409  # the name is taken by the pending application


def test_a_dry_run_works_in_production(prod: Service) -> None:
    before = _snapshot(prod)
    assert _apply(prod, _body(dryRun=True)).status == 200
    _unchanged_but_the_request(prod, before)
