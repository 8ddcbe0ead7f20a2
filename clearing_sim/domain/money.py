"""Money: a ``Decimal`` amount with its asset. Never float.

Public names: ``Asset``, ``Money``, ``AmountError``, ``parse_amount``, ``plain_decimal``,
``GBP``.

An asset is a code plus, for issued assets, the on-chain issuer account (``asset.issuer`` on
the wire); fiat has no issuer. Each asset carries its precision (decimal places): GBP has 2,
an issued asset has its issuer profile's ``amountPrecision``. Wire amounts are decimal strings
in plain notation (``"100.00"``); exponents, signs other than none, NaN and infinities are
refused, and so is an amount with more decimal places than its asset allows.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import Any

from attrs import field, frozen, validators

__all__ = ["GBP", "AmountError", "Asset", "Money", "parse_amount", "plain_decimal"]

_PLAIN_DECIMAL = re.compile(r"(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?")
#: Enough significant digits for 18 integer and 18 fractional digits, whatever the ambient
#: context says: quantizing never raises for an amount the pattern admits.
_EXACT = Context(prec=60)


class AmountError(ValueError):
    """A wire amount that is not a valid positive decimal for its asset."""


@frozen(order=False)
class Asset:
    """An asset: ``code``, on-chain ``issuer`` account (None for fiat), ``currency`` of value."""

    code: str = field(validator=validators.matches_re(r"^[A-Za-z0-9]{1,12}$"))
    issuer: str | None = None
    precision: int = field(default=2, eq=False, validator=validators.and_(
        validators.ge(0), validators.le(18)))
    currency: str = field(default="GBP", eq=False)

    @property
    def is_fiat(self) -> bool:
        return self.issuer is None

    @property
    def quantum(self) -> Decimal:
        return _QUANTA[self.precision]


#: The smallest unit at each precision (1, 0.1, …, 1E-18): ``quantum`` is read at every
#: amount check and rendering, so it is looked up, not recomputed.
_QUANTA = tuple(Decimal(1).scaleb(-places) for places in range(19))

GBP = Asset("GBP")


def _check_sign(value: Decimal) -> None:
    if not isinstance(value, Decimal) or not value.is_finite():
        raise AmountError(f"amount must be a finite Decimal, got {value!r}")
    if value < 0:
        raise AmountError(f"amount must not be negative, got {value}")


def _check_amount(instance: Money, attribute: Any, value: Decimal) -> None:
    _check_sign(value)
    if value != value.quantize(instance.asset.quantum, ROUND_HALF_EVEN, _EXACT):
        raise AmountError(
            f"amount {value} has more than {instance.asset.precision} decimal places "
            f"allowed for {instance.asset.code}")


@frozen
class Money:
    """An amount of one asset. Arithmetic keeps the asset and refuses to mix assets."""

    asset: Asset
    amount: Decimal = field(validator=_check_amount)

    @classmethod
    def of(cls, amount: str | int | Decimal, asset: Asset) -> Money:
        """An exact amount, rounded half-even to the asset's places. Never from a float."""
        if isinstance(amount, (float, bool)):
            raise AmountError("money is never made from a float or a bool")
        value = Decimal(amount) if not isinstance(amount, Decimal) else amount
        value = value.quantize(asset.quantum, ROUND_HALF_EVEN, _EXACT)
        _check_sign(value)  # on the asset's quantum now: the rest of the check holds
        return _checked(asset, value)

    @classmethod
    def zero(cls, asset: Asset) -> Money:
        return cls.of(0, asset)

    def _same(self, other: Money) -> None:
        if other.asset != self.asset:
            raise AmountError(f"cannot combine {self.asset.code} with {other.asset.code}")

    def __add__(self, other: Money) -> Money:
        self._same(other)
        return Money.of(self.amount + other.amount, self.asset)

    def __sub__(self, other: Money) -> Money:
        self._same(other)
        return Money.of(self.amount - other.amount, self.asset)

    def wire_amount(self) -> str:
        """The decimal string, always with the asset's decimal places (``"100.00"``)."""
        return f"{self.amount.quantize(self.asset.quantum, ROUND_HALF_EVEN, _EXACT):f}"


def plain_decimal(text: object) -> Decimal | None:
    """The value of a wire decimal string (ASCII digits, an optional point and fraction, no
    sign, exponent, spaces, underscores or other scripts' digits), or ``None``."""
    if not isinstance(text, str) or not _PLAIN_DECIMAL.fullmatch(text):
        return None
    return Decimal(text)


def parse_amount(text: object, asset: Asset) -> Money:
    """Parse a wire amount (a decimal string) for ``asset``; raise ``AmountError`` if invalid."""
    if not isinstance(text, str):
        raise AmountError("amount must be a decimal string")
    if not _PLAIN_DECIMAL.fullmatch(text):
        raise AmountError(f"amount {text[:40]!r} is not a plain positive decimal string")
    value = Decimal(text)
    if value <= 0:
        raise AmountError("amount must be greater than zero")
    exact = value.quantize(asset.quantum, ROUND_HALF_EVEN, _EXACT)
    if value != exact:
        raise AmountError(
            f"amount {text} has more than {asset.precision} decimal places "
            f"allowed for {asset.code}")
    return _checked(asset, exact)


_set = object.__setattr__


def _checked(asset: Asset, amount: Decimal) -> Money:
    """``Money(asset, amount)`` for an amount already checked as its validator checks it
    (finite, not negative, on the asset's quantum): built without checking it again, as
    the frozen class's own ``__init__`` sets its fields."""
    money = object.__new__(Money)
    _set(money, "asset", asset)
    _set(money, "amount", amount)
    return money
