"""Conformance arming: ``POST /api/v1/conformance/run`` (spec, "Conformance (sandbox only)",
States rules 1–3, Errors 404/503, Authentication 2–3)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from clearing_sim.domain.money import Money
from clearing_sim.sim.world import World
from tests.service.conftest import Service
from tests.sim.simkit import step_until_deadline

RUN = "/api/v1/conformance/run"
SLA_MS = 900_000  # the example cast's approvalSlaSeconds


def _initiate(svc: Service, body: dict[str, Any]) -> str:
    response = svc.call("POST", "/api/v1/transactions", svc.member.key, body)
    assert response.status == 201, response.json()
    tx_id: str = response.json()["data"]["id"]
    return tx_id


def _arm(svc: Service, token: str, tx_id: str, scenario: str) -> Any:
    return svc.call("POST", RUN, token, {"scenario": scenario, "transactionId": tx_id})


def _get(svc: Service, tx_id: str) -> dict[str, Any]:
    response = svc.call("GET", f"/api/v1/transactions/{tx_id}", svc.member.key)
    assert response.status == 200
    data: dict[str, Any] = response.json()["data"]
    return data


def _run_until_terminal(svc: Service, tx_id: str, limit_ms: int = 3_600_000) -> dict[str, Any]:
    world: World = svc.world
    while not world.transactions[tx_id].terminal:
        assert world.now_ms < limit_ms, f"{tx_id} not terminal by {limit_ms} ms"
        world.env.step()
    return _get(svc, tx_id)


def _source_balance(svc: Service, mode: int) -> Money:
    world: World = svc.world
    asset = svc.cast.asset(mode)
    ledger = svc.cast.issuers[mode].profile.ledger
    return world.ledgers[ledger].balance(svc.member.participant.wallets[ledger], asset)


CASES = {  # name → (initiate body maker, source issuer's mode)
    "mode2-redeem": (lambda svc: svc.redeem_body(2), 2),
    "mode3-redeem": (lambda svc: svc.redeem_body(3), 3),
    "swap-2-to-3": (lambda svc: svc.swap_body(2, 3), 2),
}


@pytest.mark.parametrize("case", list(CASES))
def test_rejected_unwinds_automatically_terminal_asset_back_no_discrepancy(
        svc: Service, case: str) -> None:
    """Scenario ``rejected``: terminal true; locked asset back in the sender wallet; no balance
    discrepancy (spec table; States: REJECTED → failed, parked false; rule 3)."""
    make, mode = CASES[case]
    before = _source_balance(svc, mode)
    tx_id = _initiate(svc, make(svc))
    response = _arm(svc, svc.member.admin, tx_id, "rejected")
    assert response.status == 200
    assert response.json()["data"] == {"transactionId": tx_id, "scenario": "rejected",
                                       "armed": True}
    tx = _run_until_terminal(svc, tx_id)
    assert (tx["lifecycleStatus"], tx["parked"], tx["terminal"]) == ("failed", False, True)
    assert tx["details"]["chain"] == "ReturnedToSender"
    assert tx["details"]["rtgs"] == "Cancelled"
    assert _source_balance(svc, mode) == before
    assert all(ledger.conserved() for ledger in svc.world.ledgers.values())
    assert svc.world.rtgs.earmarks == {}


@pytest.mark.parametrize("case", list(CASES))
def test_failed_parks_terminal_and_nothing_retries(svc: Service, case: str) -> None:
    """Scenario ``failed``: parked true and terminal true; no automatic retry or resolution
    (spec table; rule 3: every FAILED goes to a person)."""
    make, _ = CASES[case]
    tx_id = _initiate(svc, make(svc))
    assert _arm(svc, svc.member.admin, tx_id, "failed").status == 200
    tx = _run_until_terminal(svc, tx_id)
    assert (tx["lifecycleStatus"], tx["parked"], tx["terminal"]) == ("failed", True, True)
    assert tx["details"]["reason"] == {"code": "issuer_failed"}
    parked_at = svc.world.now_ms
    svc.world.advance(24 * 3_600_000)  # a day later: still parked, no second instruction
    assert _get(svc, tx_id)["updatedAt"] == svc.world.iso(parked_at)
    sent = svc.world.log.select("saga.instruction_sent", transactionId=tx_id)
    assert len(sent) == 1


@pytest.mark.parametrize("case", list(CASES))
def test_silence_in_flight_at_sla_minus_1ms_parked_exactly_at_sla(svc: Service,
                                                                  case: str) -> None:
    """Scenario ``silence``: no answer until approvalSlaSeconds elapses, then parked true and
    terminal true; not before the SLA (spec table; DESIGN.md: checked to the millisecond)."""
    make, _ = CASES[case]
    tx_id = _initiate(svc, make(svc))
    assert _arm(svc, svc.member.admin, tx_id, "silence").status == 200
    world: World = svc.world
    sent_ms = step_until_deadline(world, tx_id).at_ms  # Mode 2: execute; Mode 3: instruction
    world.run_until(sent_ms + SLA_MS - 1)
    tx = _get(svc, tx_id)
    assert (tx["lifecycleStatus"], tx["parked"], tx["terminal"]) == ("in-flight", False, False)
    world.run_until(sent_ms + SLA_MS)
    tx = _get(svc, tx_id)
    assert (tx["lifecycleStatus"], tx["parked"], tx["terminal"]) == ("failed", True, True)
    assert tx["details"]["reason"] == {"code": "approval_sla_exceeded"}
    assert tx["updatedAt"] == world.iso(sent_ms + SLA_MS)


def test_listed_issuer_admin_may_arm(svc: Service) -> None:
    """transactionId must belong to the caller's participant as initiator or listed issuer."""
    tx_id = _initiate(svc, svc.redeem_body(2))
    response = _arm(svc, svc.issuers[2].admin, tx_id, "rejected")
    assert response.status == 200
    assert _run_until_terminal(svc, tx_id)["details"]["reason"] == {"code": "issuer_rejected"}


