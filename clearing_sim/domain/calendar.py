"""An RTGS operating calendar: the hours in which the scheme earmarks and settles.

Public names: ``FIELDS``, ``HOLIDAYS_MAX``, ``OperatingCalendar``, ``Operation``,
``WEEKDAYS``, ``calendar_wire``, ``parse_calendar``.

Beyond the spec (issue 29 §4; docs/semantics.md "RTGS business hours"): the sandbox's RTGS is
always open unless a calendar is given. A calendar has an opening time, a customer cut-off
and a close, all local wall-clock times of one IANA time zone (``zoneinfo``, read from the
``tzdata`` package so every machine uses the same rules), closed weekdays and holiday dates.
On an operating day (not a closed weekday, not a holiday) a new earmark is taken in
[opens, cutOff) and a settlement in [opens, closes); anything else waits for the next
opening (``next_opening_ms``). A local time the spring-forward gap skips is read on the
offset before the gap (an opening at 01:30 on the last Sunday of March in London is 01:30
GMT = 02:30 BST); one the autumn fold repeats is its first occurrence (``fold=0``).

The calendar's wire form (world files, workload files, ``/sim/v1/rtgs/calendar``)::

    {timeZone: Europe/London, opens: "06:00", cutOff: "17:40", closes: "18:00",
     closedWeekdays: [saturday, sunday], holidays: ["2026-12-25", "2026-12-28"]}

Everything here is pure: instants are unix milliseconds, nothing reads a clock.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from attrs import frozen

from clearing_sim.domain.errors import InvalidRequest, Problem

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

__all__ = ["FIELDS", "HOLIDAYS_MAX", "WEEKDAYS", "OperatingCalendar", "Operation",
           "calendar_wire", "parse_calendar"]

#: ``date.weekday()`` order: monday is 0
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
HOLIDAYS_MAX = 1_000
FIELDS = ("timeZone", "opens", "cutOff", "closes", "closedWeekdays", "holidays")
_TIME = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: an IANA key: ``Area/Location`` words, no dots or slashes at either end (no path tricks)
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]{0,29}(/[A-Za-z0-9][A-Za-z0-9_+-]{0,29}){0,2}")


class Operation(StrEnum):
    EARMARK = "earmark"  # a new earmark: taken until the customer cut-off
    SETTLE = "settle"  # a settlement: until the close


@functools.lru_cache(maxsize=64)
def _load_zone(key: str) -> ZoneInfo | None:
    """The zone from the ``tzdata`` package (not the host's files: the same rules on every
    machine, a pinned dependency); None when the key names no zone. Remembered per key (the
    rules are immutable data), so a calendar holds only its key and pickles as plain values
    (a ``ZoneInfo.from_file`` does not pickle), which a sweep's workers need."""
    if not _ZONE.fullmatch(key):
        return None
    from importlib import resources  # a world with a calendar pays for these, no other start
    from zoneinfo import ZoneInfo
    try:
        with resources.files("tzdata.zoneinfo").joinpath(*key.split("/")).open("rb") as f:
            return ZoneInfo.from_file(f, key=key)
    except (OSError, ValueError):  # no such file, a folder, not a TZif file
        return None


@frozen
class OperatingCalendar:
    time_zone: str
    opens: time
    cut_off: time
    closes: time
    closed_weekdays: tuple[int, ...] = ()  # 0 = monday
    holidays: tuple[date, ...] = ()  # sorted (``operating`` bisects them)

    @property
    def _zone(self) -> ZoneInfo:
        zone = _load_zone(self.time_zone)
        assert zone is not None, f"no time zone {self.time_zone!r}: parse_calendar checks it"
        return zone

    def operating(self, day: date) -> bool:
        if day.weekday() in self.closed_weekdays:
            return False
        i = bisect.bisect_left(self.holidays, day)
        return i == len(self.holidays) or self.holidays[i] != day

    def _at_ms(self, day: date, wall: time) -> int:
        """The instant of a local wall-clock time on a local day (``fold=0``: see above)."""
        local = datetime.combine(day, wall, tzinfo=self._zone)
        return int(local.astimezone(UTC).timestamp()) * 1000

    def _day_of(self, unix_ms: int) -> date:
        seconds = unix_ms // 1000
        return datetime.fromtimestamp(seconds, UTC).astimezone(self._zone).date()

    def is_open(self, unix_ms: int, operation: Operation) -> bool:
        """Whether the scheme takes ``operation`` at this instant."""
        day = self._day_of(unix_ms)
        if not self.operating(day):
            return False
        end = self.cut_off if operation is Operation.EARMARK else self.closes
        return self._at_ms(day, self.opens) <= unix_ms < self._at_ms(day, end)

    def next_opening_ms(self, unix_ms: int) -> int | None:
        """The first opening at or after this instant; None when none comes before the last
        day a date can hold (9999-12-31): the scheme never reopens."""
        day = self._day_of(unix_ms)
        # each week has an operating day and each holiday removes at most one: a bound
        for _ in range(7 * (len(self.holidays) + 2)):
            if self.operating(day):
                opens_ms = self._at_ms(day, self.opens)
                if opens_ms >= unix_ms:
                    return opens_ms
            if day == date.max:
                return None
            day += timedelta(days=1)
        raise AssertionError("an operating day exists: parse_calendar checks it")


