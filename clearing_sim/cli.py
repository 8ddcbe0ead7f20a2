"""The command line: a click group; each command decodes, calls one function, prints.

Public names: ``main``.

``run``, ``validate`` and ``timeline`` import the scenario engine when they are invoked, with
the garbage collector off until it is imported and its objects frozen after
(``commands.collector``); ``--help`` imports only click.

Commands that pull in heavy packages (the HTTP shim, the analysts' sweeps) live beside their
door and are imported only when invoked: ``LAZY_COMMANDS`` maps a command name to
``module:attribute`` of a ``click.Command``. A command whose extra is not installed is still
listed, and refuses with the extra to install (``clearing_sim.commands.extras``). ``--help``
lists the lazy commands from ``LAZY_SUMMARIES`` (each the first line of the command's help,
a test keeps them equal) and ``LAZY_EXTRAS``, so the group's help and ``run`` never import
pandas, matplotlib, dask, pyarrow, Starlette or uvicorn.
"""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import click

from clearing_sim.commands.collector import imports_frozen
from clearing_sim.commands.extras import MissingExtra, require
from clearing_sim.commands.terminal import colour_wanted as _colour

if TYPE_CHECKING:
    from clearing_sim.scenario.errors import ScenarioError
    from clearing_sim.scenario.model import Scenario
    from clearing_sim.scenario.reports import Outcome
    from clearing_sim.scenario.stage import Stage

__all__ = ["main"]


#: name -> "module:attribute" of a click command, imported on first use.
LAZY_COMMANDS: dict[str, str] = {
    "serve": "clearing_sim.http.cli:serve",
    "journal": "clearing_sim.http.journal_cli:journal",
    "conformance": "clearing_sim.conformance.cli:conformance",
    "receiver": "clearing_sim.conformance.cli:receiver",
    "workload": "clearing_sim.analysis.cli:workload",
    "sweep": "clearing_sim.analysis.cli:sweep",
    "report": "clearing_sim.analysis.cli:report",
    "issuer": "clearing_sim.gateway.cli:issuer",
}

#: name -> the first line of the lazy command's help, as ``--help`` lists it.
LAZY_SUMMARIES: dict[str, str] = {
    "serve": "Serve the API over HTTP on a simulated world whose clock you drive.",
    "conformance": "Conformance kits: point one at your endpoint, get a verdict per check.",
    "receiver": "Reference webhook receivers, as real HTTP servers.",
    "issuer": "The issuer side: a reference issuer gateway and the certificates it needs.",
    "journal": "Read a request journal written by clearing-sim serve --journal.",
    "workload": "Run one workload file under one seed; print its key figures and digest.",
    "sweep": "Run a sweep: every parameter set of FILE × every seed; results as Parquet in --out.",
    "report": "Write a self-contained HTML report of the sweep results in FOLDER.",
}

#: name -> the extra a lazy command's package requires (``clearing_sim.commands.extras``).
LAZY_EXTRAS: dict[str, str] = {"workload": "analysis", "sweep": "analysis", "report": "analysis"}


def _needs_extra(name: str, missing: MissingExtra) -> click.Command:
    """What stands for a command whose extra is not installed: listed, explained, refused."""
    def refuse(args: tuple[str, ...]) -> None:
        raise click.ClickException(str(missing))

    return click.Command(name, callback=refuse, context_settings={"ignore_unknown_options": True},
                         params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
                         help=f"(needs the '{missing.extra}' extra: python -m pip install "
                              f"'clearing-sim[{missing.extra}]') {missing}",
                         short_help=f"(not installed: needs the '{missing.extra}' extra)")


def _listed(name: str) -> click.Command | None:
    """A lazy command as ``--help`` lists it, without importing it (None: not known here)."""
    summary = LAZY_SUMMARIES.get(name)
    if summary is None:
        return None
    extra = LAZY_EXTRAS.get(name)
    if extra is not None:
        try:
            require(extra, f"clearing-sim {name}")
        except MissingExtra as missing:
            return _needs_extra(name, missing)
    return click.Command(name, help=summary)


class _LazyGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        """Every command; what the system refuses it (an output path under /proc, a full
        disk, a folder that vanished) is a sentence and exit 2, never a traceback."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # a reader that went away (| head): click's own handling
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            click.echo(f"clearing-sim: {where}{error.strerror or error} (the system's "
                       "answer; nothing after it was done)", err=True)
            raise click.exceptions.Exit(2) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY_COMMANDS])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            module, _, attribute = LAZY_COMMANDS[cmd_name].partition(":")
            try:
                command = getattr(importlib.import_module(module), attribute)
            except MissingExtra as missing:
                return _needs_extra(cmd_name, missing)
            assert isinstance(command, click.Command), LAZY_COMMANDS[cmd_name]
            return command
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list, without importing a lazy command (its summary stands in, or
        what says its extra is missing)."""
        rows = []
        for name in self.list_commands(ctx):
            command = _listed(name) or self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit))
                                    for name, command in rows])


