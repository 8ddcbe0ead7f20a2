"""The RTGS calendar in world files (beyond the spec; issue 29 §4, docs/scenarios.md).

The shipped scenario (a redeem at 17:50 on a Friday, Europe/London, CHAPS-like hours) passes,
and fails when its calendar is mutated: a cut-off of 18:00 earmarks and settles on Friday; no
calendar at all settles at once. A bad calendar is refused at its file, line and field.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.cli import main
from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.scenario.runner import play
from clearing_sim.sim.world import World
from tests.scenario.kit import BASE, load, problems

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "scenarios" / "rtgs-calendar-friday-evening-redeem-settles-monday.yaml"
TEXT = FILE.read_text()
FRIDAY_CLOSE = "2026-11-27T18:00:00.000Z"


def _settled_at(world: World) -> str:
    [settle] = world.log.select("rtgs.settle")
    return world.iso(settle.at_ms)


def test_the_friday_evening_redeem_settles_on_monday_after_the_opening() -> None:
    result, stage = play(load(TEXT, str(FILE)))
    assert result.passed, [f.actual for f in result.failures]
    [earmark] = stage.world.log.select("rtgs.earmark")
    assert stage.world.iso(earmark.at_ms) == "2026-11-30T06:00:00.000Z"
    assert _settled_at(stage.world).startswith("2026-11-30T06:")


def _without_calendar(text: str) -> str:
    start = text.index("  rtgs_calendar:\n")
    end = text.index("\n", text.index("    holidays:", start)) + 1
    return text[:start] + text[end:]


MUTATIONS = {
    "cut-off at 18:00": lambda text: text.replace('cut_off: "17:40"', 'cut_off: "18:00"'),
    "no calendar": _without_calendar,
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_scenario_fails_when_its_calendar_is_mutated(mutation: str) -> None:
    text = MUTATIONS[mutation](TEXT)
    assert text != TEXT
    result, stage = play(load(text, "mutated.yaml"))
    assert not result.passed, mutation
    stage.world.run_all()
    assert _settled_at(stage.world) < FRIDAY_CLOSE  # settled on Friday evening


@pytest.mark.parametrize(("old", "new", "field", "says"), [
    ("time_zone: Europe/London", "time_zone: Europe/Londres", "world.rtgs_calendar.time_zone",
     "IANA time zone"),
    ('cut_off: "17:40"', 'cut_off: "18:30"', "world.rtgs_calendar.cut_off",
     "must not come after closes 18:00"),
    ('opens: "06:00"', 'opens: "6am"', "world.rtgs_calendar.opens", "HH:MM"),
    ('holidays: ["2026-12-25", "2026-12-28"]', 'holidays: ["2026-12-25", "2026-02-30"]',
     "world.rtgs_calendar.holidays[1]", "YYYY-MM-DD"),
    ("closed_weekdays: [saturday, sunday]", "closed_weekdays: [saturday, sundae]",
     "world.rtgs_calendar.closed_weekdays[1]", "expected"),
    ('    closes: "18:00"\n', '    closes: "18:00"\n    contingency: "20:00"\n',
     "world.rtgs_calendar.contingency", "contingency"),
])
def test_a_bad_calendar_is_refused_at_its_line_and_field(old: str, new: str, field: str,
                                                        says: str) -> None:
    assert old in TEXT
    text = TEXT.replace(old, new)
    key = field.rsplit(".", 1)[-1].split("[")[0]
    line = next(i for i, row in enumerate(text.splitlines(), 1)
                if row.strip().startswith(f"{key}:"))
    found = problems(text, "cal.yaml")
    assert len(found) == 1, found
    assert found[0].startswith(f"cal.yaml:{line}:") and f" {field}" in found[0], found
    assert says in found[0], found


def test_the_cli_refuses_a_bad_calendar_with_exit_2_naming_file_line_and_field(
        tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(TEXT.replace('cut_off: "17:40"', 'cut_off: "18:30"'))
    result = CliRunner().invoke(main, ["run", str(bad)])
    assert result.exit_code == 2, result.output
    line = next(i for i, row in enumerate(bad.read_text().splitlines(), 1)
                if row.strip().startswith("cut_off:"))
    assert f"{bad}:{line}:" in result.output
    assert " world.rtgs_calendar.cut_off: " in result.output
    assert "Traceback" not in result.output


_VALUES = st.one_of(
    st.sampled_from(['"06:00"', '"17:40"', '"18:00"', '"24:00"', '"6:00"', "Europe/London",
                     "UTC", "Mars/Base", "../zoneinfo", "[saturday, sunday]", "[funday]",
                     '["2026-12-25"]', '["2026-02-30"]', "[]", "{}", "null", "7", "-1",
                     '"2026-12-25"', "[[1]]", '"\\u0000"']),
    st.text(alphabet=" :-/[]{}\"',0123456789abcUTC", max_size=12))
_KEYS = st.sampled_from(["time_zone", "opens", "cut_off", "closes", "closed_weekdays",
                         "holidays", "contingency"])


def _load_with(fields: dict[str, str]) -> None:
    block = "".join(f"    {key}: {value}\n" for key, value in fields.items())
    calendar = f"rtgs_calendar:\n{block}" if block else "rtgs_calendar: {}\n"
    text = BASE.replace("world: {seed: 1}\n", f"world:\n  seed: 1\n  {calendar}")
    assert text != BASE
    try:
        scenario = load(text, "f.yaml")
    except ScenarioError as error:
        assert error.lines() and all(line.startswith("f.yaml:") for line in error.lines())
        return
    calendar = scenario.world.rtgs_calendar
    assert calendar is not None and calendar.next_opening_ms(0) >= 0


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(fields=st.dictionaries(_KEYS, _VALUES, max_size=7))
def test_any_calendar_in_a_world_file_is_loaded_or_refused_never_a_traceback(
        fields: dict[str, str]) -> None:
    _load_with(fields)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(fields=st.dictionaries(_KEYS, _VALUES, max_size=7))
def test_any_calendar_in_a_world_file_deeper(fields: dict[str, str]) -> None:
    _load_with(fields)
