"""One run of a workload under one seed: its frames, metrics and digest; and a run on disk.

Public names: ``RunOutput``, ``RunTask``, ``WorkloadRun``, ``execute``, ``read_run``,
``run_folder``, ``run_workload``, ``write_run``.

``run_workload(path_or_workload, seed)`` is the Python side of ``clearing-sim workload``: it
runs the workload to its end and answers its tidy frames, metrics, digest and (if asked) its
event log as JSON lines. ``execute(task)`` is what a sweep ships to a worker process or a Dask
worker: a pure function of (workload, seed), so where it runs changes nothing in its output.

On disk, a finished run is the folder ``runs/<param_id>/seed-<seed>/`` of a sweep's output:
``run.json`` (digest, counts), ``metrics.parquet`` and one Parquet file per kept frame. It is
written as ``….partial`` and renamed when complete, so a folder that exists is finished: that
is how an interrupted sweep resumes without redoing finished runs. A finished run's folder
whose files cannot be used is a ``ResultsFileError`` (``resultfiles``), never a run redone
silently.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
from attrs import field, frozen

from clearing_sim.analysis.driver import WorkloadDriver
from clearing_sim.analysis.frames import FRAME_NAMES, Frames, frames_from_jsonl, frames_from_log
from clearing_sim.analysis.loader import load_workload
from clearing_sim.analysis.manifest import write_parquet
from clearing_sim.analysis.metrics import METRIC_COLUMNS, run_metrics
from clearing_sim.analysis.model import Workload
from clearing_sim.analysis.resultfiles import (
    ResultsFileError,
    check_fields,
    read_json_object,
    read_table,
)

__all__ = ["RunOutput", "RunTask", "WorkloadRun", "execute", "read_run", "run_folder",
           "run_workload", "write_run"]

#: The frames the metrics are computed from (built whatever a sweep keeps).
METRIC_FRAMES = ("transactions", "deliveries", "subscriptions")
#: ``run.json``'s fields (``write_run``) → their kind (``resultfiles.check_fields``).
_RUN_FIELDS = {"paramId": "string", "seed": "integer", "digest": "string",
               "records": "integer", "transactions": "integer", "endMs": "integer",
               "frames": "string[]"}


@frozen
class WorkloadRun:
    """A finished run: its seed, digest, size and tidy frames; ``metrics`` is ``run_metrics``."""

    workload: Workload
    seed: int
    digest: str
    records: int
    end_ms: int
    frames: Frames = field(eq=False, repr=False)
    metrics: pd.DataFrame = field(eq=False, repr=False)

    @property
    def transactions(self) -> pd.DataFrame:
        return self.frames.transactions


def _wanted(frames: Iterable[str]) -> tuple[str, ...]:
    chosen = set(frames) | set(METRIC_FRAMES)
    return tuple(name for name in FRAME_NAMES if name in chosen)


def run_workload(workload: Workload | str | Path, seed: int = 0, *,
                 frames: Iterable[str] = FRAME_NAMES, log: str | Path | None = None,
                 stream: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> WorkloadRun:
    """Run a workload (a ``Workload`` or a workload file) under ``seed``; its frames (those
    named, plus what the metrics need), metrics and digest. ``log`` writes the event log.

    ``stream`` (needs ``log``): the log goes to the file as the run goes and nothing of a
    finished transaction stays in memory; the frames are then read back from the file.
    ``progress(now_ms, initiated)``: called as the run goes (the virtual time reached, the
    transactions initiated); the run, its log and digest are the same with or without it."""
    if not isinstance(workload, Workload):
        workload = load_workload(workload)
    if stream:
        assert log is not None, "a streamed run writes its log to a file: give log"
        with Path(log).open("wb") as out:  # the lines as hashed, not decoded and re-encoded
            world = WorkloadDriver(workload, seed, log_sink=out).run(progress)
        built = frames_from_jsonl(log, _wanted(frames))
    else:
        world = WorkloadDriver(workload, seed).run(progress)
        if log is not None:
            with Path(log).open("w", encoding="utf-8") as out:
                world.log.write_jsonl(out)
        built = frames_from_log(world.log, _wanted(frames))
    return WorkloadRun(workload, seed, world.log.digest(), len(world.log), world.now_ms, built,
                       run_metrics(built))


@frozen
class RunTask:
    """What a worker needs for one run of a sweep."""

    param_id: str
    seed: int
    workload: Workload
    frames: tuple[str, ...]


@frozen
class RunOutput:
    """What a worker sends back: the run's identity, digest, metrics and kept frames."""

    param_id: str
    seed: int
    digest: str
    records: int
    transactions: int
    end_ms: int
    metrics: pd.DataFrame = field(eq=False, repr=False)
    frames: Frames | None = field(default=None, eq=False, repr=False)


def execute(task: RunTask) -> RunOutput:
    """Run one (workload, seed) of a sweep; the same output in any process."""
    run = run_workload(task.workload, task.seed, frames=task.frames)
    kept = Frames({name: run.frames[name] for name in task.frames})
    return RunOutput(task.param_id, task.seed, run.digest, run.records,
                     len(run.frames.transactions), run.end_ms, run.metrics, kept)


# on disk -----------------------------------------------------------------------------------
def run_folder(out: str | Path, param_id: str, seed: int) -> Path:
    return Path(out) / "runs" / param_id / f"seed-{seed:06d}"


def write_run(out: str | Path, output: RunOutput,
              manifest: dict[str, Any] | None = None) -> Path:
    """Write one finished run under ``out``, atomically (see the module docstring), with its
    ``manifest`` in ``run.json`` and in each Parquet file's metadata."""
    final = run_folder(out, output.param_id, output.seed)
    partial = final.with_name(final.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    if manifest is None:
        output.metrics.to_parquet(partial / "metrics.parquet", index=False)
    else:
        write_parquet(output.metrics, partial / "metrics.parquet", manifest)
    kept: tuple[str, ...] = ()
    if output.frames is not None:
        output.frames.to_parquet(partial, manifest)
        kept = output.frames.names()
    info: dict[str, Any] = {"paramId": output.param_id, "seed": output.seed,
                            "digest": output.digest, "records": output.records,
                            "transactions": output.transactions, "endMs": output.end_ms,
                            "frames": list(kept)}
    if manifest is not None:
        info["manifest"] = manifest
    (partial / "run.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    if final.exists():
        shutil.rmtree(final)
    os.replace(partial, final)
    return final


def read_run(out: str | Path, param_id: str, seed: int,
             frames: Iterable[str] = ()) -> RunOutput | None:
    """A finished run from disk, if it is there and kept every frame in ``frames``;
    ``ResultsFileError`` if its folder is there but its ``run.json`` or ``metrics.parquet``
    cannot be used (a finished run's folder holds both)."""
    folder = run_folder(out, param_id, seed)
    if not folder.exists():
        return None
    path = folder / "run.json"
    info = read_json_object(path)
    check_fields(path, info, _RUN_FIELDS)
    if (info["paramId"], info["seed"]) != (param_id, seed):
        raise ResultsFileError(path, f"expected the run of its folder ({param_id}, seed "
                               f"{seed}), found {info['paramId']}, seed {info['seed']}")
    if not set(frames) <= set(info["frames"]):
        return None
    metrics = read_table(folder / "metrics.parquet", METRIC_COLUMNS)
    return RunOutput(param_id, seed, info["digest"], info["records"], info["transactions"],
                     info["endMs"], metrics)
