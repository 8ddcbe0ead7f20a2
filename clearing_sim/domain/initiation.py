"""What a valid initiation is: the pairing of use case and assets, amounts at par, a reference.

Public names: ``AssetRef``, ``LegRequest``, ``InitiateRequest``, ``check_initiation``,
``PAYMENT_REFERENCE_LENGTH_MAX``.

A redeem pays an issued asset for the fiat it is denominated in (100.00 of a GBP stablecoin
for 100.00 GBP); a swap exchanges two different issued assets of the same currency with equal
amounts. The platform fee comes out of the amount (``clearing_sim.domain.fees``), so the
request states equal amounts on both sides. Problems are named by field path, first the one
that decides the answer.
"""

from __future__ import annotations

from attrs import frozen

from clearing_sim.domain.errors import InvalidRequest, Problem
from clearing_sim.domain.money import AmountError, Asset, Money, parse_amount
from clearing_sim.domain.transaction import UseCase

__all__ = ["PAYMENT_REFERENCE_LENGTH_MAX", "AssetRef", "InitiateRequest", "LegRequest",
           "check_initiation"]

PAYMENT_REFERENCE_LENGTH_MAX = 140


@frozen
class AssetRef:
    code: str
    issuer: str | None = None


@frozen
class LegRequest:
    amount: str
    asset: AssetRef


@frozen
class InitiateRequest:
    use_case: UseCase
    payment_reference: str
    source: LegRequest
    target: LegRequest


def check_initiation(request: InitiateRequest, source_asset: Asset,
                     target_asset: Asset) -> tuple[Money, Money]:
    """Validate a request whose assets are resolved; return the source and target amounts."""
    problems: list[Problem] = []
    ref = request.payment_reference
    if not ref.strip() or len(ref) > PAYMENT_REFERENCE_LENGTH_MAX:
        problems.append(Problem("paymentReference", "invalid_value",
                                f"paymentReference must be 1 to {PAYMENT_REFERENCE_LENGTH_MAX} "
                                "characters"))
    amounts: list[Money] = []
    for side, leg, asset in (("source", request.source, source_asset),
                             ("target", request.target, target_asset)):
        try:
            amounts.append(parse_amount(leg.amount, asset))
        except AmountError as exc:
            problems.append(Problem(f"{side}.amount", "invalid_amount", str(exc)))
    problems.extend(_pairing(request.use_case, source_asset, target_asset))
    if not problems and amounts[0].amount != amounts[1].amount:
        problems.append(Problem("target.amount", "amount_mismatch",
                                "source and target amounts must be equal (settlement at par; "
                                "the platform fee is taken from the amount)"))
    if problems:
        raise InvalidRequest(*problems)
    return amounts[0], amounts[1]


def _pairing(use_case: UseCase, source: Asset, target: Asset) -> list[Problem]:
    if source.is_fiat:
        return [Problem("source.asset", "issued_asset_required",
                        "the source must be an issued asset with its issuer")]
    if use_case is UseCase.REDEEM:
        if not target.is_fiat:
            return [Problem("target.asset", "fiat_required",
                            "a redeem's target is fiat, without an issuer")]
        if target.code != source.currency:
            return [Problem("target.asset", "currency_mismatch",
                            f"{source.code} redeems for {source.currency}, not {target.code}")]
        return []
    if target.is_fiat:
        return [Problem("target.asset", "issued_asset_required",
                        "a swap's target is an issued asset with its issuer")]
    if target == source:
        return [Problem("target.asset", "same_asset", "a swap needs two different assets")]
    if target.currency != source.currency:
        return [Problem("target.asset", "currency_mismatch",
                        "a swap exchanges assets of the same currency")]
    return []