@click.group(cls=_LazyGroup)
@click.version_option(package_name="clearing-sim")
def main() -> None:
    """clearing-sim: a deterministic simulator of a stablecoin clearing service."""


@main.command()
@click.option("--seed", type=int, default=0, show_default=True, help="The run's seed.")
@click.option("--log", "log_file", type=click.File("w", encoding="utf-8", lazy=False),
              help="Write the event log as JSON lines to this file.")
def demo(seed: int, log_file: TextIO | None) -> None:
    """Run one transaction along every path the spec names, in all three settlement modes.

    \b
    Example:
      clearing-sim demo --seed 7 --log reports/demo.jsonl
    """
    from clearing_sim.commands.demo import (
        run_demo,  # only this command runs it (start-up: issue 30)
    )

    world, results = run_demo(seed)
    colour = _colour()
    for result in results:
        tx = result.transaction
        state = tx.lifecycle_status.value + (" (parked)" if tx.parked else "")
        took_s = (tx.updated_at_ms - tx.initiated_at_ms) / 1000
        fg = {"settled": "green", "cancelled": "yellow"}.get(tx.lifecycle_status.value, "red")
        click.echo(f"{result.case.name:<40} "
                   + click.style(f"{state:<18}", fg=fg if colour else None)
                   + f" chain={tx.chain.value:<19} rtgs={tx.rtgs.value:<9} "
                   f"{took_s:>10.3f} s virtual")
    click.echo(f"events {len(world.log)}  virtual end {world.iso()}  digest {world.log.digest()}")
    if log_file is not None:
        world.log.write_jsonl(log_file)
        click.echo(f"event log written to {log_file.name}")


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
def validate(paths: tuple[str, ...]) -> None:
    """Check scenario files without running them: YAML, schema, names, ${references}.

    PATH is a scenario file or a folder (every *.yaml and *.yml inside, sorted). Prints
    "PATH: ok" per valid file and "PATH:LINE:COL: FIELD: MESSAGE" per problem. Exit code 0
    when every file is valid, 2 when any is invalid or cannot be read.

    \b
    Example:
      clearing-sim validate scenarios/
      clearing-sim validate scenarios/silence-parks-exactly-at-sla.yaml
    """
    imported = click.get_current_context().with_resource(imports_frozen())
    from clearing_sim.scenario.loader import validate_paths
    imported()

    checks = validate_paths(paths)
    colour = _colour()
    for check in checks:
        for line in check.lines():
            click.echo(click.style(line, fg="green" if check.ok else "red") if colour else line)
    if not all(check.ok for check in checks):
        click.get_current_context().exit(2)


# run -----------------------------------------------------------------------------------------
class _Jobs(click.ParamType):  # type: ignore[type-arg]
    """A count of processes: a whole number from 1, or ``auto``."""

    name = "jobs"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        if isinstance(value, int) and value >= 1:
            return value
        if str(value).strip().lower() == "auto":
            from clearing_sim.commands.forks import default_jobs

            return default_jobs()
        try:
            count = int(str(value))
        except ValueError:
            count = 0
        if count < 1:
            self.fail(f"{value!r} is neither a whole number from 1 nor 'auto'", param, ctx)
        return count


_JOBS = _Jobs()


def _log_target(base: Path, scenario: Scenario, several: bool) -> Path:
    return base.with_name(f"{base.stem}.{Path(scenario.path).stem}{base.suffix}") if several \
        else base


def _styled(text: str, colour: bool, **style: str) -> str:
    return click.style(text, **style) if colour else text  # type: ignore[arg-type]


def _echo_outcome(outcome: Outcome, colour: bool) -> None:
    from clearing_sim.scenario.reports import failure_lines
    from clearing_sim.scenario.results import duration_text

    r = outcome.result
    mark = _styled("PASS", colour, fg="green") if r.passed else \
        _styled("FAIL", colour, fg="red", bold="true")
    click.echo(f"{mark}  {r.name}  ({r.path})  virtual {duration_text(r.virtual_ms)}, "
               f"wall {outcome.wall_s * 1000:.0f} ms, seed {r.seed}, digest {r.digest[:16]}")
    for line in failure_lines(r):
        click.echo(f"      {_styled(line, colour, fg='red') if 'expected' in line else line}")


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--seed", type=int, help="Replace every file's world.seed with this seed.")
@click.option("-k", "keyword", metavar="TEXT",
              help="Run only scenarios whose name or path contains TEXT, or tagged TEXT.")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="Write JUnit XML: a testsuite per scenario, a testcase per expectation "
              "(named by step and field), an <error> per invalid file.")
