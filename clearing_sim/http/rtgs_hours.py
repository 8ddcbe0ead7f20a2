"""Operator routes for the RTGS's business hours (beyond the spec; issue 29 §4).

Public names: ``ROUTES``, ``calendar_state``.

- ``GET /sim/v1/rtgs/calendar``: ``{calendar, rtgsConnection, nextOpeningAt}``: the
  calendar's wire form (``domain.calendar``) or null (always open), the connection state
  ``GET /api/v1/system/status`` reports now (``closed`` outside the settlement hours), and
  the next opening at or after now (null without a calendar, or when none comes before
  9999-12-31).
- ``PUT /sim/v1/rtgs/calendar`` with ``{calendar}``: a calendar gives the RTGS those hours
  from now on, null makes it always open again (logged as ``rtgs.calendar``); operations
  already waiting for an opening keep theirs. A bad calendar is 400 naming the field
  (``calendar.cutOff``) and changes nothing.
"""

from __future__ import annotations

from typing import Any

from clearing_sim.domain.calendar import calendar_wire, parse_calendar
from clearing_sim.domain.errors import InvalidRequest, Problem
from clearing_sim.http.surface import OperatorContext, OperatorRoute
from clearing_sim.service.context import Reply
from clearing_sim.sim.world import World

__all__ = ["ROUTES", "calendar_state"]


def calendar_state(world: World) -> dict[str, Any]:
    calendar = world.rtgs.calendar
    opening = None if calendar is None \
        else calendar.next_opening_ms(world.epoch_ms + world.now_ms)
    return {"calendar": None if calendar is None else calendar_wire(calendar),
            "rtgsConnection": world.rtgs.connection_state(),
            "nextOpeningAt": None if opening is None else world.iso(opening - world.epoch_ms)}


async def get_calendar(ctx: OperatorContext) -> Reply:
    return Reply(200, calendar_state(ctx.world))


async def put_calendar(ctx: OperatorContext) -> Reply:
    f = ctx.fields()
    if "calendar" not in f.obj:
        f.problem("calendar", "required", "calendar is required: an RTGS calendar, or null "
                                          "for an RTGS that is always open")
    f.done("calendar")
    raw = f.obj["calendar"]
    try:
        calendar = None if raw is None else parse_calendar(raw)
    except InvalidRequest as error:
        raise InvalidRequest(*(Problem("calendar" if p.param is None else f"calendar.{p.param}",
                                       p.code, p.message) for p in error.problems)) from None
    ctx.world.set_rtgs_calendar(calendar)
    return Reply(200, calendar_state(ctx.world))


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("GET", "/sim/v1/rtgs/calendar", get_calendar,
                  "the RTGS's business hours (null: always open) and whether it is open now"),
    OperatorRoute("PUT", "/sim/v1/rtgs/calendar", put_calendar,
                  "give the RTGS business hours, or null: always open"),
)
