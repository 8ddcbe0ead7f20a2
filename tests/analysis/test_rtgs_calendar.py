"""An RTGS calendar in workload and sweep files (beyond the spec; issue 29 §4,
docs/workloads.md): read with the world file's reader, problems at their line, the driver's
world keeps the hours, and a sweep case can set it."""

from __future__ import annotations

from pathlib import Path

import pytest

from clearing_sim.analysis.driver import WorkloadDriver
from clearing_sim.analysis.loader import parse_workload
from clearing_sim.analysis.sweepfile import load_sweep
from clearing_sim.scenario.errors import ScenarioInvalid

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "notebooks" / "inputs"
WORKLOAD = (INPUTS / "rtgs_hours.yaml").read_text().replace("horizon: 72h", "horizon: 24h")
CALENDAR = ('  rtgs_calendar: {time_zone: Europe/London, opens: "06:00", cut_off: "17:40",\n'
            '                  closes: "18:00", closed_weekdays: [saturday, sunday]}\n')
WITH_CALENDAR = WORKLOAD.replace('world: {epoch: "2026-11-27T00:00:00.000Z"}\n',
                                 'world:\n  epoch: "2026-11-27T00:00:00.000Z"\n' + CALENDAR)


def test_a_workload_s_calendar_holds_the_friday_evening_redeems_until_monday() -> None:
    assert WITH_CALENDAR != WORKLOAD
    workload = parse_workload(WITH_CALENDAR, "w.yaml")
    assert workload.rtgs_calendar is not None
    world = WorkloadDriver(workload, 0).run()
    waits = world.log.select("rtgs.closed_wait")
    # before Friday's opening they wait for it; after its cut-off, for Monday's
    assert {w["reopensAt"] for w in waits} \
        == {"2026-11-27T06:00:00.000Z", "2026-11-30T06:00:00.000Z"}
    always_open = WorkloadDriver(parse_workload(WORKLOAD, "w.yaml"), 0).run()
    assert parse_workload(WORKLOAD, "w.yaml").rtgs_calendar is None
    assert not always_open.log.select("rtgs.closed_wait")
    assert world.now_ms > always_open.now_ms + 48 * 3_600_000  # it ran into Monday


@pytest.mark.parametrize(("old", "new", "field"), [
    ("time_zone: Europe/London", "time_zone: Europe/Londn", "world.rtgs_calendar.time_zone"),
    ('cut_off: "17:40"', 'cut_off: "18:40"', "world.rtgs_calendar.cut_off"),
    ('opens: "06:00"', 'opens: "06:0"', "world.rtgs_calendar.opens"),
])
def test_a_bad_calendar_in_a_workload_is_refused_at_its_line(old: str, new: str,
                                                            field: str) -> None:
    with pytest.raises(ScenarioInvalid) as refused:
        parse_workload(WITH_CALENDAR.replace(old, new), "w.yaml")
    line = WITH_CALENDAR.splitlines().index(
        next(row for row in WITH_CALENDAR.splitlines() if old in row)) + 1
    [problem] = refused.value.lines()
    assert problem.startswith(f"w.yaml:{line}:") and f" {field}: " in problem, problem


def test_a_sweep_case_sets_the_calendar_and_a_bad_one_is_refused_at_the_sweep_s_line(
        tmp_path: Path) -> None:
    sweep = load_sweep(INPUTS / "rtgs_hours_sweep.yaml")
    by_case = {p.case: p.workload.rtgs_calendar for p in sweep.params}
    assert by_case["always-open"] is None
    calendar = by_case["chaps-hours"]
    assert calendar is not None and calendar.time_zone == "Europe/London"
    (tmp_path / "rtgs_hours.yaml").write_text(WORKLOAD)
    text = (INPUTS / "rtgs_hours_sweep.yaml").read_text()
    bad = tmp_path / "s.yaml"
    bad.write_text(text.replace("closed_weekdays: [saturday, sunday]",
                                "closed_weekdays: [saturday, sunday, sunday]"))
    with pytest.raises(ScenarioInvalid) as refused:
        load_sweep(bad)
    [problem] = refused.value.lines()  # at the override's value, naming the field
    line = text.splitlines().index("    world.rtgs_calendar:") + 2
    assert problem.startswith(f"{bad}:{line}:"), problem
    assert "world.rtgs_calendar.closed_weekdays[2]: " in problem
    assert "listed twice" in problem
