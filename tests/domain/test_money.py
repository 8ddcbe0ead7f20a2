"""Money (spec, "Money object": ``amount`` is a decimal string; DESIGN: Decimal, never float)."""

from __future__ import annotations

import re
from decimal import Decimal

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.money import GBP, AmountError, Asset, Money, parse_amount
from tests.strategies import amounts, wire_amounts

GBPS = Asset("GBPS", "GSTELLARISSUER", 2, "GBP")
GBPE = Asset("GBPE", "0xETHERISSUER", 2, "GBP")
MICRO = Asset("GBPM", "GMICROISSUER", 6, "GBP")


# -- parse_amount: what a wire amount is ----------------------------------------------------

def test_parse_amount_accepts_a_plain_decimal_string() -> None:
    money = parse_amount("100.00", GBP)
    assert money == Money(GBP, Decimal("100.00"))
    assert type(money.amount) is Decimal
    assert money.wire_amount() == "100.00"


@pytest.mark.parametrize(("text", "expected"), [
    ("100", "100.00"), ("100.5", "100.50"), ("0.01", "0.01"), ("0.1", "0.10"),
    ("999999999999999999.99", "999999999999999999.99"),
])
def test_parse_amount_accepts_fewer_places_and_renders_the_assets_places(
        text: str, expected: str) -> None:
    assert parse_amount(text, GBP).wire_amount() == expected


@pytest.mark.parametrize("value", [
    100.0, 0.1, 100, 0, Decimal("100.00"), None, b"100.00", True, ["100.00"],
], ids=repr)
def test_parse_amount_refuses_anything_but_a_string(value: object) -> None:
    """Wire amounts are decimal strings: floats, ints and Decimals are refused, never coerced."""
    with pytest.raises(AmountError):
        parse_amount(value, GBP)


@pytest.mark.parametrize("text", [
    "1e3", "1E3", "1.0e2", "1E-2",          # exponents
    "+1.00", "-1.00", "-0.01", "+0",        # signs
    "NaN", "nan", "sNaN", "Infinity", "inf", "-Infinity",
    "01.0", "00.50", "007", "00",           # leading zeros
    "1.", ".5", "", " ", " 1.00", "1.00 ",  # incomplete or padded
    "1,000.00", "1_000.00", "1 000.00", "0x10",
    "١٠٠.٠٠",                               # non-ASCII digits
    "1234567890123456789.00",               # more than 18 integer digits
], ids=repr)
def test_parse_amount_refuses_non_plain_notation(text: str) -> None:
    with pytest.raises(AmountError):
        parse_amount(text, GBP)


@pytest.mark.parametrize("text", ["0", "0.00", "0.0"])
def test_parse_amount_refuses_zero(text: str) -> None:
    with pytest.raises(AmountError):
        parse_amount(text, GBP)


def test_parse_amount_refuses_more_decimals_than_the_asset_precision() -> None:
    with pytest.raises(AmountError, match="decimal places"):
        parse_amount("100.001", GBP)
    with pytest.raises(AmountError):
        parse_amount("0.0000001", MICRO)
    assert parse_amount("100.001", MICRO).wire_amount() == "100.001000"
    assert parse_amount("100.100", GBP).wire_amount() == "100.10"  # trailing zeros are fine


def test_parse_amount_refuses_a_trailing_newline() -> None:
    with pytest.raises(AmountError):
        parse_amount("100.00\n", GBP)


@pytest.mark.parametrize("text", ["10000000000.5", "999999999999999999"])
def test_parse_amount_with_precision_18_returns_money_or_amount_error(text: str) -> None:
    """amountPrecision may be 18 and the wire pattern allows 18 integer digits: every string
    the pattern accepts must end as Money or AmountError, never an arithmetic exception."""
    asset = Asset("GBPX", "GXISSUER", 18, "GBP")
    try:
        money = parse_amount(text, asset)
    except AmountError:
        return
    assert money.amount == Decimal(text)


@settings(max_examples=100)
@given(st.integers(0, 18).flatmap(lambda p: st.tuples(st.just(p), wire_amounts(p))))
def test_wire_amount_round_trips_through_parse_amount(case: tuple[int, str]) -> None:
    places, text = case
    asset = Asset("GBPX", "GXISSUER", places, "GBP")
    money = parse_amount(text, asset)
    assert money.wire_amount() == text
    assert parse_amount(money.wire_amount(), asset) == money


# -- wire_amount ----------------------------------------------------------------------------

@pytest.mark.parametrize(("asset", "amount", "expected"), [
    (GBP, Decimal("100"), "100.00"),
    (GBP, Decimal("1.0"), "1.00"),
    (GBP, Decimal("0"), "0.00"),
    (MICRO, Decimal("1"), "1.000000"),
    (Asset("WHOLE", "GW", 0), Decimal("5"), "5"),
    (GBP, Decimal("1E+3"), "1000.00"),  # never exponent notation
])
def test_wire_amount_always_renders_the_assets_decimal_places(
        asset: Asset, amount: Decimal, expected: str) -> None:
    assert Money(asset, amount).wire_amount() == expected


