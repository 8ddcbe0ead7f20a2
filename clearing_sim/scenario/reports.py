"""Scenario results for people and machines: text lines, JSON and JUnit XML.

Public names: ``Outcome``, ``combined_digest``, ``errors_json``, ``failure_lines``,
``junit_xml``, ``to_json``, ``replay_line``.

An ``Outcome`` is one scenario's result with the wall time its run took (measured by the
door that ran it: the engine never reads a wall clock). The text form is what the CLI and
the pytest plugin print; JSON mirrors it field for field, each result's expected and actual
as JSON values (the text line beside them as ``message``); JUnit XML has one ``testsuite`` per
scenario and one ``testcase`` per expectation, named by its step (its ``name:``, else its
index) and field path, not its line, so a CI dashboard's history survives edits elsewhere in
the file; expectations a stopped step left unchecked are ``<skipped>``; a file that could not
be run is a testsuite whose testcase holds an ``<error>`` naming the file and line. Times:
a suite's is its run's wall time, a case's an even share of its step's. ``combined_digest``
fingerprints a whole run of several scenarios: the sha256 of their digests in order.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

if TYPE_CHECKING:
    from xml.etree import ElementTree

from clearing_sim.scenario.errors import ScenarioError, ScenarioInvalid
from clearing_sim.scenario.results import CheckResult, ScenarioResult, duration_text

__all__ = ["Outcome", "combined_digest", "errors_json", "failure_lines", "junit_xml",
           "replay_line", "to_json"]


@frozen
class Outcome:
    result: ScenarioResult
    wall_s: float
    step_wall_s: Mapping[int, float] = field(factory=dict)  # step index → wall seconds


def replay_line(result: ScenarioResult) -> str:
    """The command that runs this scenario again, with the seed that was used."""
    return f"clearing-sim run {shlex.quote(result.path)} --seed {result.seed}"


def failure_lines(result: ScenarioResult) -> list[str]:
    """Each failed expectation (expected vs actual, with its line), then the replay line."""
    if result.passed:
        return []
    lines = [failure.render(result.path) for failure in result.failures]
    if any(failure.stopped for failure in result.failures):
        lines.append("(the run stopped at that step; later steps did not run)")
    lines.append(f"replay: {replay_line(result)}")
    return lines


def combined_digest(results: Sequence[ScenarioResult]) -> str:
    return hashlib.sha256("\n".join(r.digest for r in results).encode()).hexdigest()


def _check_json(check: CheckResult, path: str) -> dict[str, Any]:
    """One result: ``expected`` and ``actual`` as JSON values (lists, strings, numbers,
    objects), ``message`` the line the text output prints for it."""
    return {"step": check.step, "case": check.case_name(), "line": check.line,
            "column": check.column, "field": check.field, "passed": check.passed,
            "expected": check.expected_value, "actual": check.actual_value,
            "message": check.render(path), "stopped": check.stopped}


def to_json(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The whole run as one JSON document (``--json``)."""
    results = [o.result for o in outcomes]
    return {
        "passed": all(r.passed for r in results),
        "scenarios": [{
            "path": o.result.path, "name": o.result.name, "seed": o.result.seed,
            "passed": o.result.passed, "virtualMs": o.result.virtual_ms,
            "virtual": duration_text(o.result.virtual_ms), "wallSeconds": round(o.wall_s, 6),
            "digest": o.result.digest, "records": o.result.records,
            "replay": replay_line(o.result),
            "results": [_check_json(c, o.result.path) for c in o.result.results],
            "skipped": [_check_json(c, o.result.path) for c in o.result.skipped]}
            for o in outcomes],
        "counts": {"scenarios": len(results), "passed": sum(r.passed for r in results),
                   "failed": sum(not r.passed for r in results)},
        "digest": combined_digest(results),
    }


def _error_json(error: ScenarioError) -> list[dict[str, Any]]:
    if isinstance(error, ScenarioInvalid):
        return [{"path": p.path, "line": p.location.line, "column": p.location.column,
                 "field": p.field, "message": p.message} for p in error.problems]
    return [{"path": error.path, "line": None, "column": None, "field": "",
             "message": error.message}]


