"""The RTGS adapter keeps business hours when given a calendar (beyond the spec; issue 29 §4).

``clearing_sim.sim.rtgs``: an earmark answered from the cut-off, or a settlement answered from
the close, waits for the next opening and applies at exactly that instant; the log shows the
wait (``rtgs.closed_wait`` with ``reopensAt``); without a calendar nothing changes.
"""

from __future__ import annotations

from decimal import Decimal

from clearing_sim.domain.calendar import OperatingCalendar, parse_calendar
from clearing_sim.domain.lifecycle import LifecycleStatus
from clearing_sim.domain.timefmt import parse_iso
from clearing_sim.sim.examples import example_world, redeem
from clearing_sim.sim.world import World, WorldConfig
from tests.sim.simkit import call

D = Decimal
CHAPS = {"timeZone": "Europe/London", "opens": "06:00", "cutOff": "17:40", "closes": "18:00",
         "closedWeekdays": ["saturday", "sunday"]}
FRIDAY_17_50 = "2026-11-27T17:50:00.000Z"
MONDAY_06_00 = "2026-11-30T06:00:00.000Z"


def _world(epoch: str, calendar: OperatingCalendar | None) -> World:
    world = World(WorldConfig(epoch=epoch, rtgs_calendar=calendar))
    world.rtgs.open_account("payer", D("100.00"))
    world.rtgs.open_account("creditor", D("0.00"))
    return world


def test_an_earmark_after_the_cut_off_waits_for_monday_s_opening() -> None:
    world = _world(FRIDAY_17_50, parse_calendar(CHAPS))
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    [wait] = world.log.select("rtgs.closed_wait")
    assert wait.at_ms > 0  # at the adapter's answer, which said "closed"
    assert (wait["operation"], wait["reopensAt"]) == ("earmark", MONDAY_06_00)
    [earmark] = world.log.select("rtgs.earmark")
    assert world.iso(earmark.at_ms) == MONDAY_06_00 == world.iso(int(wait["reopensAtMs"]))


def test_a_settlement_between_cut_off_and_close_is_taken_but_one_after_the_close_waits(
        ) -> None:
    world = _world("2026-11-27T17:39:50.000Z", parse_calendar(CHAPS))
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    call(world, world.rtgs.earmark("tx-2", "payer", D("40.00")))
    world.run_until(parse_iso("2026-11-27T17:45:00.000Z") - world.epoch_ms)
    call(world, world.rtgs.settle("tx-1", "creditor", D("0.00"), "operator"))
    assert not world.log.select("rtgs.closed_wait")  # settlements run until 18:00
    world.run_until(parse_iso("2026-11-27T18:00:00.000Z") - world.epoch_ms)
    call(world, world.rtgs.settle("tx-2", "creditor", D("0.00"), "operator"))
    [wait] = world.log.select("rtgs.closed_wait")
    assert (wait["transactionId"], wait["operation"], wait["reopensAt"]) \
        == ("tx-2", "settle", MONDAY_06_00)
    assert world.iso(world.log.select("rtgs.settle")[-1].at_ms) == MONDAY_06_00
    assert world.rtgs.balances["creditor"] == D("80.00")


def test_without_a_calendar_the_same_request_is_answered_at_once() -> None:
    world = _world(FRIDAY_17_50, None)
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    assert not world.log.select("rtgs.closed_wait")
    assert world.log.select("rtgs.earmark")[0].at_ms < 5_000


def test_a_friday_evening_redeem_settles_on_monday_and_stays_in_flight_meanwhile() -> None:
    config = WorldConfig(seed=1, epoch=FRIDAY_17_50, rtgs_calendar=parse_calendar(CHAPS))
    cast = example_world(config=config)
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(2)))
    world.run_until(parse_iso(MONDAY_06_00) - world.epoch_ms - 1)
    held = world.transactions[tx.id]
    assert (held.lifecycle_status, held.parked) == (LifecycleStatus.IN_FLIGHT, False)
    assert world.rtgs.connection_state() == "closed"
    world.run_all()
    assert world.transactions[tx.id].lifecycle_status is LifecycleStatus.SETTLED
    [earmark] = world.log.select("rtgs.earmark", transactionId=tx.id)
    assert world.iso(earmark.at_ms) == MONDAY_06_00
    assert world.rtgs.connection_state() == "connected"
    assert not world.log.select("transaction.state", transactionId=tx.id,
                                event="transaction.parked")