@settings(max_examples=100)
@given(amounts(2, min_value="0"))
def test_wire_amount_is_plain_notation_with_two_places_for_gbp(amount: Decimal) -> None:
    assert re.fullmatch(r"(0|[1-9][0-9]*)\.[0-9]{2}", Money(GBP, amount).wire_amount())


# -- Money: Decimal only, one asset -----------------------------------------------------------

@pytest.mark.parametrize("amount", [0.1, 100, "100.00", Decimal("NaN"), Decimal("Infinity")],
                         ids=repr)
def test_money_holds_only_a_finite_decimal(amount: object) -> None:
    with pytest.raises(AmountError):
        Money(GBP, amount)  # type: ignore[arg-type]


def test_money_refuses_negative_amounts_and_excess_places() -> None:
    with pytest.raises(AmountError, match="negative"):
        Money(GBP, Decimal("-0.01"))
    with pytest.raises(AmountError, match="decimal places"):
        Money(GBP, Decimal("0.001"))


def test_money_of_refuses_a_float() -> None:
    with pytest.raises((AmountError, TypeError)):
        Money.of(1.005, GBP)  # type: ignore[arg-type]


def test_money_of_and_zero() -> None:
    assert Money.of("100", GBP).amount == Decimal("100.00")
    assert Money.of(7, MICRO).wire_amount() == "7.000000"
    assert Money.zero(MICRO) == Money(MICRO, Decimal("0.000000"))


@settings(max_examples=50)
@given(amounts(2), amounts(2))
def test_money_arithmetic_keeps_the_asset(a: Decimal, b: Decimal) -> None:
    total = Money(GBPS, a) + Money(GBPS, b)
    assert total == Money(GBPS, a + b)
    assert (total - Money(GBPS, b)).amount == a


@pytest.mark.parametrize(("left", "right"), [(GBPS, GBPE), (GBPS, GBP), (GBP, GBPS)])
def test_money_refuses_mixing_assets(left: Asset, right: Asset) -> None:
    with pytest.raises(AmountError, match="cannot combine"):
        Money(left, Decimal("1.00")) + Money(right, Decimal("1.00"))
    with pytest.raises(AmountError, match="cannot combine"):
        Money(left, Decimal("1.00")) - Money(right, Decimal("1.00"))


@settings(max_examples=80)
@given(st.sampled_from([GBP, GBPS, MICRO]),
       st.decimals(min_value=0, max_value=10**12, allow_nan=False, allow_infinity=False,
                   places=8))
def test_money_made_without_a_second_check_is_the_money_its_validator_admits(
        asset: Asset, amount: Decimal) -> None:
    """``Money.of`` and ``parse_amount`` build without running the validator again (issue
    18); the value is the one ``Money(asset, amount)`` checks and builds: equal, the same
    hash, repr and rendering, frozen."""
    made = Money.of(amount, asset)
    checked = Money(asset, amount.quantize(asset.quantum))
    assert made == checked and hash(made) == hash(checked) and repr(made) == repr(checked)
    assert made.amount.as_tuple() == checked.amount.as_tuple()
    if made.amount > 0:
        parsed = parse_amount(made.wire_amount(), asset)
        assert parsed == checked and repr(parsed) == repr(checked)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made.amount = Decimal(1)  # type: ignore[misc]


@pytest.mark.parametrize("amount", [Decimal("-0.01"), Decimal("-5"), -1, Decimal("NaN")],
                         ids=repr)
def test_money_of_refuses_a_negative_or_not_finite_amount(amount: Decimal | int) -> None:
    with pytest.raises(AmountError):
        Money.of(amount, GBP)


def test_money_refuses_a_negative_result() -> None:
    with pytest.raises(AmountError):
        Money(GBP, Decimal("1.00")) - Money(GBP, Decimal("2.00"))


# -- Asset ----------------------------------------------------------------------------------

def test_asset_equality_ignores_precision_and_currency_but_not_issuer() -> None:
    same = Asset("GBPS", "GSTELLARISSUER", 6, "EUR")
    assert same == GBPS
    assert hash(same) == hash(GBPS)
    assert Asset("GBPS", "GOTHERISSUER", 2, "GBP") != GBPS
    assert Asset("GBPS") != GBPS  # fiat-shaped (no issuer) is another asset
    assert Asset("GBPE", "GSTELLARISSUER") != GBPS


def test_asset_is_fiat_only_without_issuer() -> None:
    assert GBP.is_fiat
    assert GBP.precision == 2
    assert GBP.currency == "GBP"
    assert not GBPS.is_fiat


@pytest.mark.parametrize("code", ["", "GBP-S", "GBP S", "ABCDEFGHIJKLM", "£"])
def test_asset_code_is_1_to_12_alphanumerics(code: str) -> None:
    with pytest.raises(ValueError):
        Asset(code)


@pytest.mark.parametrize("precision", [-1, 19])
def test_asset_precision_is_0_to_18(precision: int) -> None:
    with pytest.raises(ValueError):
        Asset("GBPX", "GX", precision)


def test_money_and_asset_are_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        GBP.code = "EUR"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Money(GBP, Decimal("1.00")).amount = Decimal("2.00")  # type: ignore[misc]
