"""Sweep files: seeds, cases × grid, overrides checked by the workload loader at their line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.analysis import load_sweep
from clearing_sim.analysis.sweepfile import SEEDS_MAX, format_seeds, parse_seeds
from tests.analysis.conftest import TINY, TINY_SWEEP
from tests.analysis.kit import sweep_problems

SWEEP_TEXT = TINY_SWEEP.read_text()


@pytest.mark.parametrize(("text", "seeds"), [
    ("0-3", (0, 1, 2, 3)), ("7", (7,)), (" 0-1, 5 ,9-10", (0, 1, 5, 9, 10)), ("3-3", (3,))])
def test_seeds_text(text: str, seeds: tuple[int, ...]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(("text", "message"), [
    ("0-x", "expected seeds like 0-99"), ("", "expected seeds like"), ("-1", "expected seeds"),
    ("5-1", "runs backwards"), ("1,0-2", "seed 1 is listed twice"),
    (f"0-{SEEDS_MAX}", "at most"), ("1" + "0" * 35, "integers from 0 to 9223372036854775807"),
    (f"{(1 << 63) - 1}-{1 << 63}", "integers from 0 to")])
def test_bad_seeds_text(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_seeds(text)


def test_seeds_given_in_python_are_checked_too() -> None:
    with pytest.raises(ValueError, match="seed 2 is listed twice"):
        load_sweep(TINY_SWEEP, seeds=[2, 2])
    with pytest.raises(ValueError, match="integers from 0 to"):
        load_sweep(TINY_SWEEP, seeds=[-1])


@given(st.lists(st.integers(0, 500), unique=True, max_size=30))
def test_format_seeds_round_trips(seeds: list[int]) -> None:
    if seeds:
        assert parse_seeds(format_seeds(seeds)) == tuple(seeds)


def test_cases_times_grid_in_file_order() -> None:
    sweep = load_sweep(TINY_SWEEP)
    assert sweep.name == "tiny-sweep" and sweep.seeds == (0, 1)
    assert [p.label for p in sweep.params] == [
        "baseline, rate_per_hour=12", "baseline, rate_per_hour=24",
        "silent-etherpound, rate_per_hour=12", "silent-etherpound, rate_per_hour=24"]
    assert sweep.param_paths == ("issuers.etherpound.behaviour.outcomes.silence",
                                 "members.northbank.arrivals.rate_per_hour")
    rates = [p.workload.members[0].arrivals.rate_per_hour for p in sweep.params]
    silence = [p.workload.issuers[1].behaviour.p_silence for p in sweep.params]
    assert rates == [12, 24, 12, 24] and silence == [0.1, 0.1, 0.5, 0.5]
    assert len({p.param_id for p in sweep.params}) == 4
    assert load_sweep(TINY_SWEEP, seeds=[9]).seeds == (9,)
    again = load_sweep(TINY_SWEEP)  # ids are a function of the effective workload
    assert [p.param_id for p in again.params] == [p.param_id for p in sweep.params]


def _problems(tmp: Path, old: str, new: str) -> list[str]:
    shutil.copy(TINY, tmp / "tiny.yaml")
    assert old in SWEEP_TEXT, old
    (tmp / "s.yaml").write_text(SWEEP_TEXT.replace(old, new), encoding="utf-8")
    return sweep_problems(tmp / "s.yaml")


GRID = "  members.northbank.arrivals.rate_per_hour: [12, 24]"


@pytest.mark.parametrize(("old", "new", "expected"), [
    (GRID, GRID.replace("northbank", "southbank"),
     ":8:3: grid.members.southbank.arrivals.rate_per_hour: the workload has no field "
     "members.southbank (did you mean northbank?); expected one of: northbank"),
    (GRID, GRID.replace("24", "-1"),
     ":8:50: grid.members.northbank.arrivals.rate_per_hour[1]: with "
     "members.northbank.arrivals.rate_per_hour = -1 the workload is invalid: "
     "members.northbank.arrivals.rate_per_hour: expected a rate"),
    ("outcomes.silence: 0.5}", "outcomes.silence: 0.9}",
     ":6:70: cases.silent-etherpound.issuers.etherpound.behaviour.outcomes.silence: with "
     "issuers.etherpound.behaviour.outcomes.silence = 0.9 the workload is invalid: "
     "issuers.etherpound.behaviour.outcomes: expected outcome probabilities that add up to 1"),
    ("seeds: 0-1", "seeds: 5-1", ":3:8: seeds: the range 5-1 runs backwards"),
    ("seeds: 0-1\n", "", ":1:1: no seeds: expected seeds in the sweep file or --seeds"),
    ("workload: tiny.yaml", "workload: nope.yaml", ":2:11: workload: no such file: "),
    (GRID, GRID.replace("24", "12"), ":8:50: grid.members.northbank.arrivals.rate_per_hour[1]: "
     "this parameter set repeats set 1; expected distinct sets"),
    (GRID, "  members..northbank: [1]", ":8:3: grid.members..northbank: key "
     "'members..northbank': expected a field path into the workload"),
    ("sweep: tiny-sweep", "sweep: tiny-sweep\nextra: 1", ":2:1: extra: unknown field 'extra'"),
])
def test_each_problem_is_reported_at_the_sweep_files_line(tmp_path: Path, old: str, new: str,
                                                          expected: str) -> None:
    found = _problems(tmp_path, old, new)
    assert found and found[0].startswith(str(tmp_path / "s.yaml") + expected), found


def test_a_bad_workload_is_reported_at_its_own_lines(tmp_path: Path) -> None:
    shutil.copy(TINY, tmp_path / "tiny.yaml")
    (tmp_path / "tiny.yaml").write_text(TINY.read_text().replace("horizon: 1h", "horizon: 1x"))
    (tmp_path / "s.yaml").write_text(SWEEP_TEXT)
    assert sweep_problems(tmp_path / "s.yaml") == [
        f"{tmp_path / 'tiny.yaml'}:4:10: horizon: expected a duration like 250ms, 90s, 15m, 72h "
        'or 2d, got the string "1x"']
