"""The command line: a click group; each command decodes, calls one function, prints.

Public names: ``main``.
"""

from __future__ import annotations

import sys
from typing import TextIO

import click

from clearing_sim.demo import run_demo
from clearing_sim.scenario.loader import validate_paths

__all__ = ["main"]


@click.group()
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
    world, results = run_demo(seed)
    colour = sys.stdout.isatty()
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
      clearing-sim validate scenarios/silence-parks-at-sla.yaml
    """
    checks = validate_paths(paths)
    colour = sys.stdout.isatty()
    for check in checks:
        for line in check.lines():
            click.echo(click.style(line, fg="green" if check.ok else "red") if colour else line)
    if not all(check.ok for check in checks):
        click.get_current_context().exit(2)
