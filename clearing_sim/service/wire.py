"""The wire converter: domain values → the spec's JSON shapes (plain dicts, camelCase).

Public names: ``money``, ``asset``, ``party``, ``transaction_full``, ``transaction_item``.

One converter for the API, so whichever door a request came through the bytes are the same.
Timestamps render from the world's epoch (ISO 8601 UTC with milliseconds). The initiation
response fields (fee fields, ``feeStatus``, ``settlement``) are always included in the full
form: a client that reads them after initiation sees the same values (docs/semantics.md).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from clearing_sim.domain.money import Asset, Money
from clearing_sim.domain.parties import Party
from clearing_sim.domain.saga import StepStatus
from clearing_sim.domain.timefmt import render_iso
from clearing_sim.domain.transaction import Side, Transaction, cancel_action

__all__ = ["asset", "money", "party", "transaction_full", "transaction_item"]


def asset(value: Asset) -> dict[str, str]:
    if value.issuer is None:
        return {"code": value.code}
    return {"code": value.code, "issuer": value.issuer}


def money(value: Money) -> dict[str, Any]:
    return {"amount": value.wire_amount(), "asset": asset(value.asset)}


def party(value: Party) -> dict[str, str]:
    return {"participantId": value.participant_id,
            "participantKind": value.participant_kind.value,
            "participantName": value.participant_name}


def _side(value: Side) -> dict[str, Any]:
    return {"amount": money(value.amount), "party": party(value.party)}


def _decimal(value: Decimal) -> str:
    """Exactly as quoted: the debit and receive at the asset's places, the fee in pennies."""
    return f"{value:f}"


def transaction_full(tx: Transaction, epoch_ms: int) -> dict[str, Any]:
    """The spec's Transaction (full form): every field of its table."""
    cancel = cancel_action(tx)
    saga = tx.saga
    # most of the form's times are one instant (all four at initiation): rendered once each
    rendered: dict[int, str] = {}

    def iso(at_ms: int) -> str:
        found = rendered.get(at_ms)
        if found is None:
            found = rendered[at_ms] = render_iso(epoch_ms, at_ms)
        return found

    steps = []
    for step in saga.steps:
        item: dict[str, Any] = {"name": step.name.value, "status": step.status.value}
        if step.happened_at_ms is not None and step.status is not StepStatus.PENDING:
            item["happenedAt"] = iso(step.happened_at_ms)
        steps.append(item)
    details: dict[str, Any] = {
        "chain": tx.chain.value,
        "rtgs": tx.rtgs.value,
        "sagaStep": {"current": saga.current_index + 1, "name": saga.current.name.value,
                     "total": saga.total},
    }
    if tx.reason_code is not None:
        details["reason"] = {"code": tx.reason_code}
    return {
        "id": tx.id,
        "paymentReference": tx.payment_reference,
        "useCase": tx.use_case.value,
        "lifecycleStatus": tx.lifecycle_status.value,
        "parked": tx.parked,
        "terminal": tx.terminal,
        "initiatedAt": iso(tx.initiated_at_ms),
        "updatedAt": iso(tx.updated_at_ms),
        "source": _side(tx.source),
        "target": _side(tx.target),
        "actions": {
            "cancel": {"allowed": cancel.allowed} if cancel.allowed
            else {"allowed": False, "reason": cancel.reason},
            "override": {"cancel": {"allowed": tx.parked}, "settle": {"allowed": tx.parked}},
        },
        "details": details,
        "saga": {"currentStepIndex": saga.current_index, "steps": steps},
        "debitAmount": _decimal(tx.quote.debit_amount),
        "platformFeeAmount": _decimal(tx.quote.platform_fee_amount),
        "receiveAmount": _decimal(tx.quote.receive_amount),
        "feeStatus": tx.fee_status.value,
        "settlement": {"creditor": party(tx.creditor), "debtor": party(tx.debtor)},
    }


def transaction_item(tx: Transaction) -> dict[str, Any]:
    """The list form: summary fields only; saga and actions come with the full form."""
    return {"id": tx.id, "lifecycleStatus": tx.lifecycle_status.value, "parked": tx.parked,
            "paymentReference": tx.payment_reference, "terminal": tx.terminal,
            "useCase": tx.use_case.value}

