"""Sweeps: every parameter set of a sweep file × every seed, run anywhere, one tidy result.

Public names: ``SweepOutputConflict``, ``SweepResult``, ``load_results``, ``sweep``.

``sweep(path, seeds=..., workers=N, dask=ADDRESS, out=DIR)`` is the Python side of
``clearing-sim sweep`` (``seeds`` as ``--seeds`` writes them, ``"0-9,20"``, or ints). It reads
the sweep file, checks that the service accepts each parameter set's set-up before anything
runs (a subscription URL it would refuse is a ``ScenarioInvalid`` at the sweep file's line of
the override that made it, or ``SetupRefused`` at the workload's line if no override did), then
runs each (parameter set, seed) on an executor (``executors``): this
process, local worker processes, or a Dask cluster. With ``out`` every finished run is
written at once (``runs``) and a run already there is read back instead of run again, so an
interrupted sweep resumes where it stopped. The result is ordered by parameter set, then
seed as listed, whatever order the runs finished in, so the results and digests are the same
for any executor and any number of workers. Nothing is written to ``out`` before every check
has passed: the files, the plan already in ``out`` (another version's: ``SweepOutputConflict``),
its finished runs (read back through ``resultfiles``: ``ResultsFileError`` names a damaged
file) and the executor (a Dask scheduler is connected to), so a refused sweep leaves ``out``
as it was.

``out`` holds, besides the runs: ``sweep.json`` (the plan of the sweep last started there,
written before it runs: the sweep and workload files' text, the parameter sets, the seeds, the
version and its command), and once a sweep finishes ``metrics.parquet`` (every run's metrics:
parameter columns, ``seed``, then ``run_metrics``'s columns), ``runs.parquet`` and
``digests.csv`` (one row per run with its digest). A parameter column holds each set's value
at that path in its effective workload (``ParamSet.value``). ``load_results`` answers what the
results files hold; ``SweepResult.unfinished`` names the runs of the plan they lack (a sweep
interrupted after growing its seeds or grid).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
from attrs import define, evolve, field

import clearing_sim
from clearing_sim.analysis.driver import SetupRefused, WorkloadDriver
from clearing_sim.analysis.executors import Executor, executor_for
from clearing_sim.analysis.frames import SCHEMAS, Frames
from clearing_sim.analysis.manifest import (
    MANIFEST_FILE,
    check_results,
    input_file,
    run_manifest,
    sweep_manifest,
    write_manifest,
    write_parquet,
)
from clearing_sim.analysis.metrics import METRIC_COLUMNS
from clearing_sim.analysis.resultfiles import (
    ResultsFileError,
    read_json_object,
    read_plan,
    read_table,
)
from clearing_sim.analysis.runs import (
    RunOutput,
    RunTask,
    execute,
    read_run,
    run_folder,
    write_run,
)
from clearing_sim.analysis.sweepfile import (
    Sweep,
    checked_seeds,
    format_seeds,
    load_sweep,
    override_problem,
)
from clearing_sim.scenario.errors import Problem, ScenarioInvalid
from clearing_sim.scenario.fieldpath import MISSING

__all__ = ["SweepOutputConflict", "SweepResult", "load_results", "sweep"]

FORMAT = 1
Progress = Callable[[int, int], None]
#: The columns of ``runs.parquet`` and ``metrics.parquet`` besides the parameter columns.
_PARAMS_COLUMNS = (("param_id", "str"), ("param_label", "str"), ("case", "str"))
_RUNS_COLUMNS = (*_PARAMS_COLUMNS, ("seed", "int64"), ("digest", "str"),
                 ("transactions", "int64"), ("records", "int64"), ("end_ms", "int64"))
_METRICS_COLUMNS = (*_PARAMS_COLUMNS, ("seed", "int64"), *METRIC_COLUMNS)
_PARAM_ID = re.compile(r"[0-9a-f]{12}")  # sweepfile's: 12 hex digits of a sha256


class SweepOutputConflict(Exception):
    """``out`` holds results this version cannot resume (another version, another format)."""


def _param_columns(sweep: Sweep) -> list[dict[str, str]]:
    columns = []
    for path in sweep.param_paths:
        values = [v for v in (p.value(path) for p in sweep.params) if v is not MISSING]
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        columns.append({"name": path, "dtype": "float64" if numeric else "str"})
    return columns


def _cell(value: Any, dtype: str) -> Any:
    if dtype == "float64" or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _meta(sweep: Sweep, out: Path | None) -> dict[str, Any]:
    columns = _param_columns(sweep)
    params = []
    for p in sweep.params:
        values = [(c, p.value(c["name"])) for c in columns]
        params.append({"param_id": p.param_id, "index": p.index, "case": p.case,
                       "label": p.label,
                       "values": {c["name"]: _cell(value, c["dtype"]) for c, value in values
                                  if value is not MISSING}})
    command = _command(sweep.path, sweep.seeds, out)
    return {"format": FORMAT, "sweep": sweep.name, "description": sweep.description,
            "version": clearing_sim.__version__, "sweepFile": sweep.path,
            "workloadFile": sweep.workload_path, "sweepText": sweep.text,
            "workloadText": sweep.workload_text, "seeds": list(sweep.seeds),
            "frames": list(sweep.frames), "paramColumns": columns, "params": params,
            "out": None if out is None else str(out), "command": command}


def _command(sweep_file: str, seeds: Sequence[int], out: str | Path | None) -> str:
    command = f"clearing-sim sweep {sweep_file} --seeds {format_seeds(seeds)}"
    return command if out is None else f"{command} --out {out}"


def _params_frame(meta: dict[str, Any]) -> pd.DataFrame:
    columns: dict[str, Any] = {
        "param_id": pd.Series([p["param_id"] for p in meta["params"]], dtype="str"),
        "param_label": pd.Series([p["label"] for p in meta["params"]], dtype="str"),
        "case": pd.Series([p["case"] for p in meta["params"]], dtype="str"),
    }
    for column in meta["paramColumns"]:
        name = column["name"]
        columns[name] = pd.Series([p["values"].get(name) for p in meta["params"]],
                                  dtype=column["dtype"])
    return pd.DataFrame(columns)


@define
class SweepResult:
    """A sweep's results: ``metrics`` (one tidy frame), ``runs`` (one row per run with its
    digest), ``params`` (one row per parameter set), and each run's kept frames.

    ``seeds``, ``params`` and ``command`` describe the runs in ``runs``; ``meta`` is the plan
    of the sweep last started in ``out`` (``sweep.json``), which may ask for more
    (``unfinished``)."""

    meta: dict[str, Any]
    metrics: pd.DataFrame
    runs: pd.DataFrame
    out: Path | None = None
    _frames: dict[tuple[str, int], Frames] = field(factory=dict)
    #: the results' manifest (``manifest.sweep_manifest``); None for results on disk written
    #: before manifests existed
    manifest: dict[str, Any] | None = field(default=None, kw_only=True)

    @property
    def name(self) -> str:
        return str(self.meta["sweep"])

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds of the runs in these results, in the order they were listed."""
        return tuple(dict.fromkeys(int(seed) for seed in self.runs["seed"]))

    @property
    def params(self) -> pd.DataFrame:
        """One row per parameter set of the runs in these results (``runs``' columns before
        ``seed``: ``param_id``, ``param_label``, ``case`` and the parameter columns)."""
        columns = list(self.runs.columns[:self.runs.columns.get_loc("seed")])
        return self.runs[columns].drop_duplicates("param_id").reset_index(drop=True)

    @property
    def command(self) -> str:
        """The command that runs these results' runs again (and, with ``out``, finds them)."""
        return _command(self.meta["sweepFile"], self.seeds, self.meta.get("out"))

    @property
    def planned(self) -> tuple[tuple[str, int], ...]:
        """Every (param_id, seed) the plan (``meta``) asks for, in order."""
        return tuple((p["param_id"], int(seed)) for p in self.meta["params"]
                     for seed in self.meta["seeds"])

    @property
    def unfinished(self) -> tuple[tuple[str, int], ...]:
        """The planned runs these results lack: none once the plan's sweep has finished; run
        ``meta["command"]`` to resume."""
        done = set(self.digests)
        return tuple(key for key in self.planned if key not in done)

    @property
    def digests(self) -> dict[tuple[str, int], str]:
        return {(r.param_id, int(r.seed)): r.digest for r in self.runs.itertuples()}

    def frames(self, name: str) -> pd.DataFrame:
        """Frame ``name`` of every run, concatenated, with the parameter columns and ``seed``
        in front (in run order); ``ResultsFileMissing`` if a run on disk did not keep it."""
        assert name in SCHEMAS, f"unknown frame {name!r}; expected one of {tuple(SCHEMAS)}"
        parts = []
        for run in self.runs.itertuples():
            key = (run.param_id, int(run.seed))
            if key in self._frames:
                frame = self._frames[key][name]
            else:
                assert self.out is not None, "frames of an in-memory sweep are kept in memory"
                folder = run_folder(self.out, run.param_id, int(run.seed))
                frame = read_table(folder / f"{name}.parquet", SCHEMAS[name])
            parts.append(frame.assign(param_id=run.param_id, seed=int(run.seed)))
        if not parts:
            return pd.DataFrame()
        joined = pd.concat(_same_categories(parts, name), ignore_index=True)
        return self.params.merge(joined, on="param_id", how="right")[
            [*self.params.columns, "seed", *(c for c, _ in SCHEMAS[name])]]


