"""What a scenario run answers: one result per expectation, and the run as a whole.

Public names: ``CheckResult``, ``ScenarioResult``, ``Verdict``, ``duration_text``.

A ``CheckResult`` says which expectation (line, column, field path, step), what was expected
and what was found, twice: as text for people (``expected``, ``actual``: JSON values inside
words, never a Python repr) and as JSON values for machines (``expected_value``,
``actual_value``: lists, strings, numbers, objects; ``run --json`` carries these). A step that
could not be carried out (a ``wait_until`` whose deadline passed, a ``save`` whose field is
absent, an ``advance`` into the past) is a failed result too, flagged ``stopped``: the run
ends there, since later steps build on it. The ``ScenarioResult`` carries the seed and the
log's digest, so a failure can be replayed and a pass compared run against run. Expectations
that were never checked because an earlier step stopped the run are listed apart, as
``skipped`` (their ``actual`` says where it stopped).
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs import Factory, frozen

from clearing_sim.domain.timefmt import duration_text

__all__ = ["CheckResult", "ScenarioResult", "Verdict", "duration_text"]


@frozen
class Verdict:
    """One expectation evaluated: did it hold, what was expected, what was found, as text
    (``expected``, ``actual``) and as JSON values (``expected_value``, ``actual_value``)."""

    passed: bool
    expected: str
    actual: str
    expected_value: Any
    actual_value: Any


@frozen
class CheckResult:
    step: int  # the step's index in the file
    line: int
    column: int
    field: str  # e.g. steps[3].expect.status
    passed: bool
    expected: str
    actual: str
    stopped: bool = False  # the step itself failed; no later step ran
    step_name: str | None = None  # the step's ``name:``, when it has one
    # JSON values of expected and actual (default: the text, for a step that failed)
    expected_value: Any = attrs.field(default=Factory(lambda self: self.expected, takes_self=True))
    actual_value: Any = attrs.field(default=Factory(lambda self: self.actual, takes_self=True))

    def case_name(self) -> str:
        """A name that survives edits elsewhere in the file: the step (by its ``name:``, else
        its index) and the field path inside it, never the line."""
        prefix = f"steps[{self.step}]."
        inner = self.field[len(prefix):] if self.field.startswith(prefix) else self.field
        if self.step < 0:
            return f"world: {inner}" if inner else "world"
        return f"{self.step_name or f'steps[{self.step}]'}: {inner}"

    def render(self, path: str) -> str:
        """``path:line:col: field: expected X, got Y`` for a failure; ``… ok`` for a pass."""
        where = f"{path}:{self.line}:{self.column}: {self.field}"
        if self.passed:
            return f"{where}: ok ({self.expected})"
        return f"{where}: expected {self.expected}, got {self.actual}"


@frozen
class ScenarioResult:
    path: str
    name: str
    seed: int
    results: tuple[CheckResult, ...]
    virtual_ms: int  # virtual time at the end of the run
    digest: str  # the event log's sha256: same scenario + seed ⇒ same digest
    records: int  # how many log records the run wrote
    skipped: tuple[CheckResult, ...] = ()  # expectations not checked: the run stopped before

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if not r.passed)
