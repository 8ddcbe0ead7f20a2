"""Virtual time rendering: integer milliseconds since the world's epoch → ISO 8601 UTC.

Public names: ``duration_text``, ``parse_iso``, ``render_iso``, ``parse_duration_ms``.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta

__all__ = ["duration_text", "parse_duration_ms", "parse_iso", "render_iso"]

_UNIX = datetime(1970, 1, 1, tzinfo=UTC)
_DURATION = re.compile(r"([0-9]+)(ms|s|m|h|d)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_UNITS_DESC = sorted(_UNIT_MS.items(), key=lambda item: -item[1])


def render_iso(epoch_unix_ms: int, now_ms: int = 0) -> str:
    """``2026-01-01T00:00:00.000Z``: always UTC, always milliseconds.

    The date is rendered once per day (``_date``); the time of day by integer arithmetic:
    the text ``strftime("%Y-%m-%dT%H:%M:%S.")`` and the milliseconds give, at a fraction of
    its cost (a run renders a timestamp for every webhook and every refund)."""
    day, ms = divmod(epoch_unix_ms + now_ms, 86_400_000)
    seconds, ms = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{_date(day)}{hours:02d}:{minutes:02d}:{seconds:02d}.{ms:03d}Z"


#: the days ``datetime`` can hold: 0001-01-01 and 9999-12-31, counted from the unix epoch
_DAY_MIN, _DAY_MAX = -719_162, 2_932_896


@functools.lru_cache(maxsize=1024)
def _date(day: int) -> str:
    """``2026-01-01T`` for the ``day``-th day since the unix epoch; any day at all.

    A world's clock can pass 9999-12-31 (an epoch in 9999 and an advance, a scenario's
    ``advance: 3000000d``): ``datetime`` cannot hold that day and raised OverflowError,
    and every later request of a served world answered 500, its journal unable to replay.
    Outside ``datetime``'s years the date is ISO 8601's expanded form (a sign and five or
    more digits of the proleptic Gregorian year, year 0 being 1 BC), from the days alone."""
    if _DAY_MIN <= day <= _DAY_MAX:
        return (_UNIX + timedelta(days=day)).strftime("%Y-%m-%dT")
    year, month, mday = _civil(day)
    return f"{'+' if year >= 0 else '-'}{abs(year):05d}-{month:02d}-{mday:02d}T"


def _civil(day: int) -> tuple[int, int, int]:
    """The proleptic Gregorian (year, month, day) of the ``day``-th day since 1970-01-01
    (H. Hinnant's ``civil_from_days``: 400-year eras of 146,097 days, years from March)."""
    era, of_era = divmod(day + 719_468, 146_097)
    year_of_era = (of_era - of_era // 1460 + of_era // 36_524 - of_era // 146_096) // 365
    of_year = of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted = (5 * of_year + 2) // 153  # months from March
    mday = of_year - (153 * shifted + 2) // 5 + 1
    month = shifted + 3 if shifted < 10 else shifted - 9
    return year_of_era + era * 400 + (month <= 2), month, mday


def parse_iso(text: str) -> int:
    """An ISO 8601 timestamp with a zone → unix milliseconds; ``ValueError`` if malformed."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no time zone")
    delta = moment - _UNIX
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def parse_duration_ms(text: str) -> int:
    """``90s``, ``15m``, ``72h``, ``250ms``, ``2d`` → milliseconds; ``ValueError`` otherwise."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"duration {text!r} must be a whole number with ms, s, m, h or d")
    return int(match.group(1)) * _UNIT_MS[match.group(2)]


def duration_text(ms: int) -> str:
    """``138960000`` → ``1d 14h 36m``; ``1500`` → ``1s 500ms``; ``0`` → ``0ms``: exact."""
    if ms == 0:
        return "0ms"
    left, parts = abs(ms), []
    for unit, size in _UNITS_DESC:
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return ("-" if ms < 0 else "") + " ".join(parts)
