"""``clearing-sim run --jobs`` (issue 30 §3): scenario files loaded and played over forked
workers give what one process gives: the same lines, digests, JSON, JUnit, logs and pages, in
file order; a file with a problem still means nothing runs; shares are balanced by size."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from clearing_sim.scenario.batch import shares
from clearing_sim.scenario.errors import (
    ScenarioInvalid,
    ScenarioNotFound,
    ScenarioUnreadable,
)
from tests.scenario.kit import BASE, with_steps

ROOT = Path(__file__).resolve().parents[2]
Write = Callable[[str, str | bytes], Path]
FORKS = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                           reason="forking is not offered on this system")

SETTLES = with_steps(
    "  - wait_until: {transaction: {id: '${tx}', fields: {terminal: true}}, timeout: 1h}\n"
    "    expect: {transaction: {id: '${tx}', fields: {lifecycleStatus: settled}}}\n")


@given(st.lists(st.integers(0, 10**6), max_size=60), st.integers(1, 9))
def test_shares_hold_every_file_once_in_order_and_are_balanced(sizes: list[int],
                                                               jobs: int) -> None:
    split = shares(sizes, jobs)
    assert sorted(i for share in split for i in share) == list(range(len(sizes)))
    assert all(share == sorted(share) and share for share in split)
    assert len(split) == min(jobs, len(sizes)) or not sizes
    totals = [sum(sizes[i] for i in share) for share in split]
    if totals:  # largest first, to the lightest: no share exceeds another by more than a file
        assert max(totals) - min(totals) <= max(sizes)


def test_scenario_errors_cross_a_process_whole(tmp_path: Path) -> None:
    import pickle

    from clearing_sim.scenario.errors import Location, Problem
    problems = [Problem("s.yaml", Location(3, 1), "world.seed", "expected an integer")]
    for error in (ScenarioNotFound("x.yaml", "no such file"),
                  ScenarioUnreadable("y.yaml", "is not UTF-8 text"),
                  ScenarioInvalid("s.yaml", problems)):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and copy.lines() == error.lines()
        assert str(copy) == str(error)


def _names(tmp_path: Path, count: int) -> list[str]:
    folder = tmp_path / "files"
    folder.mkdir()
    for index in range(count):
        text = SETTLES.replace("scenario: base", f"scenario: s{index:02d}")
        if index % 3 == 0:  # uneven sizes, so the shares are not file order
            text += "# " + "x" * 400 * index + "\n"
        (folder / f"s{index:02d}.yaml").write_text(text, encoding="utf-8")
    return [str(folder)]


def _batch(paths: list[str], play: str, jobs: int, keyword: str | None = None) -> dict:
    """What ``tests/scenario/batch_driver.py`` answers for this batch, run in a fresh process
    (one thread: it may fork, whatever threads this test process holds)."""
    request = {"paths": paths, "play": play, "jobs": jobs, "keyword": keyword}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("batch_driver.py")),
                           json.dumps(request)], cwd=ROOT, capture_output=True, text=True,
                          check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _workers(answer: dict) -> set[int]:
    pids = {pid for _, _, pid in answer["answers"]}
    assert answer["parent"] not in pids  # played in forked workers, not in the process
    return pids


@FORKS
def test_answers_come_in_file_order_from_several_processes(tmp_path: Path) -> None:
    answer = _batch(_names(tmp_path, 7), "slow_first", jobs=3)
    assert answer["errors"] == []
    assert [name for name, _, _ in answer["answers"]] == [f"s{i:02d}" for i in range(7)]
    assert {count for _, count, _ in answer["answers"]} == {7}
    assert len(_workers(answer)) == 3


@FORKS
def test_the_keyword_counts_over_every_worker(tmp_path: Path) -> None:
    paths = _names(tmp_path, 6)
    every = _batch(paths, "slow_first", jobs=2, keyword="s0")
    assert [(n, c) for n, c, _ in every["answers"]] == [(f"s{i:02d}", 6) for i in range(6)]
    assert len(_workers(every)) == 2
    one = _batch(paths, "slow_first", jobs=2, keyword="s03")
    assert [(n, c) for n, c, _ in one["answers"]] == [("s03", 1)]


@FORKS
@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_a_bad_file_in_any_share_means_nothing_is_played(tmp_path: Path, jobs: int) -> None:
    paths = _names(tmp_path, 5)
    folder = Path(paths[0])
    (folder / "s02.yaml").write_text(BASE.replace("world: {seed: 1}", "world: {seed: one}"),
                                     encoding="utf-8")
    (folder / "s04.yaml").write_bytes(b"\xff\xfe not utf-8")
    answer = _batch([*paths, str(tmp_path / "missing.yaml")], "never", jobs=jobs)
    assert answer["errors"] == [["ScenarioInvalid", str(folder / "s02.yaml")],
                                ["ScenarioUnreadable", str(folder / "s04.yaml")],
                                ["ScenarioNotFound", str(tmp_path / "missing.yaml")]]
    assert "answers" not in answer and "raised" not in answer


@FORKS
def test_what_a_worker_meets_reaches_the_parent_as_itself(tmp_path: Path) -> None:
    answer = _batch(_names(tmp_path, 4), "fails", jobs=2)
    kind, filename, cause = answer["raised"]
    assert (kind, cause) == ("OSError", "ChildFailed")  # the worker's traceback as its cause
    assert filename in {f"/full/s{i:02d}.jsonl" for i in range(4)}  # the first told


# the command, in real processes --------------------------------------------------------------
def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "clearing_sim", "run", *args], cwd=cwd,
                          capture_output=True, text=True, check=False, env=env)


_WALL = re.compile(r"wall \d+(\.\d+)? m?s")


def _no_wall(text: str) -> str:
    return _WALL.sub("wall …", text)


@FORKS
def test_the_library_gives_the_same_output_logs_and_pages_with_one_job_or_three(
        tmp_path: Path) -> None:
    runs = {}
    for jobs in ("1", "3"):
        out = tmp_path / jobs
        out.mkdir()
        done = _run("scenarios/", "-j", jobs, "--log", str(out / "run.jsonl"),
                    "--junit", str(out / "junit.xml"), "--html", str(out / "html"))
        assert done.returncode == 0, done.stderr[-2000:]
        logs = {p.name: p.read_bytes() for p in sorted(out.glob("run.*.jsonl"))}
        pages = {p.name: p.read_bytes() for p in sorted((out / "html").iterdir())}
        junit = re.sub(r'time="[^"]*"', "", (out / "junit.xml").read_text())
        runs[jobs] = (_no_wall(done.stdout), done.stderr, logs, pages, junit)
    assert len(runs["1"][2]) == len(list((ROOT / "scenarios").glob("*.yaml")))
    assert runs["1"] == runs["3"]


@FORKS
def test_json_is_the_same_with_any_number_of_jobs() -> None:
    def without_wall(document: dict) -> dict:
        for scenario in document["scenarios"]:
            assert isinstance(scenario.pop("wallSeconds"), float)
        return document
    one, two = (_run("scenarios/", "--json", "-j", jobs) for jobs in ("1", "2"))
    assert one.returncode == two.returncode == 0
    assert without_wall(json.loads(one.stdout)) == without_wall(json.loads(two.stdout))


@FORKS
def test_bad_files_are_refused_alike_with_one_job_or_two(tmp_path: Path) -> None:
    paths = _names(tmp_path, 4)
    (Path(paths[0]) / "s01.yaml").write_text(
        BASE.replace("world: {seed: 1}", "world: {seed: one}"), encoding="utf-8")
    one, two = (_run(paths[0], "-j", jobs, "--log", str(tmp_path / f"log{jobs}.jsonl"))
                for jobs in ("1", "2"))
    assert one.returncode == two.returncode == 2
    assert one.stdout == two.stdout == ""
    assert one.stderr == two.stderr and "s01.yaml:2:" in one.stderr
    assert not list(tmp_path.glob("log*.jsonl"))  # nothing was run


@settings(max_examples=150, deadline=None)
@example("²")
@given(st.one_of(st.text(max_size=12), st.integers(-5, 5).map(str),
                 st.sampled_from(["auto", " AUTO ", "1.5", "0", "-2", "two", "1e3", "\x00"])))
def test_any_jobs_value_runs_or_is_refused_as_a_bad_option(value: str) -> None:
    """``-j`` takes a whole number from 1 or ``auto``; anything else is click's usage error,
    exit 2, naming what it takes, and nothing runs: never a traceback."""
    from click.testing import CliRunner

    from clearing_sim.cli import main
    result = CliRunner().invoke(main, ["run", "scenarios/silence-parks-exactly-at-sla.yaml",
                                       "-j", value])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    try:
        valid = int(value) >= 1
    except ValueError:
        valid = value.strip().lower() == "auto"
    if valid:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 2 and "nor 'auto'" in result.output, result.output
        assert "PASS" not in result.output
