"""Loading scenario files: read, parse with positions, validate, check, build typed values.

Public names: ``FileCheck``, ``SUFFIXES``, ``check_size``, ``collect``, ``load_scenario``,
``parse_scenario``, ``read_bounded``, ``validate_paths``.

``load_scenario(path)`` answers a ``Scenario`` or raises a ``ScenarioError``: the YAML is
parsed keeping every node's line and column, validated against the shipped JSON Schema, then
checked for what the schema cannot say (names used but not defined, ``${name}`` used before a
save defines it, durations and timestamps that do not parse, duplicate names, profiles the
engine refuses). Every problem of the file is reported together, sorted by line. ``collect``
expands folders into their scenario files; ``validate_paths`` is the ``validate`` command.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from attrs import frozen

from clearing_sim.domain.timefmt import parse_iso
from clearing_sim.scenario.errors import (
    ScenarioError,
    ScenarioInvalid,
    ScenarioNotFound,
    ScenarioUnreadable,
)
from clearing_sim.scenario.model import Scenario, WorldSpec
from clearing_sim.scenario.read_steps import read_steps
from clearing_sim.scenario.read_world import read_world
from clearing_sim.scenario.reading import Reader, Symbols
from clearing_sim.scenario.schema import schema_problems
from clearing_sim.scenario.scope import Scope
from clearing_sim.scenario.source import TEXT_CHARS_MAX, parse_yaml

__all__ = ["SUFFIXES", "FileCheck", "check_size", "collect", "load_scenario", "parse_scenario",
           "read_bounded", "validate_paths"]

SUFFIXES = (".yaml", ".yml")


def _epoch_ms(epoch: str) -> int:
    try:
        return parse_iso(epoch)
    except ValueError:
        return parse_iso(WorldSpec().epoch)  # reported where the epoch is written


def parse_scenario(text: str, path: str) -> Scenario:
    """A scenario from its text; ``path`` names the file in problems."""
    document = parse_yaml(text, path)
    found = schema_problems(document)
    if not isinstance(document.data, dict):
        raise ScenarioInvalid(path, [problem for _, problem in found])
    reader = Reader(document, (p for p, _ in found if p is not None))
    reader.problems.extend(problem for _, problem in found)
    symbols = Symbols.read(reader)
    world = read_world(reader, symbols)
    scope = Scope(symbols, _epoch_ms(world.world.epoch),
                  frozenset(h.key for h in world.webhooks if h.receiver.app == "reference"))
    steps = read_steps(reader, scope)
    if reader.problems:
        raise ScenarioInvalid(path, reader.problems)
    data = document.data
    return Scenario(path, data["scenario"], world.world, steps, data.get("description", ""),
                    tuple(data.get("tags", ())), world.members, world.issuers, world.agents,
                    world.webhooks)


def check_size(file: Path, name: str) -> None:
    """``ScenarioUnreadable`` for a file over ``TEXT_CHARS_MAX`` bytes, before reading it."""
    try:
        size = file.stat().st_size
    except OSError:
        return  # reading it will say why
    if size > TEXT_CHARS_MAX:
        raise ScenarioUnreadable(name, f"is {size} bytes; a scenario file is at most "
                                       f"{TEXT_CHARS_MAX} bytes (256 KiB)")


def read_bounded(file: Path, name: str, what: str = "scenario") -> str:
    """A file's UTF-8 text, at most ``TEXT_CHARS_MAX`` bytes of it read: a device or pipe
    whose size says nothing (``/dev/zero``) is refused after that many bytes, not read whole;
    a named pipe without a writer reads as empty instead of blocking the open forever.
    ``ScenarioUnreadable`` says why it cannot be used."""
    check_size(file, name)
    try:  # a pipe nobody writes to (mkfifo) must not block the open: opened non-blocking,
        # read blocking (a pipe with a writer, as <(...) gives, is read to its end)
        descriptor = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
        os.set_blocking(descriptor, True)
        with os.fdopen(descriptor, "rb") as stream:
            data = stream.read(TEXT_CHARS_MAX + 1)
    except OSError as error:
        raise ScenarioUnreadable(name, f"cannot be read: {error.strerror or error}") from None
    if len(data) > TEXT_CHARS_MAX:
        raise ScenarioUnreadable(name, f"is more than {TEXT_CHARS_MAX} bytes; a {what} file "
                                       f"is at most {TEXT_CHARS_MAX} bytes (256 KiB)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ScenarioUnreadable(name, f"is not UTF-8 text ({error.reason} at byte "
                                       f"{error.start})") from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and parse one scenario file; ``ScenarioError`` if it cannot be used."""
    name = str(path)
    file = Path(path)
    if not file.exists():
        raise ScenarioNotFound(name, "no such file or folder")
    if file.is_dir():
        raise ScenarioUnreadable(name, "is a folder; expected a scenario file")
    return parse_scenario(read_bounded(file, name), name)


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def collect(paths: Iterable[str]) -> list[str | ScenarioNotFound]:
    """The scenario files named by ``paths``, in order (a folder: every ``*.yaml``/``*.yml``
    inside, recursively, sorted, hidden folders skipped), or why a path names none."""
    found: list[str | ScenarioNotFound] = []
    for given in paths:
        root = Path(given)
        if root.is_dir():
            files = sorted((p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file()
                            and not _hidden(p, root)), key=lambda p: p.relative_to(root).parts)
            found.extend(str(p) for p in files)
            if not files:
                found.append(ScenarioNotFound(given, "no scenario files (*.yaml, *.yml) in "
                                                     "this folder"))
        elif root.exists():
            found.append(given)
        else:
            found.append(ScenarioNotFound(given, "no such file or folder"))
    return found


@frozen
class FileCheck:
    """The outcome of validating one path: ok, or the error with every problem."""

    path: str
    error: ScenarioError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def lines(self) -> list[str]:
        return [f"{self.path}: ok"] if self.error is None else self.error.lines()


def validate_paths(paths: Sequence[str]) -> list[FileCheck]:
    """Validate every scenario file named by ``paths`` without running it, in order."""
    checks = []
    for entry in collect(paths):
        if isinstance(entry, ScenarioError):
            checks.append(FileCheck(entry.path, entry))
            continue
        try:
            load_scenario(entry)
        except ScenarioError as error:
            checks.append(FileCheck(entry, error))
        else:
            checks.append(FileCheck(entry))
    return checks
