"""The route × credential matrix: every route of the table, every kind of caller.

Spec, Authentication: rule 1 (API key or portal JWT), rule 2 (capabilities per route),
rule 3 (other participants' transactions and conformance targets are 404; invitations and
issuer profiles apply only to the caller's own participant), rule 4 (integration-path is
public). Columns: no credential, the member's API key, the member's tenant-admin JWT, the
issuer's API key, the issuer's admin JWT, another participant of the owner's kind (its
admin JWT), and — for the transaction writes — an agent acting for the member. The owner
of every resource is Northbank (member) or Ether Pound (Mode 2 issuer); each cell runs on a
fresh world, so cells cannot affect each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from clearing_sim.service.routes import ROUTES
from tests.service.conftest import Service, make_service

COLUMNS = ("none", "member_key", "member_admin", "issuer_key", "issuer_admin", "other",
           "agent")
LATER = "2026-01-02T00:00:00.000Z"

Case = Callable[[Service], tuple[str, Any]]  # → (path, body)


def _tx(svc: Service) -> str:
    response = svc.call("POST", "/api/v1/transactions", svc.member.key, svc.redeem_body())
    return str(response.json()["data"]["id"])


def _issuer(svc: Service) -> str:
    return str(svc.issuers[2].participant.id)


def _agent(svc: Service) -> str:
    body = {"capabilities": {"initiateTransaction": True}, "expiresAt": LATER}
    return str(svc.call("POST", "/api/v1/sandbox/agents", svc.member.admin,
                        body).json()["data"]["agentId"])


def _webhook(svc: Service) -> str:
    body = {"url": "https://hooks.example.com/h", "events": ["transaction.settled"]}
    return str(svc.call("POST", "/api/v1/webhooks", svc.member.key, body).json()["data"]["id"])


def _artifact(svc: Service) -> dict[str, Any]:
    response = svc.call("POST", f"/api/v1/reserves/{_issuer(svc)}/proof/generate",
                        svc.issuers[2].admin)
    return dict(response.json()["data"])


def _profile() -> dict[str, Any]:
    return {"commitPoint": "ON_INSTRUCTION", "preBurnTransferRequired": False,
            "custodyModel": "POOLED_ISSUER_WALLET", "feedbackChannel": ["POLLABLE_RESOURCE"],
            "fiatLeg": "NUVANTE_SETTLES_RTGS", "ledger": "evm",
            "apiBaseUrl": "https://issuer-2.example/api"}


def _issuing_account(svc: Service) -> str:
    return str(svc.issuers[2].participant.issuing_account)


def _run_conformance(svc: Service) -> str:
    path = f"/api/v1/issuers/{_issuer(svc)}/conformance"
    svc.call("POST", f"{path}/run", svc.issuers[2].admin)
    return path


#: (method, template) → (how to build the request, expected status per column; None = n/a)
MATRIX: dict[tuple[str, str], tuple[Case, tuple[int | None, ...]]] = {
    ("GET", "/api/v1/system/status"): (
        lambda s: ("/api/v1/system/status", None), (401, 200, 200, 200, 200, 200, None)),
    ("POST", "/api/v1/tools/integration-path"): (
        lambda s: ("/api/v1/tools/integration-path",
                   {"role": "participant", "custodyModel": "mpc", "chain": "stellar"}),
        (200, 200, 200, 200, 200, 200, None)),
    ("POST", "/api/v1/onboarding/applications"): (
        lambda s: ("/api/v1/onboarding/applications",
                   {"organisationName": "Eastbank", "role": "participant",
                    "primaryContact": {"name": "Ada", "email": "ada@eastbank.example"},
                    "custodyModel": "mpc", "chains": ["stellar"]}),
        (201, 201, 201, 201, 201, 201, None)),
    ("POST", "/api/v1/transactions"): (
        lambda s: ("/api/v1/transactions", s.redeem_body()),
        (401, 201, 201, 403, 403, 201, 201)),
    ("GET", "/api/v1/transactions"): (
        lambda s: ("/api/v1/transactions", None), (401, 200, 200, 200, 200, 200, None)),
    ("GET", "/api/v1/transactions/{id}"): (
        lambda s: (f"/api/v1/transactions/{_tx(s)}", None),
        (401, 200, 200, 200, 200, 404, None)),
    ("POST", "/api/v1/transactions/{id}/cancel"): (
        lambda s: (f"/api/v1/transactions/{_tx(s)}/cancel", None),
        (401, 200, 200, 403, 403, 404, 200)),
    ("GET", "/api/v1/transactions/{id}/recovery-status"): (
        lambda s: (f"/api/v1/transactions/{_tx(s)}/recovery-status", None),
        (401, 200, 200, 200, 200, 404, None)),
    ("POST", "/api/v1/reserves/{issuerId}/proof/generate"): (
        lambda s: (f"/api/v1/reserves/{_issuer(s)}/proof/generate", None),
        (401, 403, 403, 403, 201, 403, None)),
    ("GET", "/api/v1/reserves/{issuerId}/proof"): (
        lambda s: (f"/api/v1/reserves/{_issuer(s)}/proof", _artifact(s) and None),
        (401, 403, 403, 403, 200, 403, None)),
    ("POST", "/api/v1/reserves/proof/verify"): (
        lambda s: ("/api/v1/reserves/proof/verify", {"artifact": _artifact(s)}),
        (401, 403, 200, 403, 200, 200, None)),
    ("POST", "/api/v1/sandbox/agents"): (
        lambda s: ("/api/v1/sandbox/agents",
                   {"capabilities": {"initiateTransaction": True}, "expiresAt": LATER}),
        (401, 403, 201, 403, 403, 201, None)),
    ("GET", "/api/v1/sandbox/agents"): (
        lambda s: ("/api/v1/sandbox/agents", None), (401, 403, 200, 403, 200, 200, None)),
    ("GET", "/api/v1/sandbox/agents/{agentId}"): (
        lambda s: (f"/api/v1/sandbox/agents/{_agent(s)}", None),
        (401, 403, 200, 403, 404, 404, None)),
    ("POST", "/api/v1/sandbox/agents/{agentId}/revoke"): (
        lambda s: (f"/api/v1/sandbox/agents/{_agent(s)}/revoke", None),
        (401, 403, 200, 403, 404, 404, None)),
    ("POST", "/api/v1/webhooks"): (
        lambda s: ("/api/v1/webhooks",
                   {"url": "https://hooks.example.com/h", "events": ["transaction.settled"]}),
        (401, 201, 201, 201, 201, 201, None)),
    ("GET", "/api/v1/webhooks"): (
        lambda s: ("/api/v1/webhooks", None), (401, 200, 200, 200, 200, 200, None)),
    ("GET", "/api/v1/webhooks/{id}"): (
        lambda s: (f"/api/v1/webhooks/{_webhook(s)}", None),
        (401, 200, 200, 404, 404, 404, None)),
    ("DELETE", "/api/v1/webhooks/{id}"): (
        lambda s: (f"/api/v1/webhooks/{_webhook(s)}", None),
        (401, 204, 204, 404, 404, 404, None)),
    ("PUT", "/api/v1/issuers/{issuerId}/capabilities"): (
        lambda s: (f"/api/v1/issuers/{_issuer(s)}/capabilities", _profile()),
        (401, 403, 403, 403, 200, 403, None)),
    ("POST", "/api/v1/issuers/{issuerId}/custody/verify-delegation"): (
        lambda s: (f"/api/v1/issuers/{_issuer(s)}/custody/verify-delegation",
                   {"chain": "evm", "accountId": _issuing_account(s)}),
        (401, 403, 403, 403, 200, 403, None)),
    ("POST", "/api/v1/issuers/{issuerId}/conformance/run"): (
        lambda s: (f"/api/v1/issuers/{_issuer(s)}/conformance/run", None),
        (401, 403, 403, 403, 202, 403, None)),
    ("GET", "/api/v1/issuers/{issuerId}/conformance/results"): (
        lambda s: (f"{_run_conformance(s)}/results", None),
        (401, 403, 403, 403, 200, 403, None)),
    ("POST", "/api/v1/conformance/run"): (
        lambda s: ("/api/v1/conformance/run", {"scenario": "failed", "transactionId": _tx(s)}),
        (401, 403, 200, 403, 200, 404, None)),
    ("POST", "/api/v1/team/invitations"): (
        lambda s: ("/api/v1/team/invitations", {"email": "grace@example.com"}),
        (401, 403, 201, 403, 201, 201, None)),
}


def test_the_matrix_covers_every_route_of_the_table() -> None:
    assert set(MATRIX) == {(r.method, r.template) for r in ROUTES}


def _token(svc: Service, column: str, template: str) -> str | None:
    issuer_owned = "{issuerId}" in template or "/reserves/" in template
    other = svc.issuers[3].admin if issuer_owned else svc.other.admin
    return {"none": None, "member_key": svc.member.key, "member_admin": svc.member.admin,
            "issuer_key": svc.issuers[2].key, "issuer_admin": svc.issuers[2].admin,
            "other": other, "agent": svc.member.key}[column]


def _with_agent(svc: Service, body: Any) -> Any:
    caps = {"initiateTransaction": True, "cancelOwnTransaction": True}
    agent = svc.call("POST", "/api/v1/sandbox/agents", svc.member.admin,
                     {"capabilities": caps, "expiresAt": LATER}).json()["data"]
    return {**(body or {}), "agent": {"agentId": agent["agentId"],
                                      "mandateProof": agent["mandateProof"]}}


CELLS = [(method, template, column, expected)
         for (method, template), (_, row) in MATRIX.items()
         for column, expected in zip(COLUMNS, row, strict=True) if expected is not None]


@pytest.mark.parametrize(("method", "template", "column", "expected"), CELLS,
                         ids=[f"{m} {t} as {c}" for m, t, c, _ in CELLS])
def test_route_answers_the_expected_status_for_each_caller(
        method: str, template: str, column: str, expected: int) -> None:
    svc = make_service()
    path, body = MATRIX[(method, template)][0](svc)
    if column == "agent":
        body = _with_agent(svc, body)
    response = svc.call(method, path, _token(svc, column, template), body)
    assert response.status == expected, response.body
    if expected == 401:
        assert response.json()["errors"][0]["code"] == "authentication_required"
