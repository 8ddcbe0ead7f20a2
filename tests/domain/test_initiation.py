"""What a valid initiation is (spec, "Transactions": initiate body; redeem target is fiat,
swap source and target are issued assets; 400 for an invalid body)."""

from __future__ import annotations

import contextlib
from decimal import Decimal

import pytest
from hypothesis import given, settings

from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.domain.initiation import (
    PAYMENT_REFERENCE_LENGTH_MAX,
    AssetRef,
    InitiateRequest,
    LegRequest,
    check_initiation,
)
from clearing_sim.domain.money import GBP, Asset, Money
from clearing_sim.domain.transaction import UseCase
from tests.strategies import wire_amounts

GBPS = Asset("GBPS", "GSTELLARISSUER", 2, "GBP")
GBPE = Asset("GBPE", "0xETHERISSUER", 2, "GBP")
GBPM = Asset("GBPM", "GMICROISSUER", 6, "GBP")
EURS = Asset("EURS", "GEUROISSUER", 2, "EUR")
EUR = Asset("EUR", None, 2, "EUR")


def request(use_case: UseCase, source: Asset, target: Asset, amount: str = "100.00",
            target_amount: str | None = None, reference: str = "INV-0001") -> InitiateRequest:
    return InitiateRequest(use_case, reference,
                           LegRequest(amount, AssetRef(source.code, source.issuer)),
                           LegRequest(target_amount or amount, AssetRef(target.code,
                                                                        target.issuer)))


def problems(req: InitiateRequest, source: Asset, target: Asset) -> list[tuple[str | None, str]]:
    with pytest.raises(InvalidRequest) as info:
        check_initiation(req, source, target)
    return [(p.param, p.code) for p in info.value.problems]


def test_redeem_of_a_gbp_stablecoin_for_gbp_at_par_is_valid() -> None:
    source, target = check_initiation(request(UseCase.REDEEM, GBPS, GBP), GBPS, GBP)
    assert source == Money(GBPS, Decimal("100.00"))
    assert target == Money(GBP, Decimal("100.00"))


def test_swap_between_two_gbp_stablecoins_with_equal_amounts_is_valid() -> None:
    source, target = check_initiation(request(UseCase.SWAP, GBPS, GBPE), GBPS, GBPE)
    assert (source, target) == (Money(GBPS, Decimal("100.00")), Money(GBPE, Decimal("100.00")))


def test_equal_amounts_compare_by_value_across_precisions() -> None:
    req = request(UseCase.SWAP, GBPS, GBPM, "100.00", "100.000000")
    assert check_initiation(req, GBPS, GBPM)[1].amount == Decimal("100")


@settings(max_examples=50)
@given(wire_amounts())
def test_any_positive_amount_at_par_is_a_valid_redeem(amount: str) -> None:
    source, target = check_initiation(request(UseCase.REDEEM, GBPS, GBP, amount), GBPS, GBP)
    assert source.wire_amount() == target.wire_amount() == amount


@pytest.mark.parametrize("use_case", list(UseCase))
def test_unequal_amounts_are_an_amount_mismatch_at_target_amount(use_case: UseCase) -> None:
    target = GBP if use_case is UseCase.REDEEM else GBPE
    req = request(use_case, GBPS, target, "100.00", "99.90")
    assert problems(req, GBPS, target) == [("target.amount", "amount_mismatch")]


def test_redeem_with_an_issued_target_is_refused() -> None:
    assert problems(request(UseCase.REDEEM, GBPS, GBPE), GBPS, GBPE) == [
        ("target.asset", "fiat_required")]


def test_redeem_for_another_currency_is_refused() -> None:
    assert problems(request(UseCase.REDEEM, GBPS, EUR), GBPS, EUR) == [
        ("target.asset", "currency_mismatch")]
    assert problems(request(UseCase.REDEEM, EURS, GBP), EURS, GBP) == [
        ("target.asset", "currency_mismatch")]


def test_swap_with_a_fiat_target_is_refused() -> None:
    assert problems(request(UseCase.SWAP, GBPS, GBP), GBPS, GBP) == [
        ("target.asset", "issued_asset_required")]


def test_swap_of_an_asset_for_itself_is_refused() -> None:
    same = Asset("GBPS", "GSTELLARISSUER", 2, "GBP")
    assert problems(request(UseCase.SWAP, GBPS, same), GBPS, same) == [
        ("target.asset", "same_asset")]


def test_swap_across_currencies_is_refused() -> None:
    assert problems(request(UseCase.SWAP, GBPS, EURS), GBPS, EURS) == [
        ("target.asset", "currency_mismatch")]


@pytest.mark.parametrize("use_case", list(UseCase))
def test_a_fiat_source_is_refused(use_case: UseCase) -> None:
    assert problems(request(use_case, GBP, GBPS), GBP, GBPS) == [
        ("source.asset", "issued_asset_required")]


@pytest.mark.parametrize("reference", ["", "   ", "x" * (PAYMENT_REFERENCE_LENGTH_MAX + 1)],
                         ids=["empty", "blank", "141 chars"])
def test_a_bad_payment_reference_is_refused(reference: str) -> None:
    req = request(UseCase.REDEEM, GBPS, GBP, reference=reference)
    assert problems(req, GBPS, GBP) == [("paymentReference", "invalid_value")]


@pytest.mark.parametrize("reference", ["x", "x" * 140, "INV 0001 / März"])
def test_payment_references_of_1_to_140_characters_are_valid(reference: str) -> None:
    assert PAYMENT_REFERENCE_LENGTH_MAX == 140
    check_initiation(request(UseCase.REDEEM, GBPS, GBP, reference=reference), GBPS, GBP)


@pytest.mark.parametrize("amount", ["1e2", "-100.00", "0", "100.001", "01.00", "NaN"])
def test_an_invalid_source_amount_is_named(amount: str) -> None:
    req = request(UseCase.REDEEM, GBPS, GBP, amount, "100.00")
    assert problems(req, GBPS, GBP) == [("source.amount", "invalid_amount")]


def test_every_problem_is_reported_at_once_and_mismatch_only_when_all_else_is_valid() -> None:
    req = request(UseCase.SWAP, GBPS, GBP, "abc", "-1", reference="")
    assert problems(req, GBPS, GBP) == [
        ("paymentReference", "invalid_value"),
        ("source.amount", "invalid_amount"),
        ("target.amount", "invalid_amount"),
        ("target.asset", "issued_asset_required"),
    ]


def test_a_large_amount_of_an_18_place_asset_is_money_or_an_invalid_request() -> None:
    fine = Asset("GBPX", "GXISSUER", 18, "GBP")
    other = Asset("GBPY", "GYISSUER", 18, "GBP")
    req = request(UseCase.SWAP, fine, other, "10000000000.00")
    with contextlib.suppress(InvalidRequest):
        check_initiation(req, fine, other)