def errors_json(errors: Sequence[ScenarioError]) -> dict[str, Any]:
    """Files that could not be run (``--json`` with exit code 2): every problem, by line."""
    return {"passed": False, "scenarios": [],
            "errors": [entry for error in errors for entry in _error_json(error)],
            "counts": {"scenarios": 0, "passed": 0, "failed": 0, "invalidFiles": len(errors)},
            "digest": None}


def _unique(names: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _case_times(outcome: Outcome) -> list[float]:
    """Each expectation's share of its step's wall time (the step's time split evenly)."""
    per_step: dict[int, int] = {}
    for check in outcome.result.results:
        per_step[check.step] = per_step.get(check.step, 0) + 1
    return [outcome.step_wall_s.get(c.step, 0.0) / per_step[c.step]
            for c in outcome.result.results]


def _suite(root: ElementTree.Element, outcome: Outcome) -> None:
    from xml.etree import ElementTree  # only JUnit output needs it

    result = outcome.result
    suite = ElementTree.SubElement(
        root, "testsuite", name=result.name, file=result.path,
        tests=str(len(result.results) + len(result.skipped)),
        failures=str(len(result.failures)), errors="0", skipped=str(len(result.skipped)),
        time=f"{outcome.wall_s:.6f}")
    properties = ElementTree.SubElement(suite, "properties")
    for name, value in (("seed", str(result.seed)), ("digest", result.digest),
                        ("virtualMs", str(result.virtual_ms)),
                        ("replay", replay_line(result))):
        ElementTree.SubElement(properties, "property", name=name, value=value)
    if not result.results:
        ElementTree.SubElement(suite, "testcase", name="(no expectations)",
                               classname=result.name, file=result.path, time="0.000000")
    checks = [*result.results, *result.skipped]
    times = [*_case_times(outcome), *(0.0 for _ in result.skipped)]
    names = _unique([check.case_name() for check in checks])
    for index, (check, name, seconds) in enumerate(zip(checks, names, times, strict=True)):
        case = ElementTree.SubElement(suite, "testcase", name=name, classname=result.name,
                                      file=result.path, line=str(check.line),
                                      time=f"{seconds:.6f}")
        if index >= len(result.results):
            ElementTree.SubElement(case, "skipped", message=check.actual)
        elif not check.passed:
            failure = ElementTree.SubElement(
                case, "failure", type="stopped" if check.stopped else "expectation",
                message=f"expected {check.expected}, got {check.actual}")
            failure.text = "\n".join([check.render(result.path),
                                      f"replay: {replay_line(result)}"])


def _error_suite(root: ElementTree.Element, error: ScenarioError) -> None:
    """An invalid file: one testcase with an ``<error>`` naming the file and line."""
    from xml.etree import ElementTree  # only JUnit output needs it

    problems = _error_json(error)
    line = problems[0]["line"]
    suite = ElementTree.SubElement(root, "testsuite", name=error.path, file=error.path,
                                   tests="1", failures="0", errors="1", skipped="0",
                                   time="0.000000")
    case = ElementTree.SubElement(suite, "testcase", name="(the file is valid)",
                                  classname=error.path, file=error.path, time="0.000000")
    if line is not None:
        case.set("line", str(line))
    element = ElementTree.SubElement(case, "error", type=type(error).__name__,
                                     message=error.lines()[0])
    element.text = "\n".join(error.lines())


def junit_xml(outcomes: Sequence[Outcome], errors: Sequence[ScenarioError] = ()) -> bytes:
    """JUnit XML: a ``testsuite`` per scenario, a ``testcase`` per expectation (named by its
    step and field), ``<skipped>`` for those a stopped step left unchecked, and a testsuite
    with an ``<error>`` per file that could not be run."""
    from xml.etree import ElementTree  # imported when JUnit is asked for (start-up: issue 30)

    results = [o.result for o in outcomes]
    root = ElementTree.Element(
        "testsuites", name="clearing-sim",
        tests=str(sum(len(r.results) + len(r.skipped) for r in results) + len(errors)),
        failures=str(sum(len(r.failures) for r in results)), errors=str(len(errors)),
        skipped=str(sum(len(r.skipped) for r in results)),
        time=f"{sum(o.wall_s for o in outcomes):.6f}")
    for error in errors:
        _error_suite(root, error)
    for outcome in outcomes:
        _suite(root, outcome)
    ElementTree.indent(root)
    document: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"
