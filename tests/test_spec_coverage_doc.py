"""docs/spec-coverage.md names real tests: every ``file.py::test_name`` (a ``::name`` after a
``;`` or ``,`` continues the file before it) and every ``scenarios/*.yaml`` it cites exists,
so the audit's table cannot point at a renamed or deleted test."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "spec-coverage.md"
_CELL_REF = re.compile(r"([\w/]+\.py)?::(test_\w+)|(scenarios/[\w.-]+\.yaml)")


def _references() -> tuple[set[tuple[str, str]], set[str]]:
    tests: set[tuple[str, str]] = set()
    scenarios: set[str] = set()
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not re.match(r"\| [A-Z]{1,2}\d+ \|", line):
            continue
        cell = line.split("|")[3]
        current: str | None = None
        for match in _CELL_REF.finditer(cell):
            path, name, scenario = match.groups()
            if scenario is not None:
                scenarios.add(scenario)
                continue
            current = path or current
            assert current is not None, f"{name} has no file in: {line[:60]}"
            tests.add((current, name))
    return tests, scenarios


def test_every_cited_test_exists() -> None:
    tests, _ = _references()
    assert len(tests) > 200
    missing = [f"{path}::{name}" for path, name in sorted(tests)
               if not (ROOT / "tests" / path).is_file()
               or not re.search(rf"^\s*(async )?def {name}\(",
                                (ROOT / "tests" / path).read_text(encoding="utf-8"),
                                re.MULTILINE)]
    assert missing == []


def test_every_cited_scenario_exists() -> None:
    _, scenarios = _references()
    assert len(scenarios) > 20
    assert [s for s in sorted(scenarios) if not (ROOT / s).is_file()] == []
