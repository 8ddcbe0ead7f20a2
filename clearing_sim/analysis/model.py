"""A workload as typed values: who takes part, how they behave, what arrives and when.

Public names: ``AMOUNT_DIGITS_MAX``, ``AMOUNT_MAX``, ``Amount``, ``Arrivals``, ``IssuerLoad``,
``MemberLoad``, ``Outage``, ``ReceiverLoad``, ``WebhookLoad``, ``Workload``.

A ``Workload`` is what a workload file (``docs/workloads.md``) says once it has been read and
checked: durations are milliseconds, profiles and issuer behaviours are the engine's validated
values, amounts are ``Decimal``. It holds no seed: one workload runs under many seeds. Every
value here is frozen and picklable, so a sweep can ship it to another process or a Dask
worker unchanged. ``Amount.sample`` and ``Arrivals.rate_at`` are the only behaviour; they draw
from the stream they are given, never from a global generator.
"""

from __future__ import annotations

import math
import random
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from attrs import field, frozen

from clearing_sim.domain.calendar import OperatingCalendar
from clearing_sim.domain.latency import Latency
from clearing_sim.domain.profile import IssuerProfile
from clearing_sim.sim.issuer import IssuerBehaviour

__all__ = ["AMOUNT_DIGITS_MAX", "AMOUNT_MAX", "Amount", "Arrivals", "IssuerLoad", "MemberLoad",
           "Outage", "ReceiverLoad", "WebhookLoad", "Workload"]

_PENNY = Decimal("0.01")
#: Digits an amount of a distribution has at most before the point, and after it: as the
#: API's wire amounts (``domain.money.parse_amount``).
AMOUNT_DIGITS_MAX = 18
#: The largest amount ``Amount.sample`` draws: the API's largest with two places.
AMOUNT_MAX = Decimal(10) ** AMOUNT_DIGITS_MAX - _PENNY
HOUR_MS = 3_600_000


@frozen
class Amount:
    """An amount distribution, in the asset's units, rounded half-even to 0.01, from 0.01 to
    ``AMOUNT_MAX``.

    ``kind`` is ``fixed`` (``low``), ``uniform`` (``low``–``high``), ``lognormal`` (``median``,
    ``sigma``, clipped to ``low``–``high`` when given) or ``choice`` (``choices`` with weights).
    The loader keeps what ``sample`` needs: a median above 0, ``sigma`` at most 10, amounts of
    at most ``AMOUNT_DIGITS_MAX`` digits before the point and after it, choice weights with a
    finite total.
    """

    kind: str
    low: Decimal | None = None
    high: Decimal | None = None
    median: Decimal | None = None
    sigma: float = 1.0
    choices: tuple[tuple[Decimal, float], ...] = ()

    @classmethod
    def fixed(cls, amount: Decimal) -> Amount:
        return cls("fixed", low=amount)

    def sample(self, rng: random.Random) -> Decimal:
        if self.kind == "fixed":
            assert self.low is not None
            value = self.low
        elif self.kind == "uniform":
            assert self.low is not None and self.high is not None
            value = self.low + (self.high - self.low) * Decimal(repr(rng.random()))
        elif self.kind == "lognormal":
            assert self.median is not None
            drawn = rng.lognormvariate(math.log(float(self.median)), self.sigma)
            value = Decimal(repr(drawn))
            if self.low is not None:
                value = max(value, self.low)
            # a draw far in the tail has more digits than a Decimal quantizes: cap it first
            value = min(value, AMOUNT_MAX if self.high is None else self.high)
        else:
            amounts = [amount for amount, _ in self.choices]
            weights = [weight for _, weight in self.choices]
            value = rng.choices(amounts, weights)[0]
        return min(max(value.quantize(_PENNY, ROUND_HALF_EVEN), _PENNY), AMOUNT_MAX)


@frozen
class Arrivals:
    """A Poisson process: ``rate_per_hour``, optionally shaped by 24 hourly multipliers."""

    rate_per_hour: float
    intraday: tuple[float, ...] | None = None

    @property
    def peak_per_hour(self) -> float:
        return self.rate_per_hour * (max(self.intraday) if self.intraday else 1.0)

    def rate_at(self, unix_ms: float) -> float:
        """Initiations per hour at a moment (the hour of day is UTC)."""
        if self.intraday is None:
            return self.rate_per_hour
        return self.rate_per_hour * self.intraday[int(unix_ms // HOUR_MS) % 24]


@frozen
class MemberLoad:
    key: str
    name: str
    arrivals: Arrivals
    assets: tuple[tuple[str, float], ...]  # source asset code → weight
    rtgs_gbp: Decimal = Decimal("0.00")
    wallets: tuple[tuple[str, Decimal], ...] = ()
    mix: tuple[tuple[str, float], ...] = (("redeem", 1.0),)  # use case → weight
    amount: Amount = Amount.fixed(Decimal("100.00"))


@frozen
class IssuerLoad:
    key: str
    name: str
    profile: IssuerProfile | None
    behaviour: IssuerBehaviour = IssuerBehaviour()
    assets: tuple[str, ...] = ()
    rtgs_gbp: Decimal = Decimal("0.00")
    currency: str = "GBP"


@frozen
class Outage:
    """The endpoint answers ``status`` to requests arriving in [``from_ms``, ``until_ms``)."""

    from_ms: int
    until_ms: int
    status: int = 503


@frozen
class ReceiverLoad:
    status: int = 200
    latency: Latency | None = None
    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    reorder_delay: Latency | None = None
    duplicate_delay: Latency | None = None
    outages: tuple[Outage, ...] = ()

    @property
    def is_default(self) -> bool:
        return self == ReceiverLoad()


@frozen
class WebhookLoad:
    key: str
    participant: str  # a member's or an issuer's key
    url: str
    events: tuple[str, ...]
    site: str  # "path:line:col: field", where the file defines it (for setup errors)
    description: str | None = None
    receiver: ReceiverLoad = ReceiverLoad()


@frozen
class Workload:
    name: str
    path: str
    horizon_ms: int
    issuers: tuple[IssuerLoad, ...]
    members: tuple[MemberLoad, ...]
    webhooks: tuple[WebhookLoad, ...] = ()
    description: str = ""
    epoch: str = "2026-01-01T00:00:00.000Z"
    drain_ms: int | None = None
    rtgs_calendar: OperatingCalendar | None = None  # the RTGS's hours; None: always open
    data: Any = field(default=None, eq=False, repr=False)  # the file's data, for sweeps
