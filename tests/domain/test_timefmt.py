"""Timestamps and durations (spec: timestamps are ISO 8601 UTC; DESIGN: rendered from the
world's epoch + now_ms)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain import timefmt
from clearing_sim.domain.timefmt import parse_duration_ms, parse_iso, render_iso

EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z
ISO_MS_Z = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
YEAR_9999_MS = 253_402_300_799_999


@pytest.mark.parametrize(("now_ms", "expected"), [
    (0, "2026-01-01T00:00:00.000Z"),
    (1, "2026-01-01T00:00:00.001Z"),
    (61_234, "2026-01-01T00:01:01.234Z"),
    (86_400_000 * 31 + 999, "2026-02-01T00:00:00.999Z"),
])
def test_render_iso_always_has_milliseconds_and_z(now_ms: int, expected: str) -> None:
    assert render_iso(EPOCH_MS, now_ms) == expected


def test_render_iso_of_the_unix_epoch() -> None:
    assert render_iso(0) == "1970-01-01T00:00:00.000Z"


@settings(max_examples=100)
@given(st.integers(0, YEAR_9999_MS))
def test_parse_iso_round_trips_render_iso(unix_ms: int) -> None:
    text = render_iso(unix_ms)
    assert ISO_MS_Z.fullmatch(text)
    assert parse_iso(text) == unix_ms


@settings(max_examples=50)
@given(st.integers(0, 10**10), st.integers(0, 10**9))
def test_epoch_plus_now_is_additive(epoch_ms: int, now_ms: int) -> None:
    assert render_iso(epoch_ms, now_ms) == render_iso(epoch_ms + now_ms)


@pytest.mark.parametrize(("text", "unix_ms"), [
    ("2026-01-01T00:00:00.000Z", EPOCH_MS),
    ("2026-01-01T00:00:00Z", EPOCH_MS),
    ("2026-01-01T00:00:00+00:00", EPOCH_MS),
    ("2026-01-01T01:00:00+01:00", EPOCH_MS),
    ("2026-01-01T00:00:00.5Z", EPOCH_MS + 500),
    ("2025-12-31T23:59:59.999Z", EPOCH_MS - 1),
])
def test_parse_iso(text: str, unix_ms: int) -> None:
    assert parse_iso(text) == unix_ms


@pytest.mark.parametrize("text", ["2026-01-01T00:00:00", "2026-01-01", "yesterday", "",
                                  "2026-13-01T00:00:00Z"])
def test_parse_iso_refuses_malformed_or_zoneless(text: str) -> None:
    with pytest.raises(ValueError):
        parse_iso(text)


@pytest.mark.parametrize(("text", "ms"), [
    ("90s", 90_000), ("15m", 900_000), ("72h", 259_200_000), ("250ms", 250),
    ("2d", 172_800_000), ("0s", 0), ("1ms", 1), (" 5s ", 5_000),
])
def test_parse_duration_ms(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", [
    "", "90", "s", "ms", "1.5s", "-1s", "+1s", "1w", "1S", "1H", "90 s", "1h30m", "5sec",
    "1e3ms",
])
def test_parse_duration_ms_refusals(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration_ms(text)


@given(st.integers(-62_135_596_800_000, 253_402_300_799_999))  # 0001-01-01 .. 9999-12-31
def test_render_iso_is_the_strftime_text(unix_ms: int) -> None:
    """The fast rendering gives exactly what rendering through ``datetime`` gives."""
    from datetime import UTC, datetime, timedelta

    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=unix_ms)
    assert render_iso(unix_ms) == \
        moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_DATETIME_DAYS = st.integers(-719_162, 2_932_896)  # 0001-01-01 .. 9999-12-31


@given(_DATETIME_DAYS)
def test_the_civil_date_of_a_day_is_datetimes(day: int) -> None:
    moment = date(1970, 1, 1) + timedelta(days=day)
    assert timefmt._civil(day) == (moment.year, moment.month, moment.day)


@given(st.integers(-(10**18), 10**18), st.integers(-(10**18), 10**18))
def test_render_iso_renders_every_instant(epoch_ms: int, now_ms: int) -> None:
    """A world's clock past 9999-12-31 made ``render_iso`` raise OverflowError: a served
    world answered 500 to every later request and its journal could not replay. Every
    instant renders; the years datetime holds exactly as before, the others in ISO 8601's
    expanded form."""
    text = render_iso(epoch_ms, now_ms)
    day = (epoch_ms + now_ms) // 86_400_000
    if -719_162 <= day <= 2_932_896:
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=epoch_ms + now_ms)
        assert text == moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    else:
        assert text[0] in "+-" and text.endswith("Z") and len(text.split("-", 2)[1]) >= 2


def test_the_first_instant_past_9999_is_year_ten_thousand() -> None:
    last = parse_iso("9999-12-31T23:59:59.999Z")
    assert render_iso(last) == "9999-12-31T23:59:59.999Z"
    assert render_iso(last, 1) == "+10000-01-01T00:00:00.000Z"