def _same_categories(parts: list[pd.DataFrame], name: str) -> list[pd.DataFrame]:
    """Frames of one kind from many runs, each ``category`` column given the union of the
    runs' categories (sorted), so that concatenating them keeps it a ``category``."""
    for column in (c for c, dtype in SCHEMAS[name] if dtype == "category"):
        values = {v for part in parts for v in part[column].dropna().unique()}
        dtype = pd.CategoricalDtype(pd.Index(sorted(values), dtype="str"))
        parts = [part.assign(**{column: part[column].astype(dtype)}) for part in parts]
    return parts


def _assemble(meta: dict[str, Any], outputs: dict[tuple[str, int], RunOutput],
              order: Sequence[tuple[str, int]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    params = _params_frame(meta)
    rows = [outputs[key] for key in order]
    runs = pd.DataFrame({
        "param_id": pd.Series([r.param_id for r in rows], dtype="str"),
        "seed": pd.Series([r.seed for r in rows], dtype="int64"),
        "digest": pd.Series([r.digest for r in rows], dtype="str"),
        "transactions": pd.Series([r.transactions for r in rows], dtype="int64"),
        "records": pd.Series([r.records for r in rows], dtype="int64"),
        "end_ms": pd.Series([r.end_ms for r in rows], dtype="int64")})
    runs = params.merge(runs, on="param_id", how="right")
    parts = [r.metrics.assign(param_id=r.param_id, seed=r.seed) for r in rows]
    metrics_columns = [name for name, _ in METRIC_COLUMNS]
    if parts:
        joined = pd.concat(parts, ignore_index=True)
    else:
        joined = pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in METRIC_COLUMNS})
        joined = joined.assign(param_id=pd.Series(dtype="str"), seed=pd.Series(dtype="int64"))
    metrics = params.merge(joined, on="param_id", how="right")
    metrics = metrics[[*params.columns, "seed", *metrics_columns]]
    metrics["seed"] = metrics["seed"].astype("int64")
    return metrics, runs


