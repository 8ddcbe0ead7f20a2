"""Scenario results for people and machines: text lines, JSON and JUnit XML.

Public names: ``Outcome``, ``combined_digest``, ``failure_lines``, ``junit_xml``, ``to_json``,
``replay_line``.

An ``Outcome`` is one scenario's result with the wall time its run took (measured by the
door that ran it: the engine never reads a wall clock). The text form is what the CLI and
the pytest plugin print; JSON mirrors it field for field; JUnit XML has one ``testsuite`` per
scenario and one ``testcase`` per expectation, named by its field path and line, so CI
dashboards show which expectation failed. ``combined_digest`` fingerprints a whole run of
several scenarios: the sha256 of their digests in order.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree

from attrs import frozen

from clearing_sim.scenario.results import CheckResult, ScenarioResult, duration_text

__all__ = ["Outcome", "combined_digest", "failure_lines", "junit_xml", "replay_line",
           "to_json"]


@frozen
class Outcome:
    result: ScenarioResult
    wall_s: float


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


def _check_json(check: CheckResult) -> dict[str, Any]:
    return {"step": check.step, "line": check.line, "column": check.column,
            "field": check.field, "passed": check.passed, "expected": check.expected,
            "actual": check.actual, "stopped": check.stopped}


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
            "results": [_check_json(c) for c in o.result.results]}
            for o in outcomes],
        "counts": {"scenarios": len(results), "passed": sum(r.passed for r in results),
                   "failed": sum(not r.passed for r in results)},
        "digest": combined_digest(results),
    }


def _case_name(check: CheckResult) -> str:
    return f"{check.field} (line {check.line})"


def junit_xml(outcomes: Sequence[Outcome]) -> bytes:
    """JUnit XML: a ``testsuite`` per scenario, a ``testcase`` per expectation."""
    root = ElementTree.Element("testsuites", name="clearing-sim",
                               tests=str(sum(len(o.result.results) for o in outcomes)),
                               failures=str(sum(len(o.result.failures) for o in outcomes)))
    for outcome in outcomes:
        result = outcome.result
        suite = ElementTree.SubElement(
            root, "testsuite", name=result.name, file=result.path,
            tests=str(len(result.results)), failures=str(len(result.failures)),
            errors="0", skipped="0", time=f"{outcome.wall_s:.6f}")
        properties = ElementTree.SubElement(suite, "properties")
        for name, value in (("seed", str(result.seed)), ("digest", result.digest),
                            ("virtualMs", str(result.virtual_ms)),
                            ("replay", replay_line(result))):
            ElementTree.SubElement(properties, "property", name=name, value=value)
        if not result.results:
            ElementTree.SubElement(suite, "testcase", name="(no expectations)",
                                   classname=result.name, file=result.path, time="0")
        for check in result.results:
            case = ElementTree.SubElement(suite, "testcase", name=_case_name(check),
                                          classname=result.name, file=result.path,
                                          line=str(check.line), time="0")
            if not check.passed:
                failure = ElementTree.SubElement(
                    case, "failure", type="stopped" if check.stopped else "expectation",
                    message=f"expected {check.expected}, got {check.actual}")
                failure.text = "\n".join([check.render(result.path),
                                          f"replay: {replay_line(result)}"])
    ElementTree.indent(root)
    document: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"
