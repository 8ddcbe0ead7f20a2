"""Many scenario files loaded, then played, over one process or several; answers in file order.

Public names: ``Batch``, ``shares``.

``Batch(paths, play, keyword=..., jobs=...)``, then ``load()``: every problem of every file,
in the order of the files (an empty list: each file is valid). Only then ``results()``: what
``play(scenario, count)`` answered for each scenario the keyword keeps, in the order of the
files (``count``: how many scenarios are played in all). A file with a problem means nothing
is played, as with one process.

With ``jobs`` above 1 (and a system where ``commands.forks.can_fork``), the files are
shared out by size, largest first, each to the worker with the fewest bytes so far, and each
worker forked from this process loads its share, waits for the word that every file loaded,
then plays its scenarios in file order, sending each answer as it is ready. What a scenario
plays is the same in any process: its world is built from the file and the seed alone, so
its digest is too. ``play`` runs in the worker: what it writes (a log, a page) is written
there, and what it answers must pickle.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from clearing_sim.commands.forks import Forks, Link, can_fork
from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.scenario.loader import collect, load_scenario
from clearing_sim.scenario.model import Scenario

__all__ = ["Batch", "shares"]

T = TypeVar("T")


def shares(sizes: Sequence[int], jobs: int) -> list[list[int]]:
    """Indexes of ``sizes`` split into at most ``jobs`` shares of nearly equal total: largest
    first, each to the share with the least so far (ties: the fewest files, then the lowest
    share); each share in index order, none empty."""
    count = max(1, min(jobs, len(sizes)))
    split: list[list[int]] = [[] for _ in range(count)]
    totals = [0] * count
    for index in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        lightest = min(range(count), key=lambda k: (totals[k], len(split[k]), k))
        split[lightest].append(index)
        totals[lightest] += sizes[index]
    return [sorted(share) for share in split if share]


def _size(path: str | Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # loading it says why


class Batch(Generic[T]):
    """Scenario files to load, then play (see the module's notes)."""

    def __init__(self, paths: Sequence[str], play: Callable[[Scenario, int], T], *,
                 keyword: str | None = None, jobs: int = 1) -> None:
        self._found = list(collect(paths))  # a file, or what is wrong with a path
        self._play = play
        self._keyword = keyword
        self._jobs = jobs
        self._forks: Forks[list[int]] | None = None
        self._scenarios: dict[int, Scenario] = {}  # one process: index -> scenario
        self._kept: list[int] = []  # the scenarios the keyword keeps, in file order
        self._loaded = False

    def _keeps(self, scenario: Scenario) -> bool:
        word = self._keyword
        return word is None or word in scenario.name or word in scenario.path \
            or word in scenario.tags

    def _load_one(self, index: int) -> Scenario | ScenarioError:
        found = self._found[index]
        if isinstance(found, ScenarioError):
            return found
        try:
            return load_scenario(found)
        except ScenarioError as error:
            return error

    def load(self) -> list[ScenarioError]:
        """Every problem of every file, in file order; nothing has been played yet."""
        files = [i for i, found in enumerate(self._found) if not isinstance(found, ScenarioError)]
        jobs = min(self._jobs, len(files))
        forked = jobs > 1 and can_fork()
        errors = self._load_forked(files, jobs) if forked else self._load_here()
        self._loaded = True
        return [error for _, error in sorted(errors, key=lambda pair: pair[0])]

    def _load_here(self) -> list[tuple[int, ScenarioError]]:
        errors = []
        for index in range(len(self._found)):
            loaded = self._load_one(index)
            if isinstance(loaded, ScenarioError):
                errors.append((index, loaded))
            else:
                self._scenarios[index] = loaded
                if self._keeps(loaded):
                    self._kept.append(index)
        return errors

    def _load_forked(self, files: list[int], jobs: int) -> list[tuple[int, ScenarioError]]:
        errors: list[tuple[int, ScenarioError]] = [
            (i, found) for i, found in enumerate(self._found) if isinstance(found, ScenarioError)]
        split = shares([_size(self._found[i]) for i in files], jobs)  # type: ignore[arg-type]
        self._forks = Forks([[files[i] for i in share] for share in split], self._work)
        for answered, (_, (failed, kept)) in enumerate(self._forks.messages(), start=1):
            errors.extend(failed)
            self._kept.extend(kept)
            if answered == len(split):
                break
        self._kept.sort()
        if errors:
            self.close()
        return errors

    def _work(self, share: list[int], link: Link) -> None:
        """A worker: load the share, say how it went, play it when told to."""
        scenarios: dict[int, Scenario] = {}
        failed: list[tuple[int, ScenarioError]] = []
        for index in share:
            loaded = self._load_one(index)
            if isinstance(loaded, ScenarioError):
                failed.append((index, loaded))
            else:
                scenarios[index] = loaded
        link.send((failed, [i for i, s in scenarios.items() if self._keeps(s)]))
        count = link.receive()  # None: the parent has gone, or some file has a problem
        if count is None:
            return
        for index, scenario in scenarios.items():
            if self._keeps(scenario):
                link.send((index, self._play(scenario, count)))

    def results(self) -> Iterator[T]:
        """What ``play`` answered for each kept scenario, in file order, each as soon as it
        and those before it are ready (call after a ``load()`` that found no problem)."""
        assert self._loaded, "load() first"
        count = len(self._kept)
        if self._forks is None:
            for index in self._kept:
                yield self._play(self._scenarios[index], count)
            return
        self._forks.tell(count)
        ready: dict[int, Any] = {}
        order = iter(self._kept)
        wanted = next(order, None)
        for _, (index, answer) in self._forks.messages():
            ready[index] = answer
            while wanted is not None and wanted in ready:
                yield ready.pop(wanted)
                wanted = next(order, None)
        self.close()

    def close(self) -> None:
        """Stop the workers, if any still run."""
        if self._forks is not None:
            self._forks.close()
            self._forks = None

    def __enter__(self) -> Batch[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
