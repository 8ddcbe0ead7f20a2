"""The pytest plugin: scenario files are test items (``pytest scenarios/``).

Public names: ``ScenarioFile``, ``ScenarioItem``, ``pytest_addoption``,
``pytest_collect_file``.

Registered through the ``pytest11`` entry point, so installing clearing-sim is enough. A
``*.yaml`` / ``*.yml`` file whose top level has a ``scenario:`` key is collected as one item
named after the scenario; a file that is invalid is a collection error printed as
``FILE:LINE:COL: FIELD: message`` lines, without a traceback; a failed run prints each failed
expectation (expected vs actual) and the ``clearing-sim run FILE --seed N`` line that replays
it, as the CLI does. Each item records its seed, digest and virtual time as user properties
(they reach JUnit XML reports). ``--scenario-seed N`` replaces every file's seed;
``clearing_sim_scenarios = false`` in the ini file turns collection off.

It also registers the served-world fixtures of ``clearing_sim.testing.fixtures``
(``clearing_sim``, ``clearing_sim_server``, ``clearing_sim_world``, ``clearing_sim_seed``) and
their failure report hook, imported here so the one entry point brings them. This module is
a door, not a part of the scenario package's layer: it may import the fixtures above it
(``tests/test_layers.py`` lists it with the doors).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.scenario.loader import SUFFIXES, parse_scenario, read_bounded
from clearing_sim.scenario.model import Scenario
from clearing_sim.scenario.reports import failure_lines
from clearing_sim.scenario.results import ScenarioResult, duration_text
from clearing_sim.scenario.runner import run_scenario
from clearing_sim.scenario.source import TEXT_CHARS_MAX
from clearing_sim.testing.fixtures import (  # noqa: F401  (registered by being here)
    clearing_sim,
    clearing_sim_seed,
    clearing_sim_server,
    clearing_sim_world,
    pytest_runtest_makereport,
)

__all__ = ["ScenarioFile", "ScenarioItem", "pytest_addoption", "pytest_collect_file"]

_TOP_LEVEL_SCENARIO = re.compile(r"^scenario\s*:", re.MULTILINE)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("clearing-sim", "clearing-sim scenario files")
    group.addoption("--scenario-seed", type=int, default=None, metavar="N",
                    help="replace every scenario file's world.seed with N")
    parser.addini("clearing_sim_scenarios", type="bool", default=True,
                  help="collect scenario files (*.yaml with a top-level scenario: key)")


def _is_scenario(path: Path) -> bool:
    """A top-level ``scenario:`` key within the first ``TEXT_CHARS_MAX`` bytes (a scenario
    file is no longer; a longer one with the key is collected and refused for its size). No
    more is read: other YAML in the tree may be any size, or a device (``/dev/zero``)."""
    try:
        with path.open("rb") as stream:
            head = stream.read(TEXT_CHARS_MAX + 1)
    except OSError:
        return False
    return _TOP_LEVEL_SCENARIO.search(head.decode("utf-8", errors="replace")) is not None


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> ScenarioFile | None:
    if file_path.suffix not in SUFFIXES or not parent.config.getini("clearing_sim_scenarios"):
        return None
    if not _is_scenario(file_path):
        return None
    collected: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
    return collected


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[ScenarioItem]:
        root = self.config.rootpath
        shown = self.path.relative_to(root) if self.path.is_relative_to(root) else self.path
        scenario = parse_scenario(read_bounded(self.path, str(shown)), str(shown))
        yield ScenarioItem.from_parent(self, name=scenario.name, scenario=scenario)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioError):
            return "\n".join(excinfo.value.lines())
        return super().repr_failure(excinfo)


class ScenarioFailed(Exception):
    def __init__(self, result: ScenarioResult) -> None:
        super().__init__(result.name)
        self.result = result


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        for tag in scenario.tags:  # -k reads extra_keyword_matches; keywords hold markers
            self.keywords[tag] = True
            self.extra_keyword_matches.add(tag)

    def runtest(self) -> None:
        result = run_scenario(self.scenario, self.config.getoption("scenario_seed"))
        self.user_properties.extend([("seed", result.seed), ("digest", result.digest),
                                     ("virtual", duration_text(result.virtual_ms))])
        if not result.passed:
            raise ScenarioFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailed):
            result = excinfo.value.result
            return "\n".join([f"scenario {result.name!r} failed "
                              f"({len(result.failures)} of {len(result.results)} "
                              "expectations):", *failure_lines(result)])
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario: {self.name}"
