"""System and tools (spec, "System and tools", "System status", "Integration path result",
Authentication 1 and 4)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.calendar import parse_calendar
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.integration import (
    Chain,
    IntegratorRole,
    integration_path,
    parse_custody,
)
from clearing_sim.domain.latency import Fixed
from clearing_sim.domain.profile import CommitPoint, Ledger
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.system import path_wire, recent_latency_ms
from clearing_sim.sim.eventlog import JsonValue, Record
from clearing_sim.sim.examples import example_world
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.world import WorldConfig
from tests.service.conftest import Caller, Service, make_service

STATUS = "/api/v1/system/status"
PATH = "/api/v1/tools/integration-path"
TX = "/api/v1/transactions"

FINALITY_MS = 5_000
RTGS_MS = 300


def _status(svc: Service, token: str | None = None) -> dict[str, Any]:
    response = svc.call("GET", STATUS, token or svc.member.key)
    assert response.status == 200, response.body
    data: dict[str, Any] = response.json()["data"]
    return data


def _only_the_request_was_logged(svc: Service, before: int) -> None:
    assert [r.kind for r in list(svc.world.log)[before:]] == ["api.request"]


# GET /api/v1/system/status ----------------------------------------------------------------
def test_status_has_every_field_of_a_fresh_world(svc: Service) -> None:
    """System status: checkedAt, engineStatus, engineStalledJobs, onChainStatus,
    onChainLatencyMs (null: no operation yet), rtgsConnection, rtgsLatencyMs (null)."""
    assert _status(svc) == {
        "checkedAt": "2026-01-01T00:00:00.000Z", "engineStatus": "operational",
        "engineStalledJobs": 0, "onChainStatus": "operational", "onChainLatencyMs": None,
        "rtgsConnection": "connected", "rtgsLatencyMs": None}


def test_status_is_checked_at_the_virtual_now(svc: Service) -> None:
    svc.world.advance(90_061_001)
    assert _status(svc)["checkedAt"] == "2026-01-02T01:01:01.001Z"


def test_status_without_a_credential_is_401(svc: Service) -> None:
    """System and tools: 401 when unauthenticated."""
    response = svc.call("GET", STATUS)
    assert response.status == 401
    assert response.json()["errors"][0]["code"] == "authentication_required"
    bogus = svc.call("GET", STATUS, "sk_sandbox_" + "0" * 64)
    assert (bogus.status, bogus.json()["errors"][0]["code"]) == (401, "invalid_credential")


def test_status_takes_an_api_key_or_a_portal_session_of_any_participant(svc: Service) -> None:
    """Authentication 1: a bearer API key or a tenant-admin JWT; no capability needed."""
    for caller in (svc.member, svc.other, svc.issuers[1], svc.issuers[3]):
        assert _status(svc, caller.key) == _status(svc, caller.admin)


def test_status_changes_nothing(svc: Service) -> None:
    before = len(svc.world.log)
    _status(svc)
    _only_the_request_was_logged(svc, before)


def _fixed_latency_service() -> Service:
    """The example cast with every chain finalising in 5 s and the RTGS answering in 300 ms."""
    config = WorldConfig(finality={ledger: Fixed(FINALITY_MS) for ledger in Ledger},
                         rtgs_latency=Fixed(RTGS_MS))
    cast = example_world(0, config=config)
    api = ServiceAPI(cast.world)

    def caller(p: Participant) -> Caller:
        return Caller(p, api.credentials.issue_api_key(p.id)[1],
                      api.credentials.issue_session(p.id))

    other = cast.world.add_member("Southbank")
    return Service(cast, api, caller(cast.member), caller(other),
                   {mode: caller(issuer) for mode, issuer in cast.issuers.items()})


def test_latencies_are_the_mean_of_the_operations_in_the_log() -> None:
    """onChainLatencyMs / rtgsLatencyMs: measured from the log (ledger.*, rtgs.* records);
    with every chain finalising in 5 s and the RTGS answering in 300 ms, exactly those,
    whatever the mode (the saga's own operations and the issuers')."""
    svc = _fixed_latency_service()
    for mode in (1, 2, 3):
        response = svc.call("POST", TX, svc.member.key, svc.redeem_body(mode, reference=f"R{mode}"))
        assert response.status == 201
    svc.world.run_until(200 + FINALITY_MS - 1)
    assert _status(svc)["onChainLatencyMs"] is None  # no lock has finalised yet
    svc.world.run_until(200 + FINALITY_MS)
    assert _status(svc)["onChainLatencyMs"] == FINALITY_MS
    svc.world.run_all()
    assert all(tx.lifecycle_status.value == "settled" for tx in svc.world.transactions)
    assert len(svc.world.log.select("ledger.burn")) == 3
    data = _status(svc)
    assert (data["onChainLatencyMs"], data["rtgsLatencyMs"]) == (FINALITY_MS, RTGS_MS)


def test_a_cancels_instant_return_is_not_a_latency_sample() -> None:
    """A cancel returns the locked asset at once; that return did not wait for finality."""
    svc = _fixed_latency_service()
    tx = svc.call("POST", TX, svc.member.key, svc.redeem_body(2)).json()["data"]["id"]
    svc.world.run_until(200 + FINALITY_MS + 100)  # locked, earmark in progress
    assert svc.call("POST", f"{TX}/{tx}/cancel", svc.member.key).status == 200
    assert len(svc.world.log.select("ledger.return")) == 1
    assert _status(svc)["onChainLatencyMs"] == FINALITY_MS


def test_stalled_jobs_count_parked_transactions(svc: Service) -> None:
    """engineStalledJobs: parked transactions await an operator (States, rule 2)."""
    ids = [svc.call("POST", TX, svc.member.key,
                    svc.redeem_body(2, reference=f"P{i}")).json()["data"]["id"] for i in range(3)]
    svc.world.arm(ids[0], Outcome.FAILED)
    svc.world.arm(ids[1], Outcome.REJECTED)
    svc.world.run_all()
    assert [svc.world.transactions[i].parked for i in ids] == [True, False, False]
    assert _status(svc)["engineStalledJobs"] == 1
    svc.world.resolve(ids[0])
    assert _status(svc)["engineStalledJobs"] == 0


def _record(seq: int, at_ms: int, kind: str, **fields: JsonValue) -> Record:
    return Record(at_ms, seq, kind, fields)


def test_the_latency_window_is_the_last_twenty_operations() -> None:
    """recent_latency_ms: the mean of the last 20 samples, rounded half up to whole ms."""
    records: list[Record] = []
    for i in range(1, 26):  # transaction t<i>: started at 1000·i, locked i ms later
        records.append(_record(len(records), 1000 * i, "transaction.state", transactionId=f"t{i}",
                               trigger="validated"))
        records.append(_record(len(records), 1000 * i + i, "ledger.lock", transactionId=f"t{i}"))
    assert recent_latency_ms(records, "ledger.") == 16  # mean of 6..25 = 15.5
    assert recent_latency_ms(records[:4], "ledger.") == 2  # mean of 1 and 2 = 1.5
    assert recent_latency_ms(records, "rtgs.") is None


def test_records_that_start_no_operation_are_skipped() -> None:
    """Webhook attempts, arming and API records between an operation's start and end do not
    shorten it; an issuer refund (its start hidden behind the issuer's processing) is not
    sampled."""
    records = [
        _record(0, 0, "saga.step", transactionId="a"),
        _record(1, 10, "webhook.attempt", transactionId="a"),
        _record(2, 20, "issuer.armed", transactionId="a"),
        _record(3, 100, "rtgs.earmark", transactionId="a"),
        _record(4, 200, "transaction.state", transactionId="b", trigger="silence"),
        _record(5, 300, "issuer.request", transactionId="b"),
        _record(6, 5_000, "ledger.transfer", transactionId="b"),
    ]
    assert recent_latency_ms(records, "rtgs.") == 100
    assert recent_latency_ms(records, "ledger.") is None


def test_a_wait_for_the_rtgs_opening_is_not_an_rtgs_latency() -> None:
    """Beyond the spec (docs/semantics.md, RTGS business hours): the answer before the closed
    wait is sampled (100 ms), the 60 hours until the opening are not."""
    records = [
        _record(0, 0, "saga.step", transactionId="a"),
        _record(1, 100, "rtgs.closed_wait", transactionId="a"),
        _record(2, 216_600_000, "rtgs.earmark", transactionId="a"),
    ]
    assert recent_latency_ms(records, "rtgs.") == 100


def test_status_reports_the_rtgs_closed_outside_its_settlement_hours(svc: Service) -> None:
    """rtgsConnection (values other than connected: not shown) is ``closed`` while a
    calendar's scheme takes no settlement (docs/semantics.md), ``connected`` again at the
    opening; between cut-off and close settlements still run: ``connected``."""
    svc.world.set_rtgs_calendar(parse_calendar({  # the epoch 2026-01-01 is a Thursday
        "timeZone": "UTC", "opens": "06:00", "cutOff": "17:40", "closes": "18:00"}))
    assert _status(svc)["rtgsConnection"] == "closed"  # 00:00
    svc.world.advance(6 * 3_600_000 - 1)
    assert _status(svc)["rtgsConnection"] == "closed"
    svc.world.advance(1)
    assert _status(svc)["rtgsConnection"] == "connected"  # 06:00
    svc.world.advance(11 * 3_600_000 + 50 * 60_000)  # 17:50
    assert _status(svc)["rtgsConnection"] == "connected"
    svc.world.advance(10 * 60_000)  # 18:00
    assert _status(svc)["rtgsConnection"] == "closed"
    svc.world.set_rtgs_calendar(None)
    assert _status(svc)["rtgsConnection"] == "connected"


def test_status_is_served_in_production(prod: Service) -> None:
    """Not sandbox-only: production has the same API surface."""
    assert _status(prod, prod.member.key)["engineStatus"] == "operational"


# POST /api/v1/tools/integration-path ------------------------------------------------------
def _path(svc: Service, body: dict[str, Any], token: str | None = None) -> Any:
    return svc.call("POST", PATH, token, body)


def test_integration_path_is_public_and_answers_every_field(svc: Service) -> None:
    """Authentication 4: no authentication. Integration path result: derivedMode,
    custodyCompatible, chainStatus, steps[] {order, title, url}."""
    before = len(svc.world.log)
    response = _path(svc, {"role": "participant", "custodyModel": "mpc", "chain": "stellar"})
    assert response.status == 200
    data = response.json()["data"]
    assert list(data) == ["derivedMode", "custodyCompatible", "chainStatus", "steps"]
    assert (data["derivedMode"], data["custodyCompatible"], data["chainStatus"]) == (
        "MODE_1_DELEGATED_SIGNING", True, "live")
    assert data["steps"][0] == {"order": 1, "title": data["steps"][0]["title"],
                                "url": "/api/v1/onboarding/applications"}
    assert all(set(s) == {"order", "title", "url"} for s in data["steps"])
    _only_the_request_was_logged(svc, before)


def test_integration_path_ignores_a_credential_it_does_not_need(svc: Service) -> None:
    body = {"role": "issuer", "custodyModel": "caas", "chain": "canton"}
    with_header = _path(svc, body, "not-a-credential")
    assert with_header.status == 200
    assert with_header.json()["data"] == _path(svc, body).json()["data"]


def test_an_issuer_may_state_its_commit_point(svc: Service) -> None:
    body = {"role": "issuer", "custodyModel": "caas", "chain": "stellar"}
    assert _path(svc, body).json()["data"]["custodyCompatible"] is False
    body.update(commitPoint="ON_INSTRUCTION", preBurnTransferRequired=True)
    data = _path(svc, body).json()["data"]
    assert (data["derivedMode"], data["custodyCompatible"]) == ("MODE_3_PRE_BURN_TRANSFER", True)


def test_canton_is_planned(svc: Service) -> None:
    body = {"role": "administrator", "custodyModel": "self_custody", "chain": "canton"}
    assert _path(svc, body).json()["data"]["chainStatus"] == "planned"


VALID = {"role": "issuer", "custodyModel": "mpc", "chain": "evm"}


@pytest.mark.parametrize(("change", "param", "code"), [
    ({"role": None}, "role", "required"),
    ({"custodyModel": None}, "custodyModel", "required"),
    ({"chain": None}, "chain", "required"),
    ({"role": "auditor"}, "role", "invalid_value"),
    ({"role": 1}, "role", "invalid_type"),
    ({"custodyModel": "custodian"}, "custodyModel", "invalid_value"),
    ({"custodyModel": "SELF-CUSTODY"}, "custodyModel", "invalid_value"),
    ({"chain": "tron"}, "chain", "invalid_value"),
    ({"chain": ["evm"]}, "chain", "invalid_type"),
    ({"extra": True}, "extra", "unknown_field"),
    ({"commitPoint": "ON_SETTLEMENT"}, "commitPoint", "invalid_value"),
    ({"commitPoint": "ON_INSTRUCTION"}, "preBurnTransferRequired", "required"),
    ({"commitPoint": "ON_INSTRUCTION", "preBurnTransferRequired": "yes"},
     "preBurnTransferRequired", "invalid_type"),
    ({"commitPoint": "ON_OBSERVATION", "preBurnTransferRequired": False},
     "preBurnTransferRequired", "field_not_applicable"),
    ({"preBurnTransferRequired": True}, "preBurnTransferRequired", "field_not_applicable"),
    ({"role": "participant", "commitPoint": "ON_OBSERVATION"}, "commitPoint",
     "field_not_applicable"),
    ({"role": "administrator", "preBurnTransferRequired": False}, "preBurnTransferRequired",
     "field_not_applicable"),
])
def test_an_invalid_integration_path_request_is_400_naming_the_field(
        svc: Service, change: dict[str, Any], param: str, code: str) -> None:
    """System and tools: role, custodyModel and chain required, each among its values;
    commitPoint and preBurnTransferRequired only for issuers; unknown fields refused."""
    body = {k: v for k, v in {**VALID, **change}.items() if v is not None}
    response = _path(svc, body)
    assert response.status == 400
    errors = response.json()["errors"]
    assert (errors[0]["param"], errors[0]["code"]) == (param, code)
    assert len(errors) == 1


def test_every_problem_is_listed_at_once(svc: Service) -> None:
    response = _path(svc, {"role": "participant", "chain": "mars", "commitPoint": "X",
                           "other": 1})
    assert [(e["param"], e["code"]) for e in response.json()["errors"]] == [
        ("custodyModel", "required"), ("chain", "invalid_value"),
        ("commitPoint", "field_not_applicable"), ("other", "unknown_field")]


def test_an_empty_or_malformed_body_is_400(svc: Service) -> None:
    assert svc.call("POST", PATH, body=b"").json()["errors"][0]["code"] == "invalid_body"
    assert svc.call("POST", PATH, body=b"{").json()["errors"][0]["code"] == "malformed_json"


@pytest.fixture(scope="module")
def shared() -> Service:
    """One service for a whole property: the tool changes nothing, so examples cannot meet."""
    return make_service()


@settings(max_examples=60, deadline=None)
@given(role=st.sampled_from([r.value for r in IntegratorRole]),
       custody=st.sampled_from(["self-custody", "self_custody", "mpc", "caas"]),
       chain=st.sampled_from([c.value for c in Chain]),
       commit=st.sampled_from([None, "ON_OBSERVATION", "ON_INSTRUCTION"]),
       pre_burn=st.booleans())
def test_the_route_answers_the_domain_derivation(shared: Service, role: str, custody: str,
                                                 chain: str, commit: str | None,
                                                 pre_burn: bool) -> None:
    """The route is the documented derivation (clearing_sim.domain.integration), nothing more."""
    body: dict[str, Any] = {"role": role, "custodyModel": custody, "chain": chain}
    commit_point = None
    if role == "issuer" and commit is not None:
        body["commitPoint"] = commit
        commit_point = CommitPoint(commit)
        if commit == "ON_INSTRUCTION":
            body["preBurnTransferRequired"] = pre_burn
    custody_model = parse_custody(custody)
    assert custody_model is not None
    expected = integration_path(IntegratorRole(role), custody_model, Chain(chain), commit_point,
                                pre_burn if commit == "ON_INSTRUCTION" else False)
    response = _path(shared, body)
    assert response.status == 200, response.body
    assert response.json()["data"] == path_wire(expected)


def test_integration_path_is_served_in_production(prod: Service) -> None:
    assert _path(prod, VALID).status == 200
