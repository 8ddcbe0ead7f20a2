"""The analysts' commands: ``workload``, ``sweep`` and ``report`` (click commands).

Public names: ``report``, ``sweep``, ``workload``.

Each command decodes its arguments, calls one function of this package, prints. The main
group (``clearing_sim.cli``) imports this module only when one of these commands is invoked.
Bad input — a workload or sweep file with problems, malformed ``--seeds``, an output folder of
another version or with a damaged file, a Dask scheduler that cannot be reached, a set-up the
API refuses, results whose manifests mix versions or inputs — prints what is wrong
(``path:line:col: field: message`` for input files, ``FOLDER/FILE: field: message`` for
results) and exits with code 2, never a traceback; a refused sweep has written nothing.
Progress bars go to stderr on a terminal only (``progress``): piped, stdout holds the results
alone. A report goes inside the results folder unless a path is given.
"""

from __future__ import annotations

import shlex
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from clearing_sim.analysis.driver import SetupRefused
from clearing_sim.analysis.frames import FRAME_NAMES
from clearing_sim.analysis.gatecheck import (
    GateVerdict,
    check_sweep,
    check_workload,
    sweep_gates,
    workload_gates,
)
from clearing_sim.analysis.loader import load_workload, read_text
from clearing_sim.analysis.manifest import (
    MANIFEST_FILE,
    ManifestMissing,
    input_file,
    workload_manifest,
    write_manifest,
    write_parquet,
)
from clearing_sim.analysis.progress import terminal_bar
from clearing_sim.analysis.promote import (
    DEFAULT_TOLERANCE,
    PromoteRefused,
    parse_tolerance,
    promote,
)
from clearing_sim.analysis.report import write_report
from clearing_sim.analysis.resultfiles import ResultsFileError, read_plan
from clearing_sim.analysis.runs import run_workload
from clearing_sim.analysis.sweepfile import SEED_MAX, format_seeds, load_sweep, parse_seeds
from clearing_sim.analysis.sweeps import SweepOutputConflict
from clearing_sim.analysis.sweeps import sweep as run_sweep
from clearing_sim.commands.stopping import Terminated, sigint_ignored, term_as_interrupt
from clearing_sim.scenario.errors import ScenarioError

__all__ = ["report", "sweep", "workload"]


@contextmanager
def _bad_input() -> Iterator[None]:
    """Turn the package's bad-input errors into messages and exit code 2."""
    try:
        yield
    except ScenarioError as error:
        for line in error.lines():
            click.echo(line, err=True)
        raise click.exceptions.Exit(2) from None
    except (SetupRefused, SweepOutputConflict, ResultsFileError, PromoteRefused) as error:
        click.echo(f"Error: {error}", err=True)
        raise click.exceptions.Exit(2) from None


def _seeds(ctx: click.Context, param: click.Parameter,
           value: str | None) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        return parse_seeds(value)
    except ValueError as error:
        raise click.BadParameter(str(error), ctx, param) from None


def _gates_end(verdict: GateVerdict, junit: Path | None) -> None:
    """Print the gates' verdict, write ``--junit``; exit 1 if a gate missed."""
    for line in verdict.lines():
        click.echo(line)
    if junit is not None:
        verdict.write_junit(junit)
        click.echo(f"gates' JUnit XML written to {junit}")
    if not verdict.passed:
        raise click.exceptions.Exit(1)


_JUNIT_HELP = "Write the gates' verdicts as JUnit XML (a testcase per gate and parameter set)."


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=click.IntRange(min=0, max=SEED_MAX),
              help="The run's seed  [default: the file's seed, else 0]")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write the run's frames and metrics as Parquet files to this folder.")
@click.option("--log", "log_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the event log as JSON lines to this file.")
@click.option("--stream", is_flag=True,
              help="Write the log to --log as the run goes and forget finished transactions, "
                   "so a long run's memory stays flat; the frames are then read from the file.")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), help=_JUNIT_HELP)
