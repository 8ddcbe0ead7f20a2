"""The wire forms of a transaction (spec, "Transaction (full form)", "Transaction (list
item)", "Money object", "Party object"; the initiation response of "States and transitions").

``clearing_sim.service.wire`` is the API layer's converter; it is tested here, beside the
domain values it renders, because it is pure: a Transaction in, plain dicts out.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest

from clearing_sim.domain.profile import parse_profile
from clearing_sim.domain.transaction import Transaction
from clearing_sim.service import wire
from clearing_sim.sim.examples import Cast, example_world, redeem, swap
from clearing_sim.sim.world import World, WorldConfig

ISO_MS_Z = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
FULL_FORM_FIELDS = {
    "id", "paymentReference", "lifecycleStatus", "parked", "terminal", "initiatedAt",
    "updatedAt", "source", "target", "actions", "details", "saga", "receiveAmount",
    "platformFeeAmount", "debitAmount", "feeStatus", "settlement", "useCase",
}
PARTY_FIELDS = {"participantId", "participantKind", "participantName"}


@pytest.fixture
def cast() -> Cast:
    return example_world(7)


def initiate_redeem(cast: Cast) -> tuple[Transaction, dict[str, Any]]:
    tx = cast.world.initiate(cast.member.id, redeem(cast.asset(1)))
    return tx, wire.transaction_full(tx, cast.world.epoch_ms)


def assert_party(value: dict[str, Any]) -> None:
    assert set(value) == PARTY_FIELDS
    assert value["participantKind"] in ("clearing_member", "stablecoin_issuer")
    assert all(isinstance(v, str) for v in value.values())


def assert_money(value: dict[str, Any], fiat: bool) -> None:
    assert set(value) == {"amount", "asset"}
    assert isinstance(value["amount"], str)
    assert set(value["asset"]) == ({"code"} if fiat else {"code", "issuer"})


def test_transaction_full_has_exactly_the_full_form_fields(cast: Cast) -> None:
    _, data = initiate_redeem(cast)
    assert set(data) == FULL_FORM_FIELDS
    assert isinstance(data["parked"], bool)
    assert isinstance(data["terminal"], bool)
    assert ISO_MS_Z.fullmatch(data["initiatedAt"])
    assert ISO_MS_Z.fullmatch(data["updatedAt"])
    for side in ("source", "target"):
        assert set(data[side]) == {"amount", "party"}
        assert_party(data[side]["party"])
    assert set(data["actions"]) == {"cancel", "override"}
    assert set(data["actions"]["override"]) == {"cancel", "settle"}
    assert set(data["actions"]["override"]["cancel"]) == {"allowed"}
    assert set(data["actions"]["override"]["settle"]) == {"allowed"}
    assert set(data["details"]) == {"chain", "rtgs", "sagaStep"}  # no reason before cancel
    assert set(data["details"]["sagaStep"]) == {"current", "name", "total"}
    assert set(data["saga"]) == {"currentStepIndex", "steps"}
    for step in data["saga"]["steps"]:
        assert set(step) in ({"name", "status"}, {"name", "status", "happenedAt"})
    assert set(data["settlement"]) == {"creditor", "debtor"}
    assert_party(data["settlement"]["creditor"])
    assert_party(data["settlement"]["debtor"])


def test_initiation_response_of_a_redeem(cast: Cast) -> None:
    """Spec: POST /transactions -> received; Received and Validated done, Lock current."""
    tx, data = initiate_redeem(cast)
    assert data["id"] == tx.id
    assert data["paymentReference"] == "INV-0001"
    assert data["useCase"] == "redeem"
    assert (data["lifecycleStatus"], data["parked"], data["terminal"]) == (
        "received", False, False)
    assert data["initiatedAt"] == data["updatedAt"] == "2026-01-01T00:00:00.000Z"
    assert data["saga"]["currentStepIndex"] == 2
    assert data["saga"]["steps"] == [
        {"name": "Received", "status": "done", "happenedAt": "2026-01-01T00:00:00.000Z"},
        {"name": "Validated", "status": "done", "happenedAt": "2026-01-01T00:00:00.000Z"},
        {"name": "Lock", "status": "current"},
        {"name": "Earmarked", "status": "pending"},
        {"name": "Burning", "status": "pending"},
        {"name": "Settled", "status": "pending"},
    ]
    assert data["details"] == {"chain": "None", "rtgs": "None",
                               "sagaStep": {"current": 3, "name": "Lock", "total": 6}}
    assert data["actions"] == {"cancel": {"allowed": True},
                               "override": {"cancel": {"allowed": False},
                                            "settle": {"allowed": False}}}
    assert (data["debitAmount"], data["platformFeeAmount"], data["receiveAmount"]) == (
        "100.00", "0.10", "99.90")
    assert data["feeStatus"] == "pending"


def test_redeem_source_is_issued_and_fiat_target_has_no_issuer(cast: Cast) -> None:
    """``target.amount`` is what lands on the target side: ``receiveAmount``, for redeems
    and swaps alike (docs/semantics.md)."""
    _, data = initiate_redeem(cast)
    asset = cast.asset(1)
    assert_money(data["source"]["amount"], fiat=False)
    assert data["source"]["amount"] == {"amount": "100.00",
                                        "asset": {"code": asset.code, "issuer": asset.issuer}}
    assert_money(data["target"]["amount"], fiat=True)
    assert data["target"]["amount"] == {"amount": "99.90", "asset": {"code": "GBP"}}


def test_redeem_parties_and_settlement(cast: Cast) -> None:
    _, data = initiate_redeem(cast)
    member = {"participantId": cast.member.id, "participantKind": "clearing_member",
              "participantName": "Northbank"}
    issuer = {"participantId": cast.issuers[1].id, "participantKind": "stablecoin_issuer",
              "participantName": "Stellar Sterling"}
    assert data["source"]["party"] == member
    assert data["settlement"] == {"creditor": member, "debtor": issuer}


def test_swap_target_is_an_issued_asset_with_its_issuer(cast: Cast) -> None:
    tx = cast.world.initiate(cast.member.id, swap(cast.asset(2), cast.asset(3)))
    data = wire.transaction_full(tx, cast.world.epoch_ms)
    assert data["useCase"] == "swap"
    assert_money(data["target"]["amount"], fiat=False)
    assert data["target"]["amount"]["asset"] == {"code": "GBPQ",
                                                 "issuer": cast.asset(3).issuer}
    assert data["settlement"]["creditor"]["participantId"] == cast.issuers[3].id
    assert data["settlement"]["debtor"]["participantId"] == cast.issuers[2].id


def test_after_cancellation_details_reason_and_the_cancelled_path(cast: Cast) -> None:
    """Spec: details.reason present after cancellation (operator_cancelled); total 5 on the
    cancelled path, the last step Cancelled with status cancelled; terminal true."""
    tx, _ = initiate_redeem(cast)
    cancelled = cast.world.cancel(tx.id)
    data = wire.transaction_full(cancelled, cast.world.epoch_ms)
    assert set(data) == FULL_FORM_FIELDS
    assert (data["lifecycleStatus"], data["terminal"], data["parked"]) == (
        "cancelled", True, False)
    assert data["details"]["reason"] == {"code": "operator_cancelled"}
    assert data["details"]["sagaStep"] == {"current": 5, "name": "Cancelled", "total": 5}
    assert [s["name"] for s in data["saga"]["steps"]] == [
        "Received", "Validated", "Lock", "Earmarked", "Cancelled"]
    assert data["saga"]["steps"][-1]["status"] == "cancelled"
    assert data["saga"]["steps"][0]["status"] == "done"
    assert data["actions"]["cancel"] == {"allowed": False, "reason": "already_cancelled"}


def test_transaction_item_has_exactly_the_list_fields(cast: Cast) -> None:
    tx, _ = initiate_redeem(cast)
    assert wire.transaction_item(tx) == {
        "id": tx.id, "lifecycleStatus": "received", "parked": False,
        "paymentReference": "INV-0001", "terminal": False, "useCase": "redeem"}


def test_wire_forms_are_deterministic_for_a_seed() -> None:
    first, second = example_world(3), example_world(3)
    a = wire.transaction_full(first.world.initiate(first.member.id, redeem(first.asset(2))),
                              first.world.epoch_ms)
    b = wire.transaction_full(second.world.initiate(second.member.id, redeem(second.asset(2))),
                              second.world.epoch_ms)
    assert a == b


def test_fee_fields_render_the_quote_exactly() -> None:
    world = World(WorldConfig(seed=1))
    body = {"commitPoint": "ON_OBSERVATION", "custodyModel": "POOLED_ISSUER_WALLET",
            "feedbackChannel": ["POLLABLE_RESOURCE"], "fiatLeg": "ISSUER_SETTLES_RTGS",
            "ledger": "stellar", "amountPrecision": 6}
    a = world.add_issuer("A", parse_profile(body), ("GBPA",), Decimal("1000000.00"))
    b = world.add_issuer("B", parse_profile(body), ("GBPB",), Decimal("1000000.00"))
    member = world.add_member("M", Decimal("0"), {a.assets[0]: Decimal("1000")})
    tx = world.initiate(member.id, swap(a.assets[0], b.assets[0], "100.000001"))
    data = wire.transaction_full(tx, world.epoch_ms)
    assert Decimal(data["debitAmount"]) == tx.quote.debit_amount
    assert Decimal(data["receiveAmount"]) == tx.quote.receive_amount