@click.option("--log", "log_file", type=click.Path(dir_okay=False, writable=True),
              metavar="FILE.jsonl", help="Write the event log as canonical JSON lines (with "
              "several scenarios: FILE.<scenario>.jsonl each).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON document instead of text.")
@click.option("--html", "html_dir", type=click.Path(file_okay=False, writable=True),
              metavar="OUTDIR", help="Write a self-contained HTML page per scenario (its "
              "verdicts on its transactions' time axes) and OUTDIR/index.html.")
@click.option("-j", "--jobs", type=_JOBS, default="auto", show_default=True, metavar="N|auto",
              help="Load and play the files in N processes (auto: one per processor this "
              "process may use). Output, digests and files written are the same for any N.")
def run(paths: tuple[str, ...], seed: int | None, keyword: str | None,
        junit_file: str | None, log_file: str | None, as_json: bool,
        html_dir: str | None, jobs: int) -> None:
    """Run scenario files and check their expectations, on virtual time.

    PATH is a scenario file or a folder (every *.yaml and *.yml inside, sorted). Prints one
    line per scenario (PASS/FAIL, name, virtual time covered, wall time, seed, digest) and,
    for a failure, each failed expectation as FILE:LINE:COL: FIELD: expected X, got Y, with
    the command that replays it. The last line sums up, with a digest of the whole run: the
    same files and seeds give the same digests in any process.

    \b
    Exit codes, the first that applies:
      2  bad input: a file or folder that is missing, unreadable or invalid (nothing runs),
         or a bad option
      1  an expectation failed, or a step could not be carried out
      0  every expectation of every scenario held

    \b
    Examples:
      clearing-sim run scenarios/
      clearing-sim run scenarios/silence-parks-exactly-at-sla.yaml --seed 8
      clearing-sim run scenarios/ -k webhook --junit reports/junit.xml --log run.jsonl
      clearing-sim run scenarios/ --html reports/html
    """
    imported = click.get_current_context().with_resource(imports_frozen())
    from clearing_sim.scenario.batch import Batch
    from clearing_sim.scenario.reports import Outcome, combined_digest, junit_xml, to_json
    from clearing_sim.scenario.runner import play
    imported()

    def play_one(scenario: Scenario, count: int) -> tuple[Outcome, str | None]:
        started = time.perf_counter()
        result, stage = play(scenario, seed, clock=time.perf_counter)
        outcome = Outcome(result, time.perf_counter() - started, stage.step_wall_s)
        if log_file is not None:
            _write_log(stage, _log_target(Path(log_file), scenario, count > 1))
        page = _write_page(Path(html_dir), result, stage) if html_dir is not None else None
        return outcome, page

    colour = _colour() and not as_json
    with Batch(paths, play_one, keyword=keyword, jobs=jobs) as batch:
        errors = batch.load()
        if errors:
            _refuse(errors, junit_file, as_json, colour)
        outcomes = []
        pages: list[tuple[Any, str]] = []
        for outcome, page in batch.results():
            outcomes.append(outcome)
            if page is not None:
                pages.append((outcome.result, page))
            if not as_json:
                _echo_outcome(outcome, colour)
    if html_dir is not None:
        from clearing_sim.stories.html_report import index_page
        (Path(html_dir) / "index.html").write_text(index_page(pages), encoding="utf-8")
    if junit_file is not None:
        Path(junit_file).write_bytes(junit_xml(outcomes))
    results = [o.result for o in outcomes]
    failed = sum(not r.passed for r in results)
    if as_json:
        click.echo(json.dumps(to_json(outcomes), indent=2))
    else:
        wall = sum(o.wall_s for o in outcomes)
        summary = (f"{len(results)} scenario(s): {len(results) - failed} passed, {failed} failed;"
                   f" wall {wall:.2f} s; digest {combined_digest(results)}")
        click.echo(_styled(summary, colour, fg="red" if failed else "green"))
    raise SystemExit(1 if failed else 0)


def _refuse(errors: list[ScenarioError], junit_file: str | None, as_json: bool,
            colour: bool) -> NoReturn:
    """Files with problems: each problem said (or the JSON of them), exit 2, nothing run."""
    from clearing_sim.scenario.reports import errors_json, junit_xml

    if junit_file is not None:
        Path(junit_file).write_bytes(junit_xml([], errors))
    if as_json:
        click.echo(json.dumps(errors_json(errors), indent=2))
        raise SystemExit(2)
    for error in errors:
        for line in error.lines():
            click.echo(_styled(line, colour, fg="red"), err=True)
    click.echo(f"{len(errors)} file(s) with problems; nothing was run", err=True)
    raise SystemExit(2)