@pytest.mark.parametrize("who", ["other", "issuer3"])
def test_out_of_scope_transaction_is_404(svc: Service, who: str) -> None:
    """404 when the transaction is out of scope: another member, an issuer it does not list
    (Authentication 3: reported as 404); nothing is armed."""
    tx_id = _initiate(svc, svc.redeem_body(2))
    token = svc.other.admin if who == "other" else svc.issuers[3].admin
    response = _arm(svc, token, tx_id, "failed")
    assert response.status == 404
    assert response.json()["errors"][0]["code"] == "transaction_not_found"
    assert svc.world.log.select("issuer.armed") == []
    assert _run_until_terminal(svc, tx_id)["lifecycleStatus"] == "settled"


def test_unknown_transaction_is_404(svc: Service) -> None:
    response = _arm(svc, svc.member.admin, "00000000-0000-4000-8000-000000000000", "failed")
    assert response.status == 404
    assert response.json()["errors"][0]["code"] == "transaction_not_found"


def test_uppercase_uuid_finds_the_transaction(svc: Service) -> None:
    tx_id = _initiate(svc, svc.redeem_body(2))
    response = _arm(svc, svc.member.admin, tx_id.upper(), "failed")
    assert response.status == 200
    assert response.json()["data"]["transactionId"] == tx_id


def test_api_key_never_holds_run_own_conformance_pack(svc: Service) -> None:
    """Authentication 2: machine API keys never hold runOwnConformancePack → 403."""
    tx_id = _initiate(svc, svc.redeem_body(2))
    response = _arm(svc, svc.member.key, tx_id, "failed")
    assert response.status == 403
    assert response.json()["errors"][0]["code"] == "missing_capability"
    assert svc.world.log.select("issuer.armed") == []


def test_production_is_503_sandbox_unavailable(prod: Service) -> None:
    """Errors: 503 sandbox_unavailable, sandbox-only route called in production."""
    tx_id = _initiate(prod, prod.redeem_body(2))
    response = _arm(prod, prod.member.admin, tx_id, "failed")
    assert response.status == 503
    assert response.json()["errors"][0]["code"] == "sandbox_unavailable"


def test_mode1_cannot_be_armed(svc: Service) -> None:
    """States rule 1: Mode 1 transactions have no issuer instruction step; 409."""
    tx_id = _initiate(svc, svc.redeem_body(1))
    response = _arm(svc, svc.member.admin, tx_id, "rejected")
    assert response.status == 409
    assert response.json()["errors"][0]["code"] == "no_issuer_instruction"
    assert _run_until_terminal(svc, tx_id)["lifecycleStatus"] == "settled"


def test_terminal_transaction_cannot_be_armed(svc: Service) -> None:
    tx_id = _initiate(svc, svc.redeem_body(2))
    assert _run_until_terminal(svc, tx_id)["lifecycleStatus"] == "settled"
    response = _arm(svc, svc.member.admin, tx_id, "failed")
    assert response.status == 409
    assert response.json()["errors"][0]["code"] == "transaction_terminal"


@pytest.mark.parametrize(("body", "param", "code"), [
    ({"transactionId": "00000000-0000-4000-8000-000000000000"}, "scenario", "required"),
    ({"scenario": "failed"}, "transactionId", "required"),
    ({"scenario": "complete", "transactionId": "00000000-0000-4000-8000-000000000000"},
     "scenario", "invalid_value"),
    ({"scenario": "failed", "transactionId": "not-a-uuid"}, "transactionId", "invalid_value"),
    ({"scenario": "failed", "transactionId": "00000000-0000-4000-8000-000000000000",
      "extra": 1}, "extra", "unknown_field"),
])
def test_invalid_body_is_400(svc: Service, body: dict[str, Any], param: str, code: str) -> None:
    """Body: scenario (rejected, failed, silence; required), transactionId (UUID; required)."""
    response = svc.call("POST", RUN, svc.member.admin, body)
    assert response.status == 400
    errors = response.json()["errors"]
    assert (errors[0]["param"], errors[0]["code"]) == (param, code)


def test_arming_does_not_touch_balances_until_the_issuer_event(svc: Service) -> None:
    """Arming changes nothing but the armed outcome: the 200 leaves the transaction as it was."""
    tx_id = _initiate(svc, svc.redeem_body(2))
    before = _get(svc, tx_id)
    assert _arm(svc, svc.member.admin, tx_id, "silence").status == 200
    assert _get(svc, tx_id) == before
    assert _source_balance(svc, 2).amount == Decimal("10000.00")
