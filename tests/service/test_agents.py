"""Sandbox agents (spec, "Agents (sandbox only)", "Sandbox agent", Authentication rule 6)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.service.conftest import Service

AGENTS = "/api/v1/sandbox/agents"
TX = "/api/v1/transactions"
LATER = "2026-01-02T00:00:00.000Z"


def _mint(svc: Service, **body: Any) -> dict[str, Any]:
    body.setdefault("capabilities", {"initiateTransaction": True})
    body.setdefault("expiresAt", LATER)
    response = svc.call("POST", AGENTS, svc.member.admin, body)
    assert response.status == 201, response.body
    return response.json()["data"]


def _submit(svc: Service, agent: dict[str, Any], amount: str = "100.00",
            proof: str | None = None) -> Any:
    body = svc.redeem_body(amount=amount)
    body["agent"] = {"agentId": agent["agentId"],
                     "mandateProof": proof or agent["mandateProof"]}
    return svc.call("POST", TX, svc.member.key, body)


def test_mint_is_201_with_every_field_and_the_mandate_proof(svc: Service) -> None:
    data = _mint(svc, amountCapGbp="250.00",
                 capabilities={"initiateTransaction": True, "cancelOwnTransaction": False})
    assert re.fullmatch(r"agt_[0-9a-f-]{36}", data["agentId"])
    assert data["participantId"] == svc.member.participant.id
    assert data["capabilities"] == {"initiateTransaction": True, "cancelOwnTransaction": False}
    assert data["amountCapGbp"] == "250.00"
    assert (data["expiresAt"], data["revokedAt"]) == (LATER, None)
    assert data["createdAt"] == "2026-01-01T00:00:00.000Z"
    assert data["mandateProof"].startswith("mp_")


def test_the_mandate_proof_is_shown_only_at_mint(svc: Service) -> None:
    agent = _mint(svc)
    got = svc.call("GET", f"{AGENTS}/{agent['agentId']}", svc.member.admin).json()["data"]
    assert "mandateProof" not in got
    assert agent["mandateProof"] not in "".join(svc.world.log.lines())


def test_agents_need_manage_own_agents_a_tenant_admin_capability(svc: Service) -> None:
    response = svc.call("POST", AGENTS, svc.member.key,
                        {"capabilities": {"initiateTransaction": True}, "expiresAt": LATER})
    assert response.status == 403
    assert svc.call("GET", AGENTS, svc.member.key).status == 403


def test_requested_capabilities_must_be_the_admins_own(svc: Service) -> None:
    """Authentication 6: mandates validated against the minting admin's capabilities.
    An issuer's admin does not hold transactions:write, so cannot delegate initiation."""
    response = svc.call("POST", AGENTS, svc.issuers[2].admin,
                        {"capabilities": {"initiateTransaction": True}, "expiresAt": LATER})
    assert response.status == 403
    assert response.json()["errors"][0]["code"] == "capability_not_held"
    assert svc.call("GET", AGENTS, svc.issuers[2].admin).json()["data"]["total"] == 0


@pytest.mark.parametrize(("body", "code"), [
    ({"capabilities": {}, "expiresAt": LATER}, "empty_mandate"),
    ({"capabilities": {"initiateTransaction": False}, "expiresAt": LATER}, "empty_mandate"),
    ({"capabilities": {"transferFunds": True}, "expiresAt": LATER}, "unknown_field"),
    ({"capabilities": {"initiateTransaction": "yes"}, "expiresAt": LATER}, "invalid_type"),
    ({"expiresAt": LATER}, "required"),
    ({"capabilities": {"initiateTransaction": True}}, "required"),
    ({"capabilities": {"initiateTransaction": True}, "expiresAt": "tomorrow"},
     "invalid_timestamp"),
    ({"capabilities": {"initiateTransaction": True}, "expiresAt": "2026-01-01T00:00:00"},
     "invalid_timestamp"),
    ({"capabilities": {"initiateTransaction": True}, "expiresAt": "2025-12-31T00:00:00Z"},
     "expires_in_past"),
    ({"capabilities": {"initiateTransaction": True}, "expiresAt": "2026-01-01T00:00:00Z"},
     "expires_in_past"),
    ({"capabilities": {"initiateTransaction": True}, "expiresAt": LATER,
      "amountCapGbp": "-5"}, "invalid_amount"),
    ({"capabilities": {"initiateTransaction": True}, "expiresAt": LATER,
      "amountCapGbp": "1.005"}, "invalid_amount"),
    ({"capabilities": {"initiateTransaction": True}, "expiresAt": LATER,
      "amountCapGbp": "1e3"}, "invalid_amount"),
    ({"capabilities": {"initiateTransaction": True}, "expiresAt": LATER,
      "amountCapGbp": 100}, "invalid_type"),
])
def test_invalid_mints_are_400_and_mint_nothing(svc: Service, body: dict[str, Any],
                                                 code: str) -> None:
    response = svc.call("POST", AGENTS, svc.member.admin, body)
    assert response.status == 400
    assert response.json()["errors"][0]["code"] == code
    assert svc.call("GET", AGENTS, svc.member.admin).json()["data"]["total"] == 0


def test_list_shows_non_revoked_agents_of_the_callers_participant(svc: Service) -> None:
    a, b = _mint(svc), _mint(svc)
    svc.call("POST", f"{AGENTS}/{a['agentId']}/revoke", svc.member.admin)
    body = svc.call("GET", AGENTS, svc.member.admin).json()
    assert body["data"] == {"agents": [{"agentId": b["agentId"],
                                        "participantId": svc.member.participant.id,
                                        "expiresAt": LATER, "revokedAt": None}], "total": 1}
    assert body["meta"]["nextCursor"] is None
    assert svc.call("GET", AGENTS, svc.other.admin).json()["data"]["total"] == 0


