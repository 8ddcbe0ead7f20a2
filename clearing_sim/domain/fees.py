"""The platform fee schedule and the quote of a transaction.

Public names: ``FeeSchedule``, ``Quote``, ``quote``.

The fee is charged in the fiat currency of the transaction (GBP) and lands in the operator's
RTGS fee account at settlement: ``debitAmount`` = amount, ``platformFeeAmount`` = amount ×
``rate_bps`` / 10 000 rounded half-even to 2 decimal places, floored at ``minimum`` and never
more than the amount; ``receiveAmount`` = amount − fee. A redeem pays ``receiveAmount`` of
fiat to the member; a swap mints ``receiveAmount`` of the target asset. See docs/semantics.md.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from attrs import field, frozen, validators

__all__ = ["FeeSchedule", "Quote", "quote"]

_PENNY = Decimal("0.01")


@frozen
class FeeSchedule:
    """Basis points of the amount, with a floor; both in the fiat currency (GBP)."""

    rate_bps: int = field(default=10, validator=[validators.ge(0), validators.le(10_000)])
    minimum: Decimal = field(default=Decimal("0.00"))

    def fee_for(self, amount: Decimal) -> Decimal:
        raw = (amount * self.rate_bps / Decimal(10_000)).quantize(_PENNY, ROUND_HALF_EVEN)
        return min(max(raw, self.minimum), amount)


@frozen
class Quote:
    """The fee fields of an initiation response, as Decimals in the transaction's currency."""

    debit_amount: Decimal
    platform_fee_amount: Decimal
    receive_amount: Decimal


def quote(amount: Decimal, schedule: FeeSchedule) -> Quote:
    fee = schedule.fee_for(amount)
    return Quote(debit_amount=amount, platform_fee_amount=fee, receive_amount=amount - fee)
