"""The RTGS operating calendar (beyond the spec; issue 29 §4): hours, cut-off, close, zone,
closed weekdays, holidays, and the strict reading of its wire form.

``clearing_sim.domain.calendar``: on an operating day an earmark is taken in [opens, cutOff)
and a settlement in [opens, closes); the next opening is the first opening at or after an
instant, local wall-clock time in the calendar's zone, across DST changes.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.calendar import (
    WEEKDAYS,
    OperatingCalendar,
    Operation,
    calendar_wire,
    parse_calendar,
)
from clearing_sim.domain.errors import CATALOGUE, InvalidRequest
from clearing_sim.domain.timefmt import parse_iso, render_iso

EARMARK, SETTLE = Operation.EARMARK, Operation.SETTLE
CHAPS: dict[str, Any] = {"timeZone": "Europe/London", "opens": "06:00", "cutOff": "17:40",
                         "closes": "18:00", "closedWeekdays": ["saturday", "sunday"]}


def chaps(**changes: Any) -> OperatingCalendar:
    return parse_calendar({**CHAPS, **changes})


def ms(text: str) -> int:
    return parse_iso(text)


def test_an_earmark_is_taken_until_the_cut_off_and_a_settlement_until_the_close() -> None:
    c = chaps()  # 2026-11-27 is a Friday, GMT (UTC+0)
    assert not c.is_open(ms("2026-11-27T05:59:59.999Z"), SETTLE)
    assert c.is_open(ms("2026-11-27T06:00:00.000Z"), EARMARK)
    assert c.is_open(ms("2026-11-27T17:39:59.999Z"), EARMARK)
    assert not c.is_open(ms("2026-11-27T17:40:00.000Z"), EARMARK)
    assert c.is_open(ms("2026-11-27T17:40:00.000Z"), SETTLE)
    assert c.is_open(ms("2026-11-27T17:59:59.999Z"), SETTLE)
    assert not c.is_open(ms("2026-11-27T18:00:00.000Z"), SETTLE)


def test_after_friday_s_cut_off_the_next_opening_is_monday() -> None:
    c = chaps()
    assert render_iso(c.next_opening_ms(ms("2026-11-27T17:50:00.000Z"))) \
        == "2026-11-30T06:00:00.000Z"
    assert not c.is_open(ms("2026-11-28T12:00:00.000Z"), SETTLE)  # Saturday
    # before Monday's opening, the opening is that same morning
    assert render_iso(c.next_opening_ms(ms("2026-11-30T05:00:00.000Z"))) \
        == "2026-11-30T06:00:00.000Z"


def test_march_dst_sunday_monday_opens_at_06_00_bst_which_is_05_00_utc() -> None:
    # the clocks go forward on Sunday 2026-03-29: Friday is GMT, Monday is BST
    c = chaps()
    assert render_iso(c.next_opening_ms(ms("2026-03-27T17:50:00.000Z"))) \
        == "2026-03-30T05:00:00.000Z"
    assert c.is_open(ms("2026-03-30T16:59:59.999Z"), SETTLE)  # 17:59:59.999 BST
    assert not c.is_open(ms("2026-03-30T17:00:00.000Z"), SETTLE)


def test_october_dst_sunday_monday_opens_at_06_00_gmt() -> None:
    # the clocks go back on Sunday 2026-10-25: Friday is BST (closes 17:00Z), Monday GMT
    c = chaps()
    assert not c.is_open(ms("2026-10-23T17:00:00.000Z"), SETTLE)
    assert render_iso(c.next_opening_ms(ms("2026-10-23T16:50:00.000Z"))) \
        == "2026-10-26T06:00:00.000Z"


def test_an_opening_in_the_spring_gap_is_read_on_the_offset_before_it() -> None:
    # open every day at 01:30: on 2026-03-29 London skips 01:00-02:00 local
    c = chaps(opens="01:30", closedWeekdays=[])
    assert render_iso(c.next_opening_ms(ms("2026-03-29T00:00:00.000Z"))) \
        == "2026-03-29T01:30:00.000Z"  # 01:30 GMT, 02:30 BST on the wall
    assert render_iso(c.next_opening_ms(ms("2026-03-29T02:00:00.000Z"))) \
        == "2026-03-30T00:30:00.000Z"  # Monday 01:30 BST


def test_an_opening_in_the_autumn_fold_is_its_first_occurrence() -> None:
    c = chaps(opens="01:30", closedWeekdays=[])
    assert render_iso(c.next_opening_ms(ms("2026-10-25T00:00:00.000Z"))) \
        == "2026-10-25T00:30:00.000Z"  # 01:30 BST, the first of the two


def test_holidays_are_skipped_like_closed_weekdays() -> None:
    # Christmas Day (Friday 2026-12-25) and the substitute Boxing Day (Monday 2026-12-28)
    c = chaps(holidays=["2026-12-25", "2026-12-28"])
    assert not c.is_open(ms("2026-12-25T12:00:00.000Z"), SETTLE)
    assert render_iso(c.next_opening_ms(ms("2026-12-24T17:45:00.000Z"))) \
        == "2026-12-29T06:00:00.000Z"
    assert render_iso(chaps().next_opening_ms(ms("2026-12-24T17:45:00.000Z"))) \
        == "2026-12-25T06:00:00.000Z"  # the same instant without the holidays


def test_a_thousand_consecutive_holidays_are_skipped_at_once() -> None:
    days = [(date(2026, 1, 1) + timedelta(days=i)).isoformat() for i in range(1000)]
    c = chaps(closedWeekdays=[], holidays=days)
    assert render_iso(c.next_opening_ms(ms("2026-01-01T00:00:00.000Z"))) \
        == "2028-09-27T05:00:00.000Z"  # the 1001st day, 06:00 BST


def test_the_wire_form_reads_back_to_the_same_calendar() -> None:
    c = chaps(holidays=["2026-12-28", "2026-12-25"], closedWeekdays=["Sunday", "saturday"])
    wire = calendar_wire(c)
    assert wire == {**CHAPS, "holidays": ["2026-12-25", "2026-12-28"]}
    assert parse_calendar(wire) == c


@pytest.mark.parametrize(("changes", "param", "code"), [
    ({"timeZone": "Europe/Londres"}, "timeZone", "invalid_value"),
    ({"timeZone": "../../etc/passwd"}, "timeZone", "invalid_value"),
    ({"timeZone": "Europe"}, "timeZone", "invalid_value"),
    ({"timeZone": 0}, "timeZone", "invalid_value"),
    ({"opens": "6:00"}, "opens", "invalid_value"),
    ({"closes": "24:00"}, "closes", "invalid_value"),
    ({"cutOff": "17:40:30"}, "cutOff", "invalid_value"),
    ({"cutOff": "18:01"}, "cutOff", "invalid_value"),  # after the close
    ({"cutOff": "06:00"}, "cutOff", "invalid_value"),  # not after the opening
    ({"closedWeekdays": ["caturday"]}, "closedWeekdays[0]", "invalid_value"),
    ({"closedWeekdays": ["sunday", "sunday"]}, "closedWeekdays[1]", "invalid_value"),
    ({"closedWeekdays": list(WEEKDAYS)}, "closedWeekdays", "invalid_value"),
    ({"closedWeekdays": "sunday"}, "closedWeekdays", "invalid_value"),
    ({"holidays": ["2026-02-30"]}, "holidays[0]", "invalid_value"),
    ({"holidays": ["25/12/2026"]}, "holidays[0]", "invalid_value"),
    ({"holidays": ["2026-12-25", "2026-12-25"]}, "holidays[1]", "invalid_value"),
    ({"contingencyCloses": "20:00"}, "contingencyCloses", "unknown_field"),
])
def test_a_bad_calendar_is_refused_naming_its_field(changes: dict[str, Any], param: str,
                                                    code: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_calendar({**CHAPS, **changes})
    assert (refused.value.problems[0].param, refused.value.problems[0].code) == (param, code)


def test_a_missing_field_is_required() -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_calendar({"timeZone": "UTC"})
    assert [(p.param, p.code) for p in refused.value.problems] \
        == [("opens", "required"), ("cutOff", "required"), ("closes", "required")]


_values = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                    st.lists(st.text(max_size=10), max_size=3), st.sampled_from(
                        ["06:00", "17:40", "18:00", "Europe/London", "UTC", "monday",
                         "2026-12-25", "America/New_York"]))
_bodies = st.dictionaries(st.sampled_from([*CHAPS, "holidays", "x"]), _values, max_size=7)


@settings(max_examples=100, deadline=None)
@given(body=st.one_of(_bodies, st.builds(lambda b: {**CHAPS, **b}, _bodies)),
       at=st.integers(0, 4_102_444_800_000))
def test_any_body_is_a_calendar_or_a_refusal_and_a_calendar_always_reopens(
        body: dict[str, Any], at: int) -> None:
    try:
        calendar = parse_calendar(body)
    except InvalidRequest as refused:
        assert refused.problems and all(p.code in CATALOGUE for p in refused.problems)
        return
    opening = calendar.next_opening_ms(at)
    assert opening >= at and calendar.is_open(opening, EARMARK)
