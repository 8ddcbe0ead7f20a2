"""The transaction value and ``actions.cancel`` (spec, "States and transitions": cancel of an
open transaction when ``actions.cancel.allowed``; after settlement any cancellation is rejected)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from clearing_sim.domain.fees import FeeSchedule, quote
from clearing_sim.domain.ids import CommandId, ParticipantId, TransactionId
from clearing_sim.domain.lifecycle import LifecycleStatus, State
from clearing_sim.domain.money import GBP, Asset, Money
from clearing_sim.domain.parties import ParticipantKind, Party
from clearing_sim.domain.profile import SettlementMode
from clearing_sim.domain.saga import Saga
from clearing_sim.domain.transaction import (
    CancelAction,
    ChainState,
    FeeStatus,
    LegTerms,
    RtgsState,
    Side,
    Transaction,
    UseCase,
    cancel_action,
)

S = LifecycleStatus
MEMBER = Party(ParticipantId("7af86bc6-f9ce-424b-8326-7284b40c1623"),
               ParticipantKind.CLEARING_MEMBER, "Northbank")
ISSUER = Party(ParticipantId("ee795cd5-c564-4cad-90c5-e8c470da5473"),
               ParticipantKind.STABLECOIN_ISSUER, "Ether Pound")
GBPE = Asset("GBPE", "0xETHERISSUER", 2, "GBP")


def make_tx(status: LifecycleStatus = S.RECEIVED, parked: bool = False,
            completed: int = 0) -> Transaction:
    """A redeem of 100.00 GBPE; ``completed`` steps of the saga done after initiation."""
    saga = Saga.initiated(0)
    for i in range(completed):
        saga = saga.complete_current(i + 1)
    return Transaction(
        id=TransactionId("f03848e1-1f13-4be1-80d9-d189cdc28f2f"),
        payment_reference="INV-0001", use_case=UseCase.REDEEM,
        initiator_id=MEMBER.participant_id,
        command_id=CommandId("6f1c2e9a-3b4d-4c5e-8f70-112233445566"),
        lifecycle_status=status, parked=parked, initiated_at_ms=0, updated_at_ms=0,
        source=Side(Money(GBPE, Decimal("100.00")), MEMBER),
        target=Side(Money(GBP, Decimal("100.00")), MEMBER),
        chain=ChainState.NONE, rtgs=RtgsState.NONE, saga=saga,
        quote=quote(Decimal("100.00"), FeeSchedule()), fee_status=FeeStatus.PENDING,
        creditor=MEMBER, debtor=ISSUER,
        legs=(LegTerms("burn", ISSUER.participant_id, SettlementMode.MODE_2, 1),))


@pytest.mark.parametrize(("status", "completed"), [
    (S.RECEIVED, 0),   # initiation response: Lock current
    (S.IN_FLIGHT, 0),  # Lock
    (S.IN_FLIGHT, 1),  # Earmarked: still before the irrevocable step
])
def test_cancel_allowed_in_received_and_in_flight_before_burning(
        status: LifecycleStatus, completed: int) -> None:
    assert cancel_action(make_tx(status, completed=completed)) == CancelAction(True, None)


@pytest.mark.parametrize("completed", [2, 3])  # Burning current, Settled current
def test_cancel_refused_once_burning_with_settlement_in_progress(completed: int) -> None:
    assert cancel_action(make_tx(S.IN_FLIGHT, completed=completed)) == CancelAction(
        False, "settlement_in_progress")


@pytest.mark.parametrize(("status", "parked", "reason"), [
    (S.SETTLED, False, "already_settled"),
    (S.CANCELLED, False, "already_cancelled"),
    (S.FAILED, False, "transaction_failed"),
    (S.FAILED, True, "transaction_failed"),
])
def test_cancel_refused_in_terminal_states_with_reason(
        status: LifecycleStatus, parked: bool, reason: str) -> None:
    """Spec: settled + POST cancel -> unchanged, 409; the reason is present when not allowed."""
    action = cancel_action(make_tx(status, parked))
    assert action == CancelAction(False, reason)


def test_the_state_decides_before_the_saga_step() -> None:
    """A parked transaction stopped before Burning still may not be cancelled by the caller."""
    assert cancel_action(make_tx(S.FAILED, parked=True, completed=1)).reason == \
        "transaction_failed"


@pytest.mark.parametrize(("status", "terminal"), [
    (S.RECEIVED, False), (S.IN_FLIGHT, False), (S.SETTLED, True), (S.CANCELLED, True),
    (S.FAILED, True),
])
def test_terminal_is_derived_from_the_status(status: LifecycleStatus, terminal: bool) -> None:
    assert make_tx(status).terminal is terminal


def test_state_pairs_status_and_parked() -> None:
    assert make_tx(S.FAILED, parked=True).state == State(S.FAILED, parked=True)


def test_legs_and_issuer_ids() -> None:
    mint = LegTerms("mint", ParticipantId("8b19115b-a4cf-447d-8025-a153b10b360c"),
                    SettlementMode.MODE_3, 4)
    tx = make_tx().replace(use_case=UseCase.SWAP, legs=(*make_tx().legs, mint))
    assert tx.leg("mint") == mint
    burn = tx.leg("burn")
    assert burn is not None and burn.issuer_id == ISSUER.participant_id
    assert tx.issuer_ids == (ISSUER.participant_id, mint.issuer_id)
    assert make_tx().leg("mint") is None


def test_enums_hold_the_spec_values_seen() -> None:
    assert {u.value for u in UseCase} == {"redeem", "swap"}
    assert {"None", "Locked", "ReturnedToSender"} <= {c.value for c in ChainState}
    assert {"None", "Earmarked", "Cancelled"} <= {r.value for r in RtgsState}
    assert FeeStatus.PENDING.value == "pending"



def test_replace_changes_the_named_fields_only_and_refuses_an_unknown_name() -> None:
    """``Transaction.replace`` is ``attrs.evolve`` (the book's update at each saga step)."""
    tx = make_tx()
    changes: dict[str, Any] = {"parked": True, "updated_at_ms": 99, "reason_code": "x"}
    new = tx.replace(**changes)
    assert type(new) is Transaction
    assert new == tx._replace(**changes)
    assert {name: getattr(new, name) for name in changes} == changes
    assert all(getattr(new, name) is getattr(tx, name)
               for name in Transaction._fields if name not in changes)
    assert tx.replace() == tx
    with pytest.raises(TypeError):
        tx.replace(no_such_field=1)


def test_a_transaction_cannot_be_changed_in_place() -> None:
    """The book is the one place a transaction changes: by a new value, never in place."""
    tx = make_tx()
    with pytest.raises(AttributeError):
        tx.parked = True  # type: ignore[misc]
    assert tx.parked is False