def _write_page(folder: Path, result: Any, stage: Stage,
                transaction_ids: list[str] | None = None, target: Path | None = None) -> str:
    """The scenario's HTML page in ``folder`` (or at ``target``); its file name."""
    from clearing_sim.stories.html_report import page_name, scenario_page
    page = scenario_page(result, stage, _file_names(stage), transaction_ids)
    if target is None:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / page_name(result)
    target.write_text(page, encoding="utf-8")
    return target.name


def _write_log(stage: Stage, target: Path) -> None:
    with target.open("w", encoding="utf-8") as out:
        stage.world.log.write_jsonl(out)


# timeline ------------------------------------------------------------------------------------
def _file_names(stage: Stage) -> dict[str, str]:
    """id → the name the scenario file uses: participants (and their wallets), webhooks,
    agents, and the saved values that are transaction ids."""
    names: dict[str, str] = {}
    for key, party in stage.parties.items():
        names[party.id] = key
        for account in party.wallets.values():
            names[account] = f"{key}'s wallet"
    for key, hook in stage.webhooks.items():
        names[hook["id"]] = f"webhook {key}"
    for key, agent in stage.agents.items():
        names[agent["id"]] = f"agent {key}"
    for key, value in stage.saved.items():
        if isinstance(value, str) and value in stage.world.transactions:
            names.setdefault(value, key)
    return names


@main.command()
@click.argument("path", metavar="FILE")
@click.option("--transaction", "name", required=True, metavar="NAME",
              help="A name the scenario saves (tx) or a transaction id.")
@click.option("--seed", type=int, help="Replace the file's world.seed with this seed.")
@click.option("--polls", is_flag=True, help="Also show every status poll of the issuer.")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True),
              metavar="FILE", help="Also write the story as a self-contained HTML page "
              "(the console's view, with the scenario's verdicts on the time axis).")
def timeline(path: str, name: str, seed: int | None, polls: bool,
             html_file: str | None) -> None:
    """Run a scenario and print one transaction's story in virtual time.

    Saga steps, issuer instructions and their statuses, ledger and RTGS actions, and every
    webhook event with each delivery attempt and its outcome, one line each: time since
    initiation, ISO time, lane, what happened. Exit 2 for a bad file or an unknown NAME.

    \b
    Example:
      clearing-sim timeline scenarios/webhook-retry-schedule.yaml --transaction tx
      clearing-sim timeline scenarios/webhook-retry-schedule.yaml --transaction tx --html tx.html
    """
    imported = click.get_current_context().with_resource(imports_frozen())
    from clearing_sim.scenario.errors import ScenarioError
    from clearing_sim.scenario.loader import load_scenario
    from clearing_sim.scenario.runner import play
    imported()

    try:
        scenario = load_scenario(path)
    except ScenarioError as error:
        for line in error.lines():
            click.echo(line, err=True)
        raise SystemExit(2) from None
    result, stage = play(scenario, seed)
    saved = stage.saved.get(name, name)
    transaction_id = str(saved)
    if stage.world.transactions.get(transaction_id) is None:
        known = sorted(k for k, v in stage.saved.items()
                       if stage.world.transactions.get(str(v)) is not None)
        raise click.BadParameter(f"{name!r} is neither a saved name of a transaction nor a "
                                 f"transaction id of this run; saved transactions: "
                                 f"{', '.join(known) or '(none)'}", param_hint="--transaction")
    tx = stage.world.transactions[transaction_id]
    names = _file_names(stage)
    shown = f"{names[transaction_id]} ({transaction_id})" if transaction_id in names \
        else transaction_id
    click.echo(f"{scenario.name}: transaction {shown} ({tx.use_case.value}, "
               f"payment reference {tx.payment_reference}), seed {result.seed}")
    from clearing_sim.stories.timeline import render_story, transaction_story  # this command's only

    for line in render_story(stage.world, transaction_story(stage.world, transaction_id,
                                                            polls=polls, names=names)):
        click.echo(line)
    if html_file is not None:
        _write_page(Path(html_file).parent, result, stage, [transaction_id], Path(html_file))
    state = tx.lifecycle_status.value + (" (parked)" if tx.parked else "")
    click.echo(f"now {stage.world.iso()}: {state}; scenario "
               f"{'passed' if result.passed else 'FAILED'}; digest {result.digest}")


if __name__ == "__main__":  # python -m clearing_sim.cli
    main()
