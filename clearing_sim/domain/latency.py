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

__all__ = ["SIGMA_MAX", "Exponential", "Fixed", "Latency", "LogNormal", "Uniform",
           "parse_latency"]

#: past it a draw overflows a float (exp of z * sigma): no latency is that spread
SIGMA_MAX = 10.0
_LOGNORMAL_KEYS = frozenset({"median", "sigma", "max"})

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


def _width(instance: Uniform) -> int:
    return instance.high_ms - instance.low_ms + 1


@frozen
class Uniform:
    """``sample`` is ``rng.randint(low_ms, high_ms)``: the draw ``random.Random`` makes for
    it (``randrange``'s ``_randbelow``: ``getrandbits`` of the width's bit length until
    one falls below the width), written out with the width and its bit length taken once."""

    low_ms: int = field(validator=_non_negative)
    high_ms: int = field(validator=[_non_negative, _not_below_low])
    _width: int = field(init=False, repr=False, eq=False,
                        default=Factory(_width, takes_self=True))

    def sample(self, rng: random.Random) -> int:
        width = self._width
        bits = width.bit_length()
        drawn = rng.getrandbits(bits)
        while drawn >= width:
            drawn = rng.getrandbits(bits)
        return self.low_ms + drawn


@frozen
class Exponential:
    mean_ms: int = field(validator=validators.gt(0))

    def sample(self, rng: random.Random) -> int:
        return round(rng.expovariate(1.0 / self.mean_ms))


def _log_median(instance: LogNormal) -> float:
    return math.log(instance.median_ms)


def _cap(instance: LogNormal) -> float:
    return math.inf if instance.max_ms is None else instance.max_ms


@frozen
class LogNormal:
    """``sample`` is ``round(rng.lognormvariate(log(median_ms), sigma))``, capped: the log
    of the median is taken once, and the draw is the standard library's own definition of
    ``lognormvariate`` (``exp`` of ``normalvariate``) without its calls: ``normalvariate``'s
    loop is written out here (Kinderman and Monahan, as in ``random.py``), the same
    ``random()`` calls in the same order giving the same floats."""

    median_ms: int = field(validator=validators.gt(0))
    sigma: float = field(default=0.5, validator=[validators.ge(0.0),
                                                 validators.le(SIGMA_MAX)])
    max_ms: int | None = field(default=None,
                               validator=validators.optional(validators.ge(0)))
    _mu: float = field(init=False, repr=False, eq=False,
                       default=Factory(_log_median, takes_self=True))
    _cap: float = field(init=False, repr=False, eq=False,  # max_ms, or no cap: infinity
                        default=Factory(_cap, takes_self=True))

    def sample(self, rng: random.Random) -> int:
        draw = rng.random
        u1 = draw()  # random.Random.normalvariate: most draws take one try
        u2 = 1.0 - draw()
        z = _NV_MAGICCONST * (u1 - 0.5) / u2
        while z * z / 4.0 > -_log(u2):
            u1 = draw()
            u2 = 1.0 - draw()
            z = _NV_MAGICCONST * (u1 - 0.5) / u2
        value = round(_exp(self._mu + z * self.sigma))
        cap = self._cap
        return value if value <= cap else int(cap)


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
        unknown = sorted(str(name)[:40] for name in value if name not in _LOGNORMAL_KEYS)
        if unknown:
            raise ValueError(f"a lognormal latency has median, sigma and max, not {unknown}")
        sigma = value.get("sigma", 0.5)
        if isinstance(sigma, bool) or not isinstance(sigma, int | float) \
                or not 0 <= sigma <= SIGMA_MAX:
            raise ValueError(f"a lognormal sigma is a number from 0 to {SIGMA_MAX:g}")
        cap = value.get("max")
        return LogNormal(_ms(value["median"]), float(sigma), None if cap is None else _ms(cap))
    raise ValueError(f"unknown latency form {kind!r}")
