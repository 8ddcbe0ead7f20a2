"""The transaction: one frozen value holding every field of the spec's full form.

Public names: ``UseCase``, ``ChainState``, ``RtgsState``, ``FeeStatus``, ``LegTerms``,
``Side``, ``Transaction``, ``CancelAction``, ``cancel_action``.

``terminal`` and ``actions`` are derived from the state, never stored, so they cannot
disagree with it. The wire forms (full and list item) are rendered by the API layer's
converter (``clearing_sim.service.wire``).

``Transaction`` is a typed tuple (``typing.NamedTuple``), not an attrs value like the rest of
``domain/``: the book makes a new one at every saga step (about seven per redeem), and a
frozen attrs class sets each of its 21 fields through ``object.__setattr__`` (about 20,000
instructions per construction against about 2,000 for the tuple, measured with callgrind).
A tuple is immutable by construction; ``replace`` is its ``attrs.evolve``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

from attrs import frozen

from clearing_sim.domain.fees import Quote
from clearing_sim.domain.ids import CommandId, ParticipantId, TransactionId
from clearing_sim.domain.lifecycle import TERMINAL_STATUSES, LifecycleStatus, State
from clearing_sim.domain.money import Money
from clearing_sim.domain.parties import Party
from clearing_sim.domain.profile import SettlementMode
from clearing_sim.domain.saga import IRREVOCABLE_STEP, Saga

__all__ = ["CancelAction", "ChainState", "FeeStatus", "LegTerms", "RtgsState", "Side",
           "Transaction", "UseCase", "cancel_action"]


class UseCase(StrEnum):
    REDEEM = "redeem"
    SWAP = "swap"


class ChainState(StrEnum):
    """``details.chain``: where the source asset is on its ledger (full set in semantics.md)."""

    NONE = "None"
    LOCKED = "Locked"
    TRANSFERRED_TO_ISSUER = "TransferredToIssuer"
    BURNED = "Burned"
    MINTED = "Minted"
    RETURNED_TO_SENDER = "ReturnedToSender"


class RtgsState(StrEnum):
    """``details.rtgs``: the fiat leg at the RTGS adapter (full set in semantics.md)."""

    NONE = "None"
    EARMARKED = "Earmarked"
    SETTLED = "Settled"
    CANCELLED = "Cancelled"


class FeeStatus(StrEnum):
    PENDING = "pending"
    COLLECTED = "collected"
    WAIVED = "waived"


@frozen
class LegTerms:
    """What a burn or mint leg runs under, captured at initiation (spec, Versioning 3)."""

    leg: str  # "burn" or "mint"
    issuer_id: ParticipantId
    mode: SettlementMode
    profile_version: int


@frozen
class Side:
    """``source`` or ``target``: an amount and the party it belongs to."""

    amount: Money
    party: Party


class Transaction(NamedTuple):
    id: TransactionId
    payment_reference: str
    use_case: UseCase
    initiator_id: ParticipantId
    command_id: CommandId
    lifecycle_status: LifecycleStatus
    parked: bool
    initiated_at_ms: int
    updated_at_ms: int
    source: Side
    target: Side
    chain: ChainState
    rtgs: RtgsState
    saga: Saga
    quote: Quote
    fee_status: FeeStatus
    creditor: Party
    debtor: Party
    legs: tuple[LegTerms, ...]
    reason_code: str | None = None
    agent_id: str | None = None

    @property
    def state(self) -> State:
        return State(self.lifecycle_status, self.parked)

    @property
    def terminal(self) -> bool:
        """``lifecycle.is_terminal`` of the status (read at every change of the book)."""
        return self.lifecycle_status in TERMINAL_STATUSES

    def leg(self, name: str) -> LegTerms | None:
        return next((leg for leg in self.legs if leg.leg == name), None)

    @property
    def issuer_ids(self) -> tuple[ParticipantId, ...]:
        """The issuers listed on this transaction, burn leg first."""
        return tuple(leg.issuer_id for leg in self.legs)

    @property
    def audience(self) -> tuple[ParticipantId, ...]:
        """The participants the transaction is in scope for (spec, Authentication 3): its
        initiating member and the issuers it lists. Reads, lists and webhooks use this one
        rule."""
        return (self.initiator_id, *self.issuer_ids)

    def replace(self, **changes: Any) -> Transaction:
        """This transaction with ``changes`` (what ``attrs.evolve`` is to an attrs value):
        every value copied at once, the changed ones put at their field's position."""
        values = list(self)
        for name, value in changes.items():
            index = _FIELD_INDEX.get(name)
            if index is None:
                raise TypeError(f"Transaction has no field {name!r}")
            values[index] = value
        return _new_tuple(Transaction, values)


_FIELD_INDEX = {name: i for i, name in enumerate(Transaction._fields)}
#: builds the tuple from a list of every field's value (``_make`` without its length check)
_new_tuple = tuple.__new__


@frozen
class CancelAction:
    allowed: bool
    reason: str | None = None


_CANCEL_REFUSALS = {
    LifecycleStatus.SETTLED: "already_settled",
    LifecycleStatus.CANCELLED: "already_cancelled",
    LifecycleStatus.FAILED: "transaction_failed",
}


def cancel_action(tx: Transaction) -> CancelAction:
    """``actions.cancel``: allowed while open and before the saga's irrevocable step."""
    refusal = _CANCEL_REFUSALS.get(tx.lifecycle_status)
    if refusal is not None:
        return CancelAction(False, refusal)
    if tx.saga.reached(IRREVOCABLE_STEP):
        return CancelAction(False, "settlement_in_progress")
    return CancelAction(True)
