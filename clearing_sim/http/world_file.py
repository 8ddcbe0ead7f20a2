"""A world file, read for ``clearing-sim serve --world`` and ``clearing-sim journal``.

Public names: ``load_world``, ``load_world_or_exit``.

A world file is a scenario file whose steps are not run: ``load_world`` parses it (a name
and an empty step are supplied when left out, after the last line, so every problem keeps
its line number); ``load_world_or_exit`` is the same for a command, its problems on stderr
(``file:line`` each) and exit 2. Both doors (``http.cli``, ``http.journal_cli``) read world
files here, so neither imports the other for it.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.scenario.loader import parse_scenario, read_bounded
from clearing_sim.scenario.model import Scenario

__all__ = ["load_world", "load_world_or_exit"]


def load_world_or_exit(path: str) -> Scenario:
    """``load_world`` for a command: its problems on stderr, ``file:line`` each, exit 2."""
    try:
        return load_world(path)
    except ScenarioError as error:
        for line in error.lines():
            click.echo(line, err=True)
        raise click.exceptions.Exit(2) from None


def load_world(path: str) -> Scenario:
    """A world file: a scenario file whose steps are not run. ``scenario:`` and ``steps:``
    may be left out (a name and an empty step are supplied after the last line, so every
    problem keeps its line number). ``ScenarioError`` if it cannot be used."""
    file = Path(path)
    if not file.exists():
        raise ScenarioError(path, "no such file")
    if file.is_dir():
        raise ScenarioError(path, "is a folder; expected a world file")
    text = read_bounded(file, path, "world")
    top = {m.group(1) for m in re.finditer(r"^([A-Za-z_]+):", text, re.MULTILINE)}
    if "scenario" not in top:
        text += f"\nscenario: {file.stem!r}\n"
    if "steps" not in top:
        text += "\nsteps: [{advance: 0ms}]\n"
    return parse_scenario(text, path)