def test_get_and_revoke_of_another_participants_agent_are_404(svc: Service) -> None:
    agent = _mint(svc)
    for method, path in (("GET", f"{AGENTS}/{agent['agentId']}"),
                         ("POST", f"{AGENTS}/{agent['agentId']}/revoke")):
        response = svc.call(method, path, svc.other.admin)
        assert response.status == 404
        assert response.json()["errors"][0]["code"] == "agent_not_found"


def test_revoke_sets_revoked_at_and_a_second_revoke_is_409(svc: Service) -> None:
    agent = _mint(svc)
    svc.world.advance(5_000)
    data = svc.call("POST", f"{AGENTS}/{agent['agentId']}/revoke", svc.member.admin).json()
    assert data["data"]["revokedAt"] == "2026-01-01T00:00:05.000Z"
    again = svc.call("POST", f"{AGENTS}/{agent['agentId']}/revoke", svc.member.admin)
    assert again.status == 409
    assert again.json()["errors"][0]["code"] == "agent_already_revoked"


def test_an_agent_within_its_mandate_initiates(svc: Service) -> None:
    agent = _mint(svc, amountCapGbp="100.00")
    response = _submit(svc, agent, amount="100.00")
    assert response.status == 201
    assert svc.world.transactions[response.json()["data"]["id"]].agent_id == agent["agentId"]


@pytest.mark.parametrize(("setup", "code"), [
    ("revoked", "agent_revoked"), ("expired", "agent_expired"),
    ("over_cap", "agent_amount_cap_exceeded"),
    ("wrong_proof", "agent_mandate_invalid"), ("unknown", "agent_unknown"),
    ("outside", "agent_outside_mandate"), ("other_participant", "agent_unknown"),
])
def test_agent_submissions_outside_the_mandate_are_403_before_the_clearing_core(
        svc: Service, setup: str, code: str) -> None:
    """Spec: expired, revoked, over-cap and outside-mandate agents are rejected before
    reaching the clearing core: nothing is opened, nothing is locked."""
    caps = {"cancelOwnTransaction": True} if setup == "outside" else {"initiateTransaction": True}
    agent = _mint(svc, amountCapGbp="50.00", capabilities=caps, expiresAt=LATER)
    proof = None
    if setup == "revoked":
        svc.call("POST", f"{AGENTS}/{agent['agentId']}/revoke", svc.member.admin)
    elif setup == "expired":
        svc.world.run_until(24 * 3600 * 1000)  # exactly expiresAt
    elif setup == "wrong_proof":
        proof = "mp_" + "0" * 64
    elif setup == "unknown":
        agent = {**agent, "agentId": "agt_00000000-0000-4000-8000-000000000000"}
    elif setup == "other_participant":
        other = svc.call("POST", AGENTS, svc.other.admin,
                         {"capabilities": {"initiateTransaction": True},
                          "expiresAt": LATER}).json()["data"]
        agent = other
    amount = "50.01" if setup == "over_cap" else "50.00"
    response = _submit(svc, agent, amount=amount, proof=proof)
    assert response.status == 403
    assert response.json()["errors"][0]["code"] == code
    assert len(svc.world.transactions) == 0
    assert not svc.world.log.select("ledger.lock")


def test_an_agent_without_cancel_in_its_mandate_cannot_cancel(svc: Service) -> None:
    agent = _mint(svc)
    tx_id = _submit(svc, agent).json()["data"]["id"]
    ref = {"agent": {"agentId": agent["agentId"], "mandateProof": agent["mandateProof"]}}
    response = svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key, ref)
    assert response.status == 403
    assert response.json()["errors"][0]["code"] == "agent_outside_mandate"
    both = _mint(svc, capabilities={"initiateTransaction": True, "cancelOwnTransaction": True})
    ref = {"agent": {"agentId": both["agentId"], "mandateProof": both["mandateProof"]}}
    assert svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key, ref).status == 200


def test_agent_routes_are_503_sandbox_unavailable_in_production(prod: Service) -> None:
    for method, path in (("POST", AGENTS), ("GET", AGENTS), ("GET", f"{AGENTS}/agt_x"),
                         ("POST", f"{AGENTS}/agt_x/revoke")):
        response = prod.call(method, path, prod.member.admin, {} if method == "POST" else None)
        assert response.status == 503
        assert response.json()["errors"][0] == {
            "type": "sandbox_unavailable", "code": "sandbox_unavailable",
            "message": f"{method} {path.replace('agt_x', '{agentId}')} is available in the "
                       "sandbox only"}


def test_an_agents_submission_with_an_invalid_initiation_is_400_before_its_mandate(
        svc: Service) -> None:
    """Errors, precedence: the body's fields (an unknown asset) are refused before the
    agent's mandate is looked at, even for an agent that does not exist."""
    body = svc.redeem_body()
    body["source"]["asset"]["issuer"] = "GNOPE"
    body["agent"] = {"agentId": "agt_00000000-0000-4000-8000-000000000000",
                     "mandateProof": "mp_" + "0" * 64}
    response = svc.call("POST", TX, svc.member.key, body)
    assert response.status == 400
    assert response.json()["errors"][0]["code"] == "unknown_asset"
    assert len(svc.world.transactions) == 0
