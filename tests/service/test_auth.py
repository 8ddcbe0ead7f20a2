"""Authentication (spec, "Authentication" rules 1–3) and the capability table per route."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.service.auth import SESSION_TTL_S
from tests.service.conftest import Service


def _status(svc: Service, token: str | None) -> int:
    return svc.call("GET", "/api/v1/transactions", token).status


def test_rule1_a_sandbox_api_key_or_a_portal_jwt_authenticates(svc: Service) -> None:
    assert _status(svc, svc.member.key) == 200
    assert _status(svc, svc.member.admin) == 200


def test_no_authorization_is_401_authentication_required(svc: Service) -> None:
    response = svc.call("GET", "/api/v1/transactions")
    assert response.status == 401
    assert response.json()["errors"][0] == {
        "type": "authentication_error", "code": "authentication_required",
        "message": "this route needs Authorization: Bearer <credential>"}


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer    ", "sk_sandbox_00",
                                    "Bearer sk_sandbox_" + "0" * 64, "Bearer a.b.c",
                                    "Bearer not-a-token", "Bearer é.é.é"])
def test_a_malformed_or_unknown_credential_is_401_invalid_credential(svc: Service,
                                                                       header: str) -> None:
    response = svc.call("GET", "/api/v1/transactions", headers={"Authorization": header})
    assert response.status == 401
    assert response.json()["errors"][0]["code"] == "invalid_credential"


def test_api_keys_are_stored_hashed_never_in_clear(svc: Service) -> None:
    """Rule 6 of Events says secrets are stored "like an API key": hashed."""
    stored = repr(vars(svc.api.credentials))
    assert svc.member.key not in stored
    assert svc.member.key not in "".join(svc.world.log.lines())


def test_a_forged_jwt_signature_is_refused(svc: Service) -> None:
    header, payload, _ = svc.member.admin.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["sub"] = svc.other.participant.id
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    for token in (f"{header}.{forged_payload}.{svc.member.admin.split('.')[2]}",
                  f"{header}.{payload}.AAAA"):
        response = svc.call("GET", "/api/v1/transactions", token)
        assert response.status == 401
        assert response.json()["errors"][0]["code"] == "invalid_credential"


def test_a_portal_session_expires_on_virtual_time(svc: Service) -> None:
    """Sessions last SESSION_TTL_S of virtual time (docs/semantics.md): valid at ttl − 1 s."""
    svc.world.advance(SESSION_TTL_S * 1000 - 1000)
    assert _status(svc, svc.member.admin) == 200
    svc.world.advance(1000)
    response = svc.call("GET", "/api/v1/transactions", svc.member.admin)
    assert response.status == 401
    assert response.json()["errors"][0]["code"] == "credential_expired"
    assert _status(svc, svc.member.key) == 200  # API keys do not expire


def test_rule2_missing_capability_is_403_naming_it(svc: Service) -> None:
    """An issuer's API key reads transactions but cannot initiate (transactions:write)."""
    response = svc.call("POST", "/api/v1/transactions", svc.issuers[2].key, svc.redeem_body())
    assert response.status == 403
    error = response.json()["errors"][0]
    assert error["type"] == "permission_error"
    assert error["code"] == "missing_capability"
    assert "transactions:write" in error["message"]


def test_rule2_run_own_conformance_pack_is_never_held_by_an_api_key(svc: Service) -> None:
    tx = svc.call("POST", "/api/v1/transactions", svc.member.key, svc.redeem_body()).json()
    body = {"scenario": "failed", "transactionId": tx["data"]["id"]}
    response = svc.call("POST", "/api/v1/conformance/run", svc.member.key, body)
    assert response.status == 403
    assert response.json()["errors"][0]["code"] == "missing_capability"


def test_rule3_other_participants_transactions_are_404(svc: Service) -> None:
    tx_id = svc.call("POST", "/api/v1/transactions", svc.member.key,
                     svc.redeem_body()).json()["data"]["id"]
    for method, path in (("GET", f"/api/v1/transactions/{tx_id}"),
                         ("GET", f"/api/v1/transactions/{tx_id}/recovery-status"),
                         ("POST", f"/api/v1/transactions/{tx_id}/cancel")):
        response = svc.call(method, path, svc.other.key)
        assert response.status == 404, (method, path)
        assert response.json()["errors"][0]["code"] == "transaction_not_found"
    # ...and an issuer not listed on it (the redeem burns at Mode 2's issuer, not Mode 3's)
    assert svc.call("GET", f"/api/v1/transactions/{tx_id}", svc.issuers[3].key).status == 404
    assert svc.call("GET", f"/api/v1/transactions/{tx_id}", svc.issuers[2].key).status == 200


def test_rule4_integration_path_is_public(svc: Service) -> None:
    body = {"role": "participant", "custodyModel": "mpc", "chain": "stellar"}
    assert svc.call("POST", "/api/v1/tools/integration-path", None, body).status == 200


@given(data=st.data())
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_portal_session_is_accepted_in_its_one_spelling_only(svc: Service,
                                                                data: st.DataObject) -> None:
    """Issue 31 §6: the signature part with ``!!!`` or ``%%%`` inside, ``==`` appended, the
    standard alphabet or flipped unused bits decodes (leniently) to the same bytes; each such
    spelling is refused, like a cursor's (``domain.b64url``)."""
    header, payload, signature = svc.member.admin.split(".")
    # (whitespace around the whole token is the header's own leniency, RFC 9110 §5.6.3 OWS)
    junk = data.draw(st.sampled_from(["!!!", "%%%", "==", "=", ".", "+", "/"]))
    where = data.draw(st.integers(0, len(signature)))
    variants = {signature[:where] + junk + signature[where:],
                signature.replace("-", "+").replace("_", "/"),
                signature[:-1] + chr(ord(signature[-1]) ^ 1)}
    for variant in sorted(variants - {signature}):
        response = svc.call("GET", "/api/v1/transactions", f"{header}.{payload}.{variant}")
        assert response.status == 401, variant
        assert response.json()["errors"][0]["code"] == "invalid_credential"
    assert _status(svc, svc.member.admin) == 200
