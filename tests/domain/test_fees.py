"""The platform fee and the initiation quote (spec, "Transaction (full form)": receiveAmount,
platformFeeAmount, debitAmount; schedule and rounding per docs/semantics.md)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.fees import FeeSchedule, Quote, quote
from tests.strategies import amounts

D = Decimal


def test_redeem_of_100_00_quotes_debit_100_00_fee_0_10_receive_99_90() -> None:
    q = quote(D("100.00"), FeeSchedule())
    assert q == Quote(debit_amount=D("100.00"), platform_fee_amount=D("0.10"),
                      receive_amount=D("99.90"))
    assert (f"{q.debit_amount}", f"{q.platform_fee_amount}", f"{q.receive_amount}") == (
        "100.00", "0.10", "99.90")


def test_default_schedule_is_10_bps_without_floor() -> None:
    assert FeeSchedule() == FeeSchedule(rate_bps=10, minimum=D("0.00"))


schedules = st.builds(FeeSchedule, rate_bps=st.integers(0, 10_000),
                      minimum=amounts(2, min_value="0", max_value="100"))


@settings(max_examples=100)
@given(amounts(2), schedules)
def test_receive_is_debit_minus_fee(amount: Decimal, schedule: FeeSchedule) -> None:
    q = quote(amount, schedule)
    assert q.debit_amount == amount
    assert q.receive_amount == q.debit_amount - q.platform_fee_amount


@settings(max_examples=100)
@given(amounts(2), schedules)
def test_fee_is_never_negative_and_never_exceeds_the_amount(
        amount: Decimal, schedule: FeeSchedule) -> None:
    fee = schedule.fee_for(amount)
    assert D(0) <= fee <= amount
    assert quote(amount, schedule).receive_amount >= 0


@settings(max_examples=100)
@given(amounts(2), st.integers(0, 10_000))
def test_fee_is_the_rate_rounded_to_pennies(amount: Decimal, rate_bps: int) -> None:
    fee = FeeSchedule(rate_bps=rate_bps).fee_for(amount)
    assert fee.as_tuple().exponent == -2
    assert abs(fee - amount * rate_bps / 10_000) <= D("0.005")


@settings(max_examples=100)
@given(amounts(6), st.integers(0, 10_000))
def test_fee_is_in_pennies_even_for_a_finer_asset(amount: Decimal, rate_bps: int) -> None:
    q = quote(amount, FeeSchedule(rate_bps=rate_bps))
    capped = q.platform_fee_amount == amount  # never more than the amount, even below a penny
    assert capped or q.platform_fee_amount == q.platform_fee_amount.quantize(D("0.01"))
    assert q.receive_amount + q.platform_fee_amount == amount


def test_minimum_floor_applies_to_small_amounts() -> None:
    schedule = FeeSchedule(rate_bps=10, minimum=D("1.00"))
    assert schedule.fee_for(D("100.00")) == D("1.00")     # 0.10 floored up to 1.00
    assert schedule.fee_for(D("5000.00")) == D("5.00")    # rate above the floor wins
    assert quote(D("100.00"), schedule).receive_amount == D("99.00")


def test_minimum_floor_never_exceeds_the_amount() -> None:
    q = quote(D("0.50"), FeeSchedule(rate_bps=10, minimum=D("1.00")))
    assert q.platform_fee_amount == D("0.50")
    assert q.receive_amount == D("0.00")


@pytest.mark.parametrize(("amount", "rate_bps", "fee"), [
    ("5.00", 10, "0.00"),     # 0.005  → 0.00 (half to even)
    ("15.00", 10, "0.02"),    # 0.015  → 0.02
    ("25.00", 10, "0.02"),    # 0.025  → 0.02
    ("35.00", 10, "0.04"),    # 0.035  → 0.04
    ("25.01", 10, "0.03"),    # 0.02501 → 0.03 (above half)
    ("150.00", 1, "0.02"),    # 0.015  → 0.02
    ("250.00", 1, "0.02"),    # 0.025  → 0.02
])
def test_fee_rounds_half_even_to_pennies(amount: str, rate_bps: int, fee: str) -> None:
    assert FeeSchedule(rate_bps=rate_bps).fee_for(D(amount)) == D(fee)


def test_full_rate_takes_the_whole_amount() -> None:
    q = quote(D("12.34"), FeeSchedule(rate_bps=10_000))
    assert (q.platform_fee_amount, q.receive_amount) == (D("12.34"), D("0.00"))


@pytest.mark.parametrize("rate_bps", [-1, 10_001])
def test_rate_is_0_to_10000_bps(rate_bps: int) -> None:
    with pytest.raises(ValueError):
        FeeSchedule(rate_bps=rate_bps)
