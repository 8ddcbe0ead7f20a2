"""Spec rows the p21c audit pinned through the API (docs/spec-coverage.md).

Every bound here is written out, never read from the code under test. Rows: Transactions,
Cancel ("Check ``actions.cancel.allowed`` first"; "After settlement any
cancellation is rejected with 409"); Errors, 409 "cancellation no longer allowed"; States and
transitions, the cancel row ("open transaction ... ``actions.cancel.allowed`` is true");
Limits, "amount bounds", "default and maximum page size: not shown" and the other bounds
docs/semantics.md chose (body size and depth, portal sessions, agent expiry, onboarding text).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.instruction import Outcome
from tests.service.conftest import Service, make_service
from tests.sim.simkit import step_until

TX = "/api/v1/transactions"


def _initiate(svc: Service, mode: int) -> str:
    response = svc.call("POST", TX, svc.member.key, svc.redeem_body(mode))
    assert response.status == 201, response.body
    return str(response.json()["data"]["id"])


def _initiate_ref(svc: Service, reference: str) -> str:
    body = svc.redeem_body(1, "1.00", reference)
    response = svc.call("POST", TX, svc.member.key, body)
    assert response.status == 201, response.body
    return str(response.json()["data"]["id"])


def _cancel_action(svc: Service, tx_id: str) -> dict[str, object]:
    data = svc.call("GET", f"{TX}/{tx_id}", svc.member.key).json()["data"]
    action: dict[str, object] = data["actions"]["cancel"]
    return action


def test_cancel_of_every_terminal_state_is_409_with_the_reason_get_showed() -> None:
    """Errors 409: "cancellation no longer allowed (e.g. already settled)". Settled,
    cancelled, failed and parked transactions all answer 409, with the code that
    ``actions.cancel.reason`` named before the call (docs/semantics.md, the cancel row)."""
    svc = make_service()
    world = svc.world
    settled, cancelled, rejected, parked = (_initiate(svc, m) for m in (1, 2, 2, 3))
    svc.call("POST", f"{TX}/{cancelled}/cancel", svc.member.key)
    world.arm(rejected, Outcome.REJECTED)
    world.arm(parked, Outcome.FAILED)
    world.run_all()
    expected = {settled: "already_settled", cancelled: "already_cancelled",
                rejected: "transaction_failed", parked: "transaction_failed"}
    for tx_id, code in expected.items():
        assert _cancel_action(svc, tx_id) == {"allowed": False, "reason": code}
        response = svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key)
        assert response.status == 409
        assert response.json()["errors"][0]["code"] == code
        assert world.transactions[tx_id].terminal


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), mode=st.sampled_from([1, 2, 3]),
       outcome=st.sampled_from([None, Outcome.REJECTED, Outcome.FAILED, Outcome.SILENCE]),
       wait_ms=st.integers(0, 1_200_000))
def test_cancel_succeeds_exactly_when_get_says_allowed_else_409_with_its_reason(
        seed: int, mode: int, outcome: Outcome | None, wait_ms: int) -> None:
    """Transactions, Cancel: "Check actions.cancel.allowed first". At any instant, on any
    path, a cancel is 200 (cancelled, terminal) when the transaction's own
    ``actions.cancel.allowed`` said true, and 409 with ``actions.cancel.reason`` as its code
    when it said false — the two never disagree."""
    svc = make_service(seed)
    tx_id = _initiate(svc, mode)
    if outcome is not None and mode != 1:
        svc.world.arm(tx_id, outcome)
    svc.world.advance(wait_ms)
    action = _cancel_action(svc, tx_id)
    response = svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key)
    if action["allowed"]:
        assert response.status == 200
        data = response.json()["data"]
        assert (data["lifecycleStatus"], data["terminal"]) == ("cancelled", True)
    else:
        assert response.status == 409
        assert response.json()["errors"][0]["code"] == action["reason"]


def test_parked_transaction_is_refused_cancel_until_an_operator_fix_then_allowed_again() -> None:
    """States: a parked transaction is final "unless acted on outside the API" (rule 2);
    after the operator fix it is in-flight again, so cancel follows the open-state rule."""
    svc = make_service()
    tx_id = _initiate(svc, 2)
    svc.world.arm(tx_id, Outcome.FAILED)
    step_until(svc.world, "transaction.state", transactionId=tx_id,
               event="transaction.parked")
    assert _cancel_action(svc, tx_id) == {"allowed": False, "reason": "transaction_failed"}
    svc.world.resolve(tx_id)
    action = _cancel_action(svc, tx_id)
    assert action == {"allowed": False, "reason": "settlement_in_progress"}  # Burning resumes
    assert svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key).status == 409


def test_amounts_above_zero_with_at_most_18_integer_digits_are_accepted_19_are_400() -> None:
    """Limits: "amount bounds: not shown" (docs/semantics.md, Transactions: greater than
    zero, at most 18 integer digits and the asset's places). The bound is checked at the
    door; the member's balance is the saga's to judge (a lock refused ends failed)."""
    svc = make_service()
    largest = "9" * 18 + ".99"
    response = svc.call("POST", TX, svc.member.key, svc.redeem_body(amount=largest))
    assert response.status == 201, response.body
    svc.world.run_all()
    tx = svc.world.transactions[response.json()["data"]["id"]]
    assert (tx.lifecycle_status.value, tx.parked, tx.reason_code) == (
        "failed", False, "insufficient_funds")
    for amount in ("1" + "0" * 18, "0.00", "0"):
        refused = svc.call("POST", TX, svc.member.key, svc.redeem_body(amount=amount))
        assert refused.status == 400
        assert refused.json()["errors"][0]["code"] == "invalid_amount", amount


def test_a_portal_session_is_valid_8_hours_of_virtual_time_written_out() -> None:
    """docs/semantics.md (the public API): portal sessions are valid 8 hours of virtual time
    (28 800 s); an expired one is 401 credential_expired. Issued at 0 ms: valid at
    28 799 999 ms, expired at 28 800 000 ms."""
    svc = make_service()
    svc.world.run_until(28_799_999)
    assert svc.call("GET", TX, svc.member.admin).status == 200
    svc.world.run_until(28_800_000)
    response = svc.call("GET", TX, svc.member.admin)
    assert response.status == 401
    assert response.json()["errors"][0]["code"] == "credential_expired"


def test_an_agents_expiry_may_be_365_days_away_not_one_ms_more_written_out() -> None:
    """docs/semantics.md (Agents): an agent's expiry must be in the future and within 365
    days. At 2026-01-01T00:00:00Z, 2027-01-01T00:00:00.000Z is accepted and .001 refused."""
    svc = make_service()
    caps = {"initiateTransaction": True}
    ok = svc.call("POST", "/api/v1/sandbox/agents", svc.member.admin,
                  {"capabilities": caps, "expiresAt": "2027-01-01T00:00:00.000Z"})
    assert ok.status == 201, ok.body
    late = svc.call("POST", "/api/v1/sandbox/agents", svc.member.admin,
                    {"capabilities": caps, "expiresAt": "2027-01-01T00:00:00.001Z"})
    assert late.status == 400
    assert late.json()["errors"][0]["code"] == "expires_in_past"


# Limits "not shown" whose choices (docs/semantics.md) were pinned only through constants ---
def _status_code(response: Any) -> tuple[int, str | None]:
    errors = response.json().get("errors") if response.body else None
    return response.status, errors[0]["code"] if errors else None


def test_request_bodies_are_read_up_to_1_048_576_bytes_then_413_written_out() -> None:
    """docs/semantics.md: bodies over 1 MiB are 413 payload_too_large. A body of exactly
    1 048 576 bytes is read (and refused for what it says); one byte more is 413."""
    svc = make_service()
    for size, expected in ((1 << 20, (400, "required")),
                           ((1 << 20) + 1, (413, "payload_too_large"))):
        body = b"{" + b" " * (size - 2) + b"}"
        response = svc.call("POST", "/api/v1/webhooks", svc.member.key, body=body)
        assert _status_code(response) == expected, size


@pytest.mark.parametrize(("text", "expected"), [
    ('{"x":' + "[" * 31 + "]" * 31 + "}", (400, "required")),  # 32 levels
    ('{"x":' + "[" * 32 + "]" * 32 + "}", (400, "malformed_json")),  # 33 levels
    ('{"x":' + "9" * 30 + "}", (400, "required")),  # a 30-digit integer
    ('{"x":' + "9" * 31 + "}", (400, "malformed_json")),  # 31 digits
])
def test_body_depth_32_levels_and_integers_of_30_digits_written_out(
        text: str, expected: tuple[int, str]) -> None:
    """docs/semantics.md, the body decoder: at most 32 levels of arrays and objects and
    integers of at most 30 digits, else 400 malformed_json (before any field is read)."""
    svc = make_service()
    response = svc.call("POST", "/api/v1/webhooks", svc.member.key, body=text.encode())
    assert _status_code(response) == expected


def test_the_transaction_list_pages_20_by_default_written_out() -> None:
    """docs/semantics.md: `limit` 1–100, default 20 ("default page size: not shown")."""
    svc = make_service()
    for i in range(21):
        _initiate_ref(svc, f"P{i}")
    page = svc.call("GET", TX, svc.member.key).json()
    assert len(page["data"]) == 20 and page["meta"]["nextCursor"] is not None
    rest = svc.call("GET", f"{TX}?cursor={page['meta']['nextCursor']}", svc.member.key).json()
    assert len(rest["data"]) == 1 and rest["meta"]["nextCursor"] is None


@pytest.mark.parametrize(("field", "limit"), [("organisationName", 200),
                                              ("intendedUseCase", 500)])
def test_onboarding_text_bounds_written_out(field: str, limit: int) -> None:
    """docs/semantics.md (onboarding): `organisationName` and `intendedUseCase` (1–500
    characters) are bounded; one character more is 400 at that field."""
    svc = make_service()
    body: dict[str, Any] = {"role": "participant", "custodyModel": "mpc", "chains": ["evm"],
                            "primaryContact": {"name": "Ada", "email": "ada@east.example"},
                            "organisationName": "Eastbank", "dryRun": True}
    body[field] = "e" * limit
    assert svc.call("POST", "/api/v1/onboarding/applications", None, body).status == 200
    body[field] = "e" * (limit + 1)
    response = svc.call("POST", "/api/v1/onboarding/applications", None, body)
    assert response.status == 400
    assert response.json()["errors"][0]["param"] == field
