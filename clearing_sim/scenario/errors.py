"""What can go wrong with a scenario file, as one hierarchy, and where in the file it went wrong.

Public names: ``Location``, ``Problem``, ``ScenarioError``, ``ScenarioInvalid``,
``ScenarioNotFound``, ``ScenarioUnreadable``.

::

    ScenarioError                 anything wrong with a scenario file (exit code 2 at the CLI)
    ├── ScenarioNotFound          no such file or folder, or a folder without scenario files
    ├── ScenarioUnreadable        the file cannot be read: permissions, not UTF-8 text
    └── ScenarioInvalid           it was read, and has one or more problems:
                                  YAML syntax, schema violations, semantic errors

A ``Problem`` names the file, the line and column (1-based, as editors count), the field path
(``steps[3].expect.status``; empty for a problem of the file as a whole) and what was
expected. ``ScenarioInvalid`` holds every problem of a file, sorted by position.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

__all__ = ["Location", "Problem", "ScenarioError", "ScenarioInvalid", "ScenarioNotFound",
           "ScenarioUnreadable"]


@frozen(order=True)
class Location:
    """A position in a file: 1-based line and column."""

    line: int
    column: int


@frozen
class Problem:
    """One thing wrong in a scenario file."""

    path: str  # the file, as given
    location: Location
    field: str  # e.g. steps[3].expect.status; "" for the file as a whole
    message: str

    def sort_key(self) -> tuple[int, int, str, str]:
        return (self.location.line, self.location.column, self.field, self.message)

    def render(self) -> str:
        """``path:line:col: field: message`` (the field is left out when there is none)."""
        where = f"{self.path}:{self.location.line}:{self.location.column}"
        if not self.field:
            return f"{where}: {self.message}"
        return f"{where}: {self.field}: {self.message}"


class ScenarioError(Exception):
    """A scenario file that cannot be used: the CLI answers it with exit code 2."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message

    def lines(self) -> list[str]:
        """The lines to print for this error, one per problem."""
        return [str(self)]

    def __reduce__(self) -> tuple[type[ScenarioError], tuple[object, ...]]:
        """As it was built: an error crosses to another process (``run --jobs``) whole."""
        return type(self), (self.path, self.message)


class ScenarioNotFound(ScenarioError):
    """No such file or folder, or a folder holding no ``*.yaml`` / ``*.yml`` file."""


class ScenarioUnreadable(ScenarioError):
    """The file exists but could not be read (permissions, not UTF-8 text)."""


class ScenarioInvalid(ScenarioError):
    """The file was read and has problems; ``problems`` lists all of them, sorted by line."""

    def __init__(self, path: str, problems: Iterable[Problem]) -> None:
        unique = {(p.sort_key(), p.path): p for p in problems}
        self.problems = tuple(sorted(unique.values(), key=Problem.sort_key))
        assert self.problems, "ScenarioInvalid needs at least one problem"
        count = len(self.problems)
        super().__init__(path, f"{count} problem{'s' if count != 1 else ''}")

    def lines(self) -> list[str]:
        return [p.render() for p in self.problems]

    def __reduce__(self) -> tuple[type[ScenarioError], tuple[object, ...]]:
        return type(self), (self.path, self.problems)