def workload(file: Path, seed: int | None, out: Path | None, log_file: Path | None,
             stream: bool, junit: Path | None) -> None:
    """Run one workload file under one seed; print its key figures and digest.

    \b
    Example:
      clearing-sim workload notebooks/inputs/mixed.yaml --seed 3 --out results/mixed-3
      clearing-sim workload long.yaml --log long.jsonl --stream
    """
    if stream and log_file is None:
        raise click.UsageError("--stream writes the log to a file as the run goes: give --log")
    with _bad_input():
        loaded = load_workload(file)
        gates = workload_gates(loaded)  # a bad gate stops before the run
    seed = loaded.data.get("seed", 0) if seed is None else seed
    end_ms = loaded.horizon_ms + (loaded.drain_ms or 0)
    describe = _workload_progress(loaded.horizon_ms)
    with _bad_input(), terminal_bar("virtual time", end_ms, describe) as bar:
        # only what the figures need, unless the frames are written
        run = run_workload(loaded, seed, frames=FRAME_NAMES if out is not None else (),
                           log=log_file, stream=stream,
                           progress=None if bar is None else lambda now, n: bar(now, now, n))
    tx = run.transactions
    click.echo(f"workload {run.workload.name}  seed {seed}  transactions {len(tx)}  "
               f"records {run.records}  virtual end {run.end_ms / 3_600_000:.2f} h")
    for status, count in tx["lifecycle_status"].value_counts().sort_index().items():
        click.echo(f"  {status:<10} {count}")
    metrics = run.metrics
    for mode in sorted(tx["mode"].dropna().unique()):
        rows = metrics[(metrics["mode"] == mode) & metrics["use_case"].isna()
                       & metrics["cause"].isna()]
        values = {row.metric: row.value for row in rows.itertuples()}
        nan = float("nan")
        percentiles = "  ".join(f"p{q} {values.get(f'settlement_latency_p{q}_s', nan):.1f} s"
                                for q in (50, 95, 99))
        click.echo(f"  Mode {mode}: {percentiles}  parked "
                   f"{values.get('parking_rate', float('nan')):.2%}")
    if out is not None:
        manifest = workload_manifest(
            input_file(file, read_text(file)), seed, run.digest, run.records, len(tx),
            _workload_command(file, seed, out, log_file, stream))
        run.frames.to_parquet(out, manifest)
        write_parquet(run.metrics, out / "metrics.parquet", manifest)
        write_manifest(out / MANIFEST_FILE, manifest)
        click.echo(f"frames, metrics and {MANIFEST_FILE} written to {out}")
    if log_file is not None:
        click.echo(f"event log written to {log_file}")
    click.echo(f"digest {run.digest}")
    _gates_end(check_workload(gates, run.metrics, seed, loaded), junit)


def _workload_command(file: Path, seed: int, out: Path, log_file: Path | None,
                      stream: bool) -> str:
    """The command that makes a workload run's outputs again, as it was given."""
    words = ["clearing-sim", "workload", str(file), "--seed", str(seed), "--out", str(out)]
    if log_file is not None:
        words += ["--log", str(log_file), *(["--stream"] if stream else [])]
    return shlex.join(words)


def _workload_progress(horizon_ms: int) -> Callable[[int, int], str]:
    def describe(now_ms: int, initiated: int) -> str:
        return f"{now_ms / 3_600_000:.1f} h virtual (arrivals until " \
               f"{horizon_ms / 3_600_000:.1f} h), " \
               f"{initiated:,} transactions"
    return describe


def _resume_command(file: Path, seeds: tuple[int, ...] | None, workers: int,
                    dask_address: str | None, out: Path) -> str:
    """The command that carries on an interrupted sweep: the plan's (``sweep.json``), with
    this invocation's executor."""
    try:
        command = str(read_plan(out)["command"])
    except ResultsFileError:
        words = ["clearing-sim", "sweep", str(file)]
        if seeds is not None:
            words += ["--seeds", format_seeds(seeds)]
        command = shlex.join([*words, "--out", str(out)])
    if dask_address is not None:
        return f"{command} --dask {shlex.quote(dask_address)}"
    return f"{command} --workers {workers}" if workers > 1 else command


