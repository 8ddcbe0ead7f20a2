"""The gates of a workload or sweep file, checked after its runs: verdict lines and JUnit.

Public names: ``GateVerdict``, ``check_sweep``, ``check_workload``, ``sweep_gates``,
``workload_gates``.

``workload_gates(workload)`` and ``sweep_gates(sweep)`` read a file's gates (a sweep's are its
own and its workload's), each bad expression a ``Problem`` at its line (``ScenarioInvalid``:
exit 2), before anything runs. ``check_workload`` and ``check_sweep`` check them on the runs'
metrics and answer a ``GateVerdict``: one outcome per gate and parameter set, the lines to
print, whether all held (else the command exits 1), and its JUnit XML — one testcase per
gate and parameter set, written by the conformance kits' JUnit writer
(``conformance.report.junit_xml``: a suite, a testcase per check, the failure's message and
the figures behind each verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped]
from attrs import frozen

from clearing_sim.analysis.gates import (
    GATE_KINDS,
    Gate,
    GateOutcome,
    check_gates,
    read_gates,
    workload_names,
)
from clearing_sim.analysis.loader import read_text
from clearing_sim.analysis.model import Workload
from clearing_sim.analysis.sweepfile import Sweep
from clearing_sim.conformance.report import Check, Evidence, Report, Verdict, junit_xml
from clearing_sim.scenario.errors import ScenarioInvalid
from clearing_sim.scenario.source import parse_yaml

__all__ = ["GateVerdict", "check_sweep", "check_workload", "sweep_gates", "workload_gates"]


def workload_gates(workload: Workload) -> tuple[Gate, ...]:
    """The gates of a loaded workload's file; ``ScenarioInvalid`` if one cannot be read."""
    if "gates" not in workload.data:
        return ()
    document = parse_yaml(read_text(workload.path), workload.path)
    gates, problems = read_gates(document, workload_names(document.data))
    if problems:
        raise ScenarioInvalid(workload.path, problems)
    return gates


def sweep_gates(sweep: Sweep) -> tuple[Gate, ...]:
    """A sweep's own gates, then its workload's; ``ScenarioInvalid`` (every problem of the
    file at fault) if one cannot be read."""
    workload = parse_yaml(sweep.workload_text, sweep.workload_path)
    names = workload_names(workload.data)
    found: list[Gate] = []
    for document in (parse_yaml(sweep.text, sweep.path), workload):
        gates, problems = read_gates(document, names)
        if problems:
            raise ScenarioInvalid(document.path, problems)
        found.extend(gates)
    return tuple(found)


@frozen
class GateVerdict:
    """Every gate on every parameter set of one command's runs."""

    outcomes: tuple[GateOutcome, ...]
    target: str  # the file whose gates these are

    @property
    def passed(self) -> bool:
        return all(outcome.passed for outcome in self.outcomes)

    def lines(self) -> list[str]:
        """``gates: N of M held``, then each miss (every failing seed of an ``always``; every
        seed's figure of a ``sometimes``); nothing when there are no gates."""
        if not self.outcomes:
            return []
        held = sum(outcome.passed for outcome in self.outcomes)
        head = (f"gates: {held} of {len(self.outcomes)} held (gate × parameter set)"
                + ("" if self.passed else f"; {len(self.outcomes) - held} missed"))
        return [head, *(outcome.message() for outcome in self.outcomes if not outcome.passed)]

    def junit(self) -> bytes:
        """JUnit XML: a testcase per gate and parameter set, named ``set: kind text``."""
        checks = [Check(id=f"{outcome.label} ({outcome.param_id})" if outcome.param_id
                        else outcome.label,
                        title=f"{outcome.gate.kind} {outcome.gate.text.strip()}",
                        rule=f"{outcome.gate.site}: holds on "
                             f"{GATE_KINDS[outcome.gate.kind]}",
                        verdict=Verdict.PASS if outcome.passed else Verdict.FAIL,
                        evidence=Evidence(notes=outcome.figure_lines()),
                        reason=outcome.message())
                  for outcome in self.outcomes]
        return junit_xml(Report(kit="gates", target=self.target, checks=checks))

    def write_junit(self, path: Path) -> None:
        path.write_bytes(self.junit())


def check_workload(gates: Sequence[Gate], metrics: pd.DataFrame, seed: int,
                   workload: Workload) -> GateVerdict:
    """``gates`` on one run's ``metrics`` (its seed, the workload's name as its label)."""
    return GateVerdict(tuple(check_gates(gates, metrics, (seed,), workload.name)),
                       workload.path)


def check_sweep(gates: Sequence[Gate], metrics: pd.DataFrame, sweep: Sweep) -> GateVerdict:
    """``gates`` on a sweep's tidy ``metrics``, per parameter set, over its seeds."""
    return GateVerdict(tuple(check_gates(gates, metrics)), sweep.path)

