"""Transactions through the API (spec, "Transactions", "States and transitions", Errors)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.instruction import Outcome
from tests.service.conftest import Service, make_service

TX = "/api/v1/transactions"


def _initiate(svc: Service, body: dict | None = None, token: str | None = None) -> dict:
    response = svc.call("POST", TX, token or svc.member.key, body or svc.redeem_body())
    assert response.status == 201, response.body
    return response.json()["data"]


def test_initiate_is_201_full_form_with_fees_settlement_and_saga(svc: Service) -> None:
    """Transition (none) → received: Received and Validated done with happenedAt, Lock
    current; fee fields, feeStatus and settlement on the initiation response."""
    data = _initiate(svc)
    assert data["lifecycleStatus"] == "received"
    assert (data["parked"], data["terminal"]) == (False, False)
    steps = data["saga"]["steps"]
    assert [(s["name"], s["status"]) for s in steps] == [
        ("Received", "done"), ("Validated", "done"), ("Lock", "current"),
        ("Earmarked", "pending"), ("Burning", "pending"), ("Settled", "pending")]
    assert all("happenedAt" in s for s in steps[:2])
    assert all("happenedAt" not in s for s in steps[3:])
    assert data["saga"]["currentStepIndex"] == 2
    assert data["details"]["sagaStep"] == {"current": 3, "name": "Lock", "total": 6}
    assert (data["debitAmount"], data["platformFeeAmount"], data["receiveAmount"]) == (
        "100.00", "0.10", "99.90")
    assert data["feeStatus"] == "pending"
    member = svc.member.participant
    assert data["settlement"]["creditor"]["participantId"] == member.id
    assert data["settlement"]["debtor"]["participantId"] == svc.issuers[2].participant.id
    assert data["actions"]["cancel"] == {"allowed": True}
    assert data["source"]["amount"] == {"amount": "100.00", "asset": {
        "code": "GBPE", "issuer": svc.cast.asset(2).issuer}}
    assert data["target"]["amount"] == {"amount": "99.90", "asset": {"code": "GBP"}}
    assert data["initiatedAt"] == data["updatedAt"] == "2026-01-01T00:00:00.000Z"


def test_the_initiation_command_id_is_the_transactions_command(svc: Service) -> None:
    response = svc.call("POST", TX, svc.member.key, svc.redeem_body()).json()
    tx = svc.world.transactions[response["data"]["id"]]
    assert tx.command_id == response["meta"]["commandId"]


@pytest.mark.parametrize(("mutate", "param", "code"), [
    (lambda b: b.pop("useCase"), "useCase", "required"),
    (lambda b: b.update(useCase="burn"), "useCase", "invalid_value"),
    (lambda b: b.update(paymentReference=""), "paymentReference", "invalid_value"),
    (lambda b: b.update(paymentReference="x" * 141), "paymentReference", "invalid_value"),
    (lambda b: b["source"].update(amount="-1.00"), "source.amount", "invalid_amount"),
    (lambda b: b["source"].update(amount="1.001"), "source.amount", "invalid_amount"),
    (lambda b: b["source"].update(amount=100), "source.amount", "invalid_type"),
    (lambda b: b["source"]["asset"].update(issuer="GNOPE"), "source.asset", "unknown_asset"),
    (lambda b: b["target"]["asset"].update(code="EUR"), "target.asset", "unknown_asset"),
    (lambda b: b["target"].update(amount="99.00"), "target.amount", "amount_mismatch"),
    (lambda b: b.update(extra=1), "extra", "unknown_field"),
    (lambda b: b["source"].update(extra=1), "source.extra", "unknown_field"),
    (lambda b: b.update(agent={"agentId": "agt_x"}), "agent.mandateProof", "required"),
])
def test_an_invalid_initiation_is_400_naming_the_field_and_changes_nothing(
        svc: Service, mutate, param: str, code: str) -> None:
    body = svc.redeem_body()
    mutate(body)
    before = (len(svc.world.transactions), svc.world.ledgers)
    response = svc.call("POST", TX, svc.member.key, body)
    assert response.status == 400
    errors = response.json()["errors"]
    assert (errors[0]["param"], errors[0]["code"]) == (param, code)
    assert all(e["type"] == "invalid_request_error" for e in errors)
    assert len(svc.world.transactions) == before[0]
    assert not svc.world.log.select("transaction.state")


def test_a_swap_initiates_with_the_target_issuer_as_creditor(svc: Service) -> None:
    data = _initiate(svc, svc.swap_body(2, 3))
    assert data["useCase"] == "swap"
    assert data["settlement"]["creditor"]["participantId"] == svc.issuers[3].participant.id
    assert data["target"]["amount"]["asset"]["code"] == "GBPQ"


def test_get_returns_the_full_form_and_poll_until_terminal(svc: Service) -> None:
    tx_id = _initiate(svc)["id"]
    svc.world.run_all()
    data = svc.call("GET", f"{TX}/{tx_id}", svc.member.key).json()["data"]
    assert (data["lifecycleStatus"], data["terminal"], data["parked"]) == (
        "settled", True, False)
    assert data["actions"]["cancel"] == {"allowed": False, "reason": "already_settled"}
    assert data["feeStatus"] == "collected"


@pytest.mark.parametrize("tx_id", ["00000000-0000-4000-8000-000000000000", "not-a-uuid",
                                   "%00", "x" * 500])
def test_get_of_an_unknown_transaction_is_404(svc: Service, tx_id: str) -> None:
    response = svc.call("GET", f"{TX}/{tx_id}", svc.member.key)
    assert response.status == 404
    assert response.json()["errors"][0]["code"] == "transaction_not_found"


def test_cancel_is_200_full_form_cancelled_with_asset_returned(svc: Service) -> None:
    """Transition open → cancelled: 5 steps, last Cancelled, reason operator_cancelled."""
    tx_id = _initiate(svc)["id"]
    svc.world.advance(1_000)
    response = svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key)
    assert response.status == 200
    data = response.json()["data"]
    assert (data["lifecycleStatus"], data["terminal"]) == ("cancelled", True)
    assert data["details"]["reason"] == {"code": "operator_cancelled"}
    assert data["saga"]["steps"][-1] == {"name": "Cancelled", "status": "cancelled",
                                         "happenedAt": "2026-01-01T00:00:01.000Z"}
    assert len(data["saga"]["steps"]) == 5
    asset = svc.cast.asset(2)
    ledger = svc.world.ledgers[svc.cast.issuers[2].profile.ledger]
    wallet = svc.world.wallet(svc.member.participant, ledger.ledger)
    assert ledger.balance(wallet, asset).amount == Decimal("10000.00")


def test_cancel_after_settlement_is_409_and_changes_nothing(svc: Service) -> None:
    """Transition settled --cancel--> unchanged: 409, cancellation rejected."""
    tx_id = _initiate(svc)["id"]
    svc.world.run_all()
    before = svc.call("GET", f"{TX}/{tx_id}", svc.member.key).json()["data"]
    response = svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key)
    assert response.status == 409
    assert response.json()["errors"][0]["code"] == "already_settled"
    assert svc.call("GET", f"{TX}/{tx_id}", svc.member.key).json()["data"] == before


def test_cancel_once_burning_started_is_409_settlement_in_progress(svc: Service) -> None:
    tx_id = _initiate(svc)["id"]
    world = svc.world
    while world.transactions[tx_id].saga.current.name.value != "Burning":
        world.env.step()
    data = svc.call("GET", f"{TX}/{tx_id}", svc.member.key).json()["data"]
    assert data["actions"]["cancel"] == {"allowed": False, "reason": "settlement_in_progress"}
    response = svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key)
    assert response.status == 409
    assert response.json()["errors"][0]["code"] == "settlement_in_progress"


def test_cancel_accepts_no_other_body_fields(svc: Service) -> None:
    tx_id = _initiate(svc)["id"]
    response = svc.call("POST", f"{TX}/{tx_id}/cancel", svc.member.key, {"reason": "x"})
    assert response.status == 400
    assert svc.world.transactions[tx_id].lifecycle_status.value == "received"


# list ----------------------------------------------------------------------------------------
def _page(svc: Service, token: str, query: str = "") -> dict:
    response = svc.call("GET", f"{TX}{query}", token)
    assert response.status == 200, response.body
    return response.json()


def test_the_list_returns_only_the_callers_summaries(svc: Service) -> None:
    mine = _initiate(svc)["id"]
    items = _page(svc, svc.member.key)["data"]
    assert items == [{"id": mine, "lifecycleStatus": "received", "parked": False,
                      "paymentReference": "INV-1", "terminal": False, "useCase": "redeem"}]
    assert _page(svc, svc.other.key)["data"] == []
    assert [i["id"] for i in _page(svc, svc.issuers[2].key)["data"]] == [mine]
    assert _page(svc, svc.issuers[1].key)["data"] == []


def _walk(svc: Service, limit: int) -> list[str]:
    seen: list[str] = []
    query = f"?limit={limit}"
    while True:
        body = _page(svc, svc.member.key, query)
        assert len(body["data"]) <= limit
        seen += [item["id"] for item in body["data"]]
        cursor = body["meta"]["nextCursor"]
        if cursor is None:
            return seen
        query = f"?limit={limit}&cursor={cursor}"


@settings(max_examples=25, deadline=None)
@given(count=st.integers(0, 12), limit=st.integers(1, 5))
def test_pages_concatenated_equal_the_full_list_without_duplicates(count: int,
                                                                    limit: int) -> None:
    svc = make_service()
    ids = [_initiate(svc, svc.redeem_body(reference=f"R{i}"))["id"] for i in range(count)]
    walked = _walk(svc, limit)
    assert walked == ids[::-1]
    assert _page(svc, svc.member.key, "?limit=100")["data"] == [
        item for item in _page(svc, svc.member.key, "?limit=100")["data"]]


def test_pages_are_stable_when_transactions_arrive_between_pages(svc: Service) -> None:
    first = [_initiate(svc, svc.redeem_body(reference=f"A{i}"))["id"] for i in range(5)]
    page1 = _page(svc, svc.member.key, "?limit=2")
    late = _initiate(svc, svc.redeem_body(reference="LATE"))["id"]
    seen = [i["id"] for i in page1["data"]]
    cursor = page1["meta"]["nextCursor"]
    while cursor is not None:
        body = _page(svc, svc.member.key, f"?limit=2&cursor={cursor}")
        seen += [i["id"] for i in body["data"]]
        cursor = body["meta"]["nextCursor"]
    assert seen == first[::-1]
    assert late not in seen
    assert _page(svc, svc.member.key, "?limit=1")["data"][0]["id"] == late


@pytest.mark.parametrize("query", ["?limit=0", "?limit=101", "?limit=-1", "?limit=x",
                                   "?limit=1.5", "?cursor=zzz", "?cursor=", "?page=2",
                                   "?limit=%EF%BC%91"])
def test_bad_list_queries_are_400(svc: Service, query: str) -> None:
    response = svc.call("GET", f"{TX}{query}", svc.member.key)
    assert response.status == 400
    assert response.json()["errors"][0]["code"] in ("invalid_query", "invalid_cursor")


# recovery-status -----------------------------------------------------------------------------
def test_recovery_status_follows_a_parked_transaction_through_an_operator_fix(
        svc: Service) -> None:
    """States rule 2: parked awaits an operator; the fix re-enters in-flight."""
    tx_id = _initiate(svc)["id"]
    svc.world.arm(tx_id, Outcome.FAILED)
    svc.world.run_all()
    status = svc.call("GET", f"{TX}/{tx_id}/recovery-status", svc.member.key).json()["data"]
    assert (status["lifecycleStatus"], status["parked"], status["terminal"]) == (
        "failed", True, True)
    assert (status["recoverable"], status["awaiting"]) == (True, "operator")
    assert status["reason"] == {"code": "issuer_failed"}
    assert status["parkedAt"] is not None
    assert status["operatorFixes"] == 0
    svc.world.resolve(tx_id)
    status = svc.call("GET", f"{TX}/{tx_id}/recovery-status",
                      svc.issuers[2].key).json()["data"]
    assert (status["lifecycleStatus"], status["awaiting"], status["operatorFixes"]) == (
        "in-flight", "service", 1)
    assert [h["event"] for h in status["history"]][-2:] == [
        "transaction.parked", "transaction.in_flight"]
    svc.world.run_all()
    status = svc.call("GET", f"{TX}/{tx_id}/recovery-status", svc.member.key).json()["data"]
    assert (status["lifecycleStatus"], status["awaiting"], status["recoverable"]) == (
        "settled", "none", False)
