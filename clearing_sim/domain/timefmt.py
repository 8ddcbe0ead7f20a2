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


@functools.lru_cache(maxsize=1024)
def _date(day: int) -> str:
    """``2026-01-01T`` for the ``day``-th day since the unix epoch."""
    return (_UNIX + timedelta(days=day)).strftime("%Y-%m-%dT")


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