def calendar_wire(calendar: OperatingCalendar) -> dict[str, Any]:
    return {"timeZone": calendar.time_zone, "opens": calendar.opens.strftime("%H:%M"),
            "cutOff": calendar.cut_off.strftime("%H:%M"),
            "closes": calendar.closes.strftime("%H:%M"),
            "closedWeekdays": [WEEKDAYS[d] for d in calendar.closed_weekdays],
            "holidays": [d.isoformat() for d in calendar.holidays]}


class _Reader:
    def __init__(self, body: Mapping[Any, Any]) -> None:
        self.body = body
        self.problems: list[Problem] = []

    def bad(self, param: str, code: str, message: str) -> None:
        self.problems.append(Problem(param, code, message))

    def time(self, name: str) -> time | None:
        value = self.body.get(name)
        if value is None:
            self.bad(name, "required", f"{name} is required: a local time HH:MM")
            return None
        match = _TIME.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            self.bad(name, "invalid_value", f"{name} must be a local time HH:MM from 00:00 to "
                                            f"23:59, got {str(value)[:40]!r}")
            return None
        return time(int(match[1]), int(match[2]))

    def zone(self) -> str | None:
        value = self.body.get("timeZone")
        if value is None:
            self.bad("timeZone", "required", "timeZone is required: an IANA zone such as "
                                             "Europe/London")
            return None
        if not isinstance(value, str) or _load_zone(value) is None:
            self.bad("timeZone", "invalid_value", f"timeZone must be an IANA time zone such as "
                                                  f"Europe/London, got {str(value)[:40]!r}")
            return None
        return value

    def listing(self, name: str) -> list[tuple[int, Any]]:
        value = self.body.get(name)
        if value is None:  # absent or null: none
            return []
        if not isinstance(value, list):
            self.bad(name, "invalid_value", f"{name} must be a list")
            return []
        return list(enumerate(value))

    def weekdays(self) -> tuple[int, ...]:
        days: list[int] = []
        for i, value in self.listing("closedWeekdays"):
            where = f"closedWeekdays[{i}]"
            if not isinstance(value, str) or value.lower() not in WEEKDAYS:
                self.bad(where, "invalid_value", f"{where} must be a weekday name "
                                                 f"({', '.join(WEEKDAYS)})")
            elif WEEKDAYS.index(value.lower()) in days:
                self.bad(where, "invalid_value", f"{where}: {value} is listed twice")
            else:
                days.append(WEEKDAYS.index(value.lower()))
        if len(days) == len(WEEKDAYS):
            self.bad("closedWeekdays", "invalid_value",
                     "every weekday is closed: the scheme would never open")
        return tuple(sorted(days))

    def holidays(self) -> tuple[date, ...]:
        days: list[date] = []
        listed = self.listing("holidays")
        if len(listed) > HOLIDAYS_MAX:
            self.bad("holidays", "invalid_value", f"at most {HOLIDAYS_MAX} holidays")
            return ()
        for i, value in listed:
            where = f"holidays[{i}]"
            day = None
            if isinstance(value, date) and not isinstance(value, datetime):
                day = value  # YAML reads an unquoted 2026-12-25 as a date
            elif isinstance(value, str) and _DATE.fullmatch(value):
                try:
                    day = date.fromisoformat(value)
                except ValueError:
                    day = None
            if day is None:
                self.bad(where, "invalid_value", f"{where} must be a date YYYY-MM-DD, got "
                                                 f"{str(value)[:40]!r}")
            elif day in days:
                self.bad(where, "invalid_value", f"{where}: {day} is listed twice")
            else:
                days.append(day)
        return tuple(sorted(days))


def parse_calendar(body: object) -> OperatingCalendar:
    """Validate a calendar (wire field names); raise ``InvalidRequest`` naming every problem:
    an unknown field, a zone that is not an IANA zone, a time that is not HH:MM, the times
    out of order (opens < cutOff <= closes), a weekday or holiday that is not one, every
    weekday closed."""
    if not isinstance(body, Mapping):
        raise InvalidRequest.one(None, "invalid_body", "the RTGS calendar must be an object")
    r = _Reader(body)
    for name in body:
        if name not in FIELDS:
            r.bad(str(name), "unknown_field", f"{str(name)[:40]} is not an RTGS calendar field "
                                              f"({', '.join(FIELDS)})")
    zone = r.zone()
    opens, cut_off, closes = r.time("opens"), r.time("cutOff"), r.time("closes")
    if opens is not None and cut_off is not None and cut_off <= opens:
        r.bad("cutOff", "invalid_value", f"cutOff {cut_off:%H:%M} must come after opens "
                                         f"{opens:%H:%M}")
    elif cut_off is not None and closes is not None and closes < cut_off:
        r.bad("cutOff", "invalid_value", f"cutOff {cut_off:%H:%M} must not come after "
                                         f"closes {closes:%H:%M}")
    weekdays, holidays = r.weekdays(), r.holidays()
    if r.problems:
        raise InvalidRequest(*r.problems)
    assert zone is not None and opens is not None and cut_off is not None and closes is not None
    return OperatingCalendar(zone, opens, cut_off, closes, weekdays, holidays)