class _SweepCommand(click.Command):
    """``sweep FILE …`` runs a sweep; ``sweep promote …`` runs ``promote`` instead (a sweep
    file named ``promote`` is ``./promote``)."""

    _KEY = "clearing_sim.sweep.promote"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args[:1] == ["promote"]:
            ctx.meta[self._KEY] = args[1:]
            return []
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        rest = ctx.meta.pop(self._KEY, None)
        if rest is None:
            return super().invoke(ctx)
        # (no parent: a parent command's usage would put its FILE in this one's)
        with promote_command.make_context(f"{ctx.command_path} promote", rest) as sub:
            return promote_command.invoke(sub)


@click.command(cls=_SweepCommand)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seeds", callback=_seeds, metavar="SEEDS",
              help="Seeds to run, e.g. 0-99 or 0-9,20 (replaces the sweep file's seeds).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Local worker processes (1: this process).")
@click.option("--dask", "dask_address", metavar="ADDRESS",
              help="Run on the Dask scheduler at ADDRESS (e.g. tcp://10.0.0.5:8786) instead.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for the results; finished runs found there are not run again.")
@click.option("--report", "report_file", is_flag=False, flag_value="", default=None,
              metavar="[FILE]", type=click.Path(dir_okay=True, path_type=str),
              help="Then write the HTML report too (as clearing-sim report OUT does): to FILE, "
                   "or OUT/report.html without one.")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), help=_JUNIT_HELP)
def sweep(file: Path, seeds: tuple[int, ...] | None, workers: int, dask_address: str | None,
          out: Path, report_file: str | None, junit: Path | None) -> None:
    """Run a sweep: every parameter set of FILE × every seed; results as Parquet in --out.

    Interrupted sweeps resume: Ctrl-C prints the command that carries on (the same one).
    The results and digests are the same whatever the executor and the number of workers.

    \b
    Example:
      clearing-sim sweep notebooks/inputs/latency_sweep.yaml --seeds 0-99 --workers 2 \\
          --out results/latency
      clearing-sim report results/latency
      clearing-sim sweep reports/baseline/sweep.yaml --out reports/baseline/results \\
          --report reports/baseline.html

    The file's gates are checked on the results: a missed gate exits 1. One cell of the
    results becomes a workload file with its figures pinned as gates with
    `clearing-sim sweep promote RESULTS --param ID --seed S` (see its --help).
    """
    with _bad_input():  # the files (and their gates) are read before anything runs
        plan = load_sweep(file, seeds)
        gates = sweep_gates(plan)
    state = {"done": 0}
    if sigint_ignored():
        click.echo("note: Ctrl-C cannot stop this sweep (it was started in the background "
                   "without job control); `kill PID` stops it the same way, keeping the "
                   "finished runs and printing the command that resumes it", err=True)
    try:  # outside term_as_interrupt: a signal pending while blocked is raised as it enters
        with _bad_input(), term_as_interrupt(), terminal_bar("runs", 1) as bar:
            def progress(done: int, total: int) -> None:
                if bar is not None:
                    bar(done, total=total)
                state["done"] = done

            try:
                result = run_sweep(plan, workers=workers, dask=dask_address, out=out,
                                   progress=progress)
            except (OSError, ValueError) as error:
                if dask_address is None:
                    raise
                click.echo(f"\nError: cannot use the Dask scheduler at {dask_address}: "
                           f"{error}", err=True)
                raise click.exceptions.Exit(2) from None
    except KeyboardInterrupt as stop:
        how = "terminated" if isinstance(stop, Terminated) else "interrupted"
        click.echo(f"\n{how} after {state['done']} run(s); the finished ones are "
                   f"kept in {out}; resume with:\n  "
                   f"{_resume_command(file, seeds, workers, dask_address, out)}", err=True)
        raise click.exceptions.Exit(143 if isinstance(stop, Terminated) else 130) from None
    click.echo(f"sweep {result.name}: {len(result.params)} parameter set(s) × "
               f"{len(result.seeds)} seed(s) = {len(result.runs)} runs; results in {out}")
    click.echo(f"  metrics.parquet ({len(result.metrics)} rows), runs.parquet, digests.csv, "
               "runs/<param_id>/seed-<seed>/")
    if report_file is not None:
        with _bad_input():  # a kept frame of a run resumed, not read until now, may be damaged
            path = write_report(out, Path(report_file) if report_file else None)
        click.echo(f"report written to {path}")
    else:
        click.echo(f"report: clearing-sim report {out}")
    _gates_end(check_sweep(gates, result.metrics, plan), junit)