def test_a_cancel_during_the_closed_wait_withdraws_the_earmark() -> None:
    config = WorldConfig(seed=1, epoch=FRIDAY_17_50, rtgs_calendar=parse_calendar(CHAPS))
    cast = example_world(config=config)
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(1)))
    world.run_until(3_600_000)  # Friday 18:50: waiting for Monday
    assert world.log.select("rtgs.closed_wait", transactionId=tx.id)
    total = world.rtgs.total()
    world.cancel(tx.id)
    world.run_all()
    assert world.transactions[tx.id].lifecycle_status is LifecycleStatus.CANCELLED
    assert not world.log.select("rtgs.earmark", transactionId=tx.id)
    assert world.rtgs.total() == total and not world.rtgs.earmarks


def test_a_calendar_set_later_is_logged_and_obeyed_by_later_requests() -> None:
    world = _world(FRIDAY_17_50, None)
    world.set_rtgs_calendar(parse_calendar(CHAPS))
    [record] = world.log.select("rtgs.calendar")
    assert record["calendar"] == {**CHAPS, "holidays": []}
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    assert world.log.select("rtgs.closed_wait")
    world.set_rtgs_calendar(None)
    assert world.log.select("rtgs.calendar")[-1]["calendar"] is None


def test_across_the_march_dst_sunday_the_earmark_is_at_06_00_bst() -> None:
    # the clocks go forward on Sunday 2026-03-29: Monday 06:00 London is 05:00 UTC
    world = _world("2026-03-27T17:50:00.000Z", parse_calendar(CHAPS))
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    [earmark] = world.log.select("rtgs.earmark")
    assert world.iso(earmark.at_ms) == "2026-03-30T05:00:00.000Z"
    assert earmark.at_ms == (2 * 24 + 11) * 3_600_000 + 10 * 60_000  # 59 h 10 min, not 60 h


def test_across_the_october_dst_sunday_the_earmark_is_at_06_00_gmt() -> None:
    # Friday 2026-10-23 is BST: 17:50 London is 16:50 UTC; Monday 06:00 London is GMT
    world = _world("2026-10-23T16:50:00.000Z", parse_calendar(CHAPS))
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    [earmark] = world.log.select("rtgs.earmark")
    assert world.iso(earmark.at_ms) == "2026-10-26T06:00:00.000Z"
    assert earmark.at_ms == (2 * 24 + 13) * 3_600_000 + 10 * 60_000  # 61 h 10 min


def test_a_listed_holiday_keeps_the_rtgs_closed_until_the_day_after() -> None:
    # Christmas Eve 17:50 (a Thursday); Christmas Day and the substitute Boxing Day listed
    calendar = parse_calendar({**CHAPS, "holidays": ["2026-12-25", "2026-12-28"]})
    world = _world("2026-12-24T17:50:00.000Z", calendar)
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    [wait] = world.log.select("rtgs.closed_wait")
    assert wait["reopensAt"] == "2026-12-29T06:00:00.000Z"
    world = _world("2026-12-24T17:50:00.000Z", parse_calendar(CHAPS))  # no holidays listed
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    assert world.log.select("rtgs.closed_wait")[0]["reopensAt"] == "2026-12-25T06:00:00.000Z"


def test_a_calendar_with_no_opening_left_before_the_year_10000_waits_for_ever() -> None:
    world = _world("9999-12-31T20:00:00.000Z", parse_calendar(CHAPS))  # a Friday night
    process = world.env.process(world.rtgs.earmark("tx-1", "payer", D("40.00")))
    world.run_all()  # nothing left to run: the earmark never applies
    assert process.is_alive
    [wait] = world.log.select("rtgs.closed_wait")
    assert (wait["reopensAt"], wait["reopensAtMs"]) == (None, None)
    assert not world.log.select("rtgs.earmark") and world.rtgs.balances["payer"] == D("100.00")
