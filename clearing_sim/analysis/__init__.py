"""Analysts' tools: workloads, seeded sweeps, tidy pandas frames, metrics, plots and reports.

Public names: ``Frames``, ``SweepResult``, ``Workload``, ``WorkloadRun``, ``across_seeds``,
``frames_from_jsonl``, ``frames_from_log``, ``latency_percentiles``, ``load_results``,
``load_sweep``, ``load_workload``, ``parking_rates``, ``parse_seeds``, ``run_metrics``,
``run_workload``, ``sweep``, ``write_report``.

The Python API mirrors the command line: ``run_workload(file, seed)`` is ``clearing-sim
workload``, ``sweep(file, seeds, workers=, dask=, out=)`` is ``clearing-sim sweep`` (seeds as
``--seeds`` writes them, ``"0-9,20"``, or ints; ``parse_seeds`` reads that text) and
``write_report(folder)`` is ``clearing-sim report``. Modules: ``model`` and ``loader``
(workload files), ``driver`` (the world and its arrival processes), ``frames`` (event log →
frames), ``metrics``, ``runs`` (one run), ``sweepfile`` and ``sweeps`` (many runs),
``resultfiles`` (a sweep's output folder read back, every file checked), ``manifest`` (what
made each output, written into it and checked by ``report``), ``executors`` (local processes
or Dask), ``plots`` (with ``waterfall`` and ``figurekit``), ``report`` (with
``report_tables``, ``presentation`` and ``spread``: labels, units, significant figures, 95 %
t-intervals over seeds), ``progress`` (bars on a terminal only), ``cli``. Formats:
docs/workloads.md; frames, metrics, sweeps and reports: docs/analysis.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from clearing_sim.commands.extras import require

require("analysis", "clearing_sim.analysis (workloads, sweeps, frames, reports)")

if TYPE_CHECKING:
    from clearing_sim.analysis.frames import Frames, frames_from_jsonl, frames_from_log
    from clearing_sim.analysis.loader import load_workload
    from clearing_sim.analysis.metrics import (
        across_seeds,
        latency_percentiles,
        parking_rates,
        run_metrics,
    )
    from clearing_sim.analysis.model import Workload
    from clearing_sim.analysis.report import write_report
    from clearing_sim.analysis.runs import WorkloadRun, run_workload
    from clearing_sim.analysis.sweepfile import load_sweep, parse_seeds
    from clearing_sim.analysis.sweeps import SweepResult, load_results, sweep

#: public name → the module that defines it (imported on first use: a worker process that
#: only runs workloads never imports matplotlib).
_HOMES = {
    "Frames": "frames", "frames_from_jsonl": "frames", "frames_from_log": "frames",
    "load_workload": "loader", "across_seeds": "metrics", "latency_percentiles": "metrics",
    "parking_rates": "metrics", "run_metrics": "metrics", "Workload": "model",
    "write_report": "report", "WorkloadRun": "runs", "run_workload": "runs",
    "load_sweep": "sweepfile", "parse_seeds": "sweepfile", "SweepResult": "sweeps",
    "load_results": "sweeps", "sweep": "sweeps",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = ["Frames", "SweepResult", "Workload", "WorkloadRun", "across_seeds",
           "frames_from_jsonl", "frames_from_log", "latency_percentiles", "load_results",
           "load_sweep", "load_workload", "parking_rates", "parse_seeds", "run_metrics",
           "run_workload", "sweep", "write_report"]