def _write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    partial = path.with_name(path.name + ".partial")
    write(partial)
    os.replace(partial, path)


def _finished_runs(out: Path, meta: dict[str, Any], order: Sequence[tuple[str, int]],
                   frames: Sequence[str]) -> dict[tuple[str, int], RunOutput]:
    """The runs of ``order`` already finished in ``out``, read back; ``SweepOutputConflict``
    or ``ResultsFileError`` if the sweep cannot resume in ``out``. Writes nothing."""
    if out.exists() and not out.is_dir():
        raise ResultsFileError(out, "expected a folder for the results, found a file")
    previous = out / "sweep.json"
    if previous.exists():  # only its format and version matter: the new plan replaces it
        old = read_json_object(previous)
        if old.get("format") != FORMAT or old.get("version") != meta["version"]:
            raise SweepOutputConflict(
                f"{out} holds results of clearing-sim {old.get('version', '?')} (format "
                f"{old.get('format', '?')}); this is {meta['version']} (format {FORMAT}): "
                "expected another --out, or remove the folder")
    found = {key: read_run(out, *key, frames) for key in order}
    return {key: run for key, run in found.items() if run is not None}


def _write_plan(out: Path, meta: dict[str, Any]) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ResultsFileError(out, f"cannot create the folder: {error.strerror or error}") \
            from None
    _write_atomic(out / "sweep.json", lambda p: p.write_text(json.dumps(meta, indent=1) + "\n",
                                                             encoding="utf-8"))


def _check_setup(sweep: Sweep) -> None:
    """Build each parameter set's world (no run): the API must accept its set-up. A refusal an
    override caused is a problem at the override's line; any other stops at the workload's."""
    problems: list[Problem] = []
    for params in sweep.params:
        try:
            WorkloadDriver(params.workload, sweep.seeds[0] if sweep.seeds else 0)
        except SetupRefused as error:
            # site is "path:line:col: field" (SetupRefused): the field is after the last ": "
            field = error.site.rpartition(": ")[2]
            message = str(error).removeprefix(f"{error.site}: ")
            problem = override_problem(sweep, params, field, message)
            if problem is None:
                raise
            problems.append(problem)
    if problems:
        raise ScenarioInvalid(sweep.path, problems)