@click.command("promote")
@click.argument("results", type=click.Path(file_okay=False, path_type=Path))
@click.option("--param", "param_id", required=True, metavar="ID",
              help="The parameter set's id (param_id in the results' tables and report).")
@click.option("--seed", type=click.IntRange(min=0, max=SEED_MAX), required=True,
              help="The run's seed.")
@click.option("--tolerance", default=DEFAULT_TOLERANCE, show_default=True,
              help="Each figure's band, ± this percentage of it (0 pins figures exactly).")
@click.option("--out", "target", type=click.Path(dir_okay=False, path_type=Path),
              help="The workload file to write (default: print it).")
def promote_command(results: Path, param_id: str, seed: int, tolerance: str,
                    target: Path | None) -> None:
    """Write a workload file for one run of the sweep results in RESULTS: its parameter
    set and seed, with every figure of that run pinned as a gate within --tolerance, so
    `clearing-sim workload FILE` checks the finding in CI (exit 1 if a figure moved).

    \b
    Example:
      clearing-sim sweep promote results/latency --param 3f2a9c1b0d4e --seed 7 \\
          --out checks/slow-etherpound.yaml
      clearing-sim workload checks/slow-etherpound.yaml
    """
    try:
        share = parse_tolerance(tolerance)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--tolerance") from None
    words = ["clearing-sim", "sweep", "promote", str(results), "--param", param_id,
             "--seed", str(seed), "--tolerance", tolerance]
    if target is not None:
        words += ["--out", str(target)]
    with _bad_input():
        text = promote(results, param_id, seed, share, command=shlex.join(words))
    if target is None:
        click.echo(text, nl=False)
        return
    target.write_text(text, encoding="utf-8")
    click.echo(f"workload file written to {target}; check it with: clearing-sim workload "
               f"{shlex.quote(str(target))}", err=True)


@click.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", "target", type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write (default: FOLDER/report.html).")
def report(folder: Path, target: Path | None) -> None:
    """Write a self-contained HTML report of the sweep results in FOLDER.

    \b
    Example:
      clearing-sim report results/latency --out reports/latency.html
    """
    if not (folder / "sweep.json").is_file():
        raise click.BadParameter(f"{folder} holds no finished sweep (sweep.json and "
                                 "metrics.parquet); expected the --out folder of "
                                 "clearing-sim sweep", param_hint="FOLDER")
    with _bad_input():
        if not (folder / "metrics.parquet").exists():
            raise click.BadParameter(f"the sweep started in {folder} has not finished; resume "
                                     f"it with: {read_plan(folder)['command']}",
                                     param_hint="FOLDER")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ManifestMissing)
            path = write_report(folder, target)
        for warning in caught:
            if issubclass(warning.category, ManifestMissing):
                click.echo(f"warning: {warning.message}", err=True)
            else:  # not ours: as Python would have shown it
                warnings.showwarning(warning.message, warning.category, warning.filename,
                                     warning.lineno)
    click.echo(f"report written to {path}")
