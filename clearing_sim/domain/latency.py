"""Latency distributions as values; sampling takes the stream to draw from.

Public names: ``Latency``, ``Fixed``, ``Uniform``, ``Exponential``, ``LogNormal``,
``parse_latency``.

Every sample is a whole number of milliseconds ≥ 0. ``LogNormal`` is the usual shape for
network and approval latencies: ``median_ms`` and ``sigma``, clipped at ``max_ms``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from attrs import Factory, field, frozen, validators

from clearing_sim.domain.timefmt import parse_duration_ms

__all__ = ["Exponential", "Fixed", "Latency", "LogNormal", "Uniform", "parse_latency"]

_non_negative = validators.ge(0)
_NV_MAGICCONST = 4 * math.exp(-0.5) / math.sqrt(2.0)  # random.NV_MAGICCONST, as random.py makes it
_exp, _log = math.exp, math.log


@frozen
class Fixed:
    ms: int = field(validator=_non_negative)

    def sample(self, rng: random.Random) -> int:
        return self.ms


def _not_below_low(instance: Uniform, attribute: object, value: int) -> None:
    if value < instance.low_ms:
        raise ValueError(f"uniform latency: high {value} ms is below low {instance.low_ms} ms")


@frozen
class Uniform:
    low_ms: int = field(validator=_non_negative)
    high_ms: int = field(validator=[_non_negative, _not_below_low])

    def sample(self, rng: random.Random) -> int:
        return rng.randint(self.low_ms, self.high_ms)


@frozen
class Exponential:
    mean_ms: int = field(validator=validators.gt(0))

    def sample(self, rng: random.Random) -> int:
        return round(rng.expovariate(1.0 / self.mean_ms))


def _log_median(instance: LogNormal) -> float:
    return math.log(instance.median_ms)


@frozen
class LogNormal:
    """``sample`` is ``round(rng.lognormvariate(log(median_ms), sigma))``, capped: the log
    of the median is taken once, and the draw is the standard library's own definition of
    ``lognormvariate`` (``exp`` of ``normalvariate``) without its calls: ``normalvariate``'s
    loop is written out here (Kinderman and Monahan, as in ``random.py``), the same
    ``random()`` calls in the same order giving the same floats."""

    median_ms: int = field(validator=validators.gt(0))
    sigma: float = field(default=0.5, validator=validators.ge(0.0))
    max_ms: int | None = field(default=None,
                               validator=validators.optional(validators.ge(0)))
    _mu: float = field(init=False, repr=False, eq=False,
                       default=Factory(_log_median, takes_self=True))

    def sample(self, rng: random.Random) -> int:
        draw = rng.random
        while True:  # random.Random.normalvariate
            u1 = draw()
            u2 = 1.0 - draw()
            z = _NV_MAGICCONST * (u1 - 0.5) / u2
            if z * z / 4.0 <= -_log(u2):
                break
        value = round(_exp(self._mu + z * self.sigma))
        max_ms = self.max_ms
        return value if max_ms is None or value <= max_ms else max_ms


Latency = Fixed | Uniform | Exponential | LogNormal


def _ms(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of ms or a string like '5s'")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return parse_duration_ms(value)
    raise ValueError("a duration must be a number of ms or a string like '5s'")


def parse_latency(spec: object) -> Latency:
    """``"5s"`` or ``{fixed: 5s}``, ``{uniform: [1s, 3s]}``, ``{exponential: 2s}``,
    ``{lognormal: {median: 2s, sigma: 0.5, max: 30s}}``; ``ValueError`` for anything else."""
    try:
        return _parse_latency(spec)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed latency {spec!r}: {exc}") from None


def _parse_latency(spec: object) -> Latency:
    if isinstance(spec, (str, int)) and not isinstance(spec, bool):
        return Fixed(_ms(spec))
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise ValueError("a latency is a duration or a one-key mapping "
                         "(fixed, uniform, exponential, lognormal)")
    ((kind, value),) = spec.items()
    if kind == "fixed":
        return Fixed(_ms(value))
    if kind == "uniform" and isinstance(value, list) and len(value) == 2:
        return Uniform(_ms(value[0]), _ms(value[1]))
    if kind == "exponential":
        return Exponential(_ms(value))
    if kind == "lognormal" and isinstance(value, Mapping):
        cap = value.get("max")
        return LogNormal(_ms(value["median"]), float(value.get("sigma", 0.5)),
                         None if cap is None else _ms(cap))
    raise ValueError(f"unknown latency form {kind!r}")