def sweep(source: str | Path | Sweep, seeds: str | int | Iterable[int] | None = None, *,
          workers: int = 1, dask: Any = None, out: str | Path | None = None,
          progress: Progress | None = None) -> SweepResult:
    """Run a sweep (a sweep file or a loaded ``Sweep``); see the module docstring.

    ``seeds`` replaces the file's seed list: ``"0-99"``, ``"0-9,20"`` (as ``--seeds``), one
    seed, or seeds; ``workers`` local processes (1: this process);
    ``dask`` a scheduler address or a ``distributed.Client``; ``out`` a folder to write to and
    resume from (without it every run's kept frames stay in memory: give ``out`` for large
    sweeps); ``progress(done, total)`` after each run."""
    plan = source if isinstance(source, Sweep) else load_sweep(source, seeds)
    if seeds is not None and isinstance(source, Sweep):
        plan = evolve(plan, seeds=checked_seeds(seeds))
    _check_setup(plan)
    target = None if out is None else Path(out)
    meta = _meta(plan, target)
    order = [(p.param_id, seed) for p in plan.params for seed in plan.seeds]
    # every check before the first write: a refused sweep leaves ``out`` as it was
    outputs = {} if target is None else _finished_runs(target, meta, order, plan.frames)
    executor = executor_for(workers, dask)  # a Dask scheduler that cannot be reached: here
    workload = input_file(meta["workloadFile"], meta["workloadText"])
    try:
        if target is not None:
            _write_plan(target, meta)
        kept = _run(plan, executor, target, outputs, progress,
                    lambda output: run_manifest(workload, output.param_id, output.seed,
                                                output.digest, output.records,
                                                output.transactions, meta["command"]))
    finally:
        executor.close()
    metrics, runs = _assemble(meta, outputs, order)
    manifest = sweep_manifest(input_file(meta["sweepFile"], meta["sweepText"]), workload, runs,
                              _command(meta["sweepFile"], plan.seeds, target))
    if target is not None:
        _write_results(target, metrics, runs, manifest)
    return SweepResult(meta, metrics, runs, target, kept, manifest=manifest)


def _run(plan: Sweep, executor: Executor, target: Path | None,
         outputs: dict[tuple[str, int], RunOutput], progress: Progress | None,
         manifest: Callable[[RunOutput], dict[str, Any]]) -> dict[tuple[str, int], Frames]:
    """Run the runs of ``plan`` not in ``outputs`` on ``executor``, adding each to
    ``outputs`` (and writing it to ``target`` with its ``manifest``) as it finishes; the
    frames kept in memory."""
    total = len(plan.params) * len(plan.seeds)
    if progress is not None:
        progress(len(outputs), total)
    tasks = [RunTask(p.param_id, seed, p.workload, plan.frames) for p in plan.params
             for seed in plan.seeds if (p.param_id, seed) not in outputs]
    kept: dict[tuple[str, int], Frames] = {}
    for output in executor.map_unordered(execute, tasks):
        key = (output.param_id, output.seed)
        if target is not None:
            write_run(target, output, manifest(output))
        elif output.frames is not None:
            kept[key] = output.frames
        outputs[key] = output
        if progress is not None:
            progress(len(outputs), total)
    return kept


def _write_results(out: Path, metrics: pd.DataFrame, runs: pd.DataFrame,
                   manifest: dict[str, Any]) -> None:
    def digests(path: Path) -> None:
        runs[["param_id", "seed", "digest"]].to_csv(path, index=False)

    _write_atomic(out / "metrics.parquet", lambda p: write_parquet(metrics, p, manifest))
    _write_atomic(out / "runs.parquet", lambda p: write_parquet(runs, p, manifest))
    _write_atomic(out / "digests.csv", digests)
    _write_atomic(out / MANIFEST_FILE, lambda p: write_manifest(p, manifest))


def load_results(out: str | Path) -> SweepResult:
    """The results of the last sweep that finished in ``out`` (what ``clearing-sim report``
    reads), with the plan of the last one started there as ``meta``: if that one did not
    finish, ``unfinished`` lists the runs the results lack. ``ResultsFileError`` names a file
    that cannot be used (``ResultsFileMissing`` one that is not there)."""
    folder = Path(out)
    meta = read_plan(folder)
    metrics = read_table(folder / "metrics.parquet", _METRICS_COLUMNS)
    path = folder / "runs.parquet"
    runs = read_table(path, _RUNS_COLUMNS)
    # a run's id names its folder: one of another form would lead ``frames`` anywhere
    wrong = [value for value in runs["param_id"]
             if not isinstance(value, str) or _PARAM_ID.fullmatch(value) is None]
    if wrong:
        raise ResultsFileError(path, "expected parameter set ids of 12 hex digits, found "
                               f"{str(wrong[0])[:40]!r}", "param_id")
    manifest = check_results(folder, [run_folder(folder, r.param_id, int(r.seed))
                                      for r in runs.itertuples()])
    return SweepResult(meta, metrics, runs, folder, manifest=manifest)
