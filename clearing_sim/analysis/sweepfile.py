"""Sweep files: a workload, named cases and a grid of overrides, and a seed list.

Public names: ``ParamSet``, ``SEEDS_MAX``, ``Sweep``, ``checked_seeds``, ``format_seeds``,
``load_sweep``, ``parse_seeds``.

A sweep file (``docs/workloads.md``) names a workload file (relative to itself), optional
``cases`` (name → overrides) and an optional ``grid`` (field path → values to try); the
parameter sets are every case × every grid point (the grid's product, last key varying
fastest), in file order. Each parameter set is the workload with its overrides applied and
read again by the workload loader, so an override the workload cannot take is reported at the
sweep file's line, with the workload's own message. The parent of every overridden field
must exist in the workload (a misspelt issuer is an error, not a new issuer).

A parameter set's id is the sha256 of its effective workload (canonical JSON), 12 hex digits:
the same parameters have the same id in every sweep, which is what lets a sweep resume.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from clearing_sim.analysis.frames import FRAME_NAMES
from clearing_sim.analysis.loader import read_text, read_workload
from clearing_sim.analysis.model import Workload
from clearing_sim.analysis.schema import sweep_problems
from clearing_sim.scenario.errors import (
    Problem,
    ScenarioInvalid,
    ScenarioNotFound,
    ScenarioUnreadable,
)
from clearing_sim.scenario.fieldpath import Segment, parse_field_path
from clearing_sim.scenario.reading import Reader
from clearing_sim.scenario.source import Document, FieldPath, field_path, parse_yaml

__all__ = ["SEEDS_MAX", "ParamSet", "Sweep", "checked_seeds", "format_seeds", "load_sweep",
           "parse_seeds"]

SEEDS_MAX = 1_000_000
_SEEDS = re.compile(r"\s*[0-9]+(\s*-\s*[0-9]+)?(\s*,\s*[0-9]+(\s*-\s*[0-9]+)?)*\s*")


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"0-99"``, ``"3"``, ``"0-9,20,30-39"`` → the seeds in that order; ``ValueError`` if the
    text is malformed, a range runs backwards, a seed repeats, or there are too many."""
    if not _SEEDS.fullmatch(text):
        raise ValueError(f"expected seeds like 0-99 or 0-9,20,30-39, got {text!r}")
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = (p.strip() for p in part.partition("-"))
        first, last = int(low), int(high or low)
        if last < first:
            raise ValueError(f"the range {first}-{last} runs backwards; expected {last}-{first}")
        if len(seeds) + last - first + 1 > SEEDS_MAX:
            raise ValueError(f"expected at most {SEEDS_MAX:,} seeds")
        seeds.extend(range(first, last + 1))
    return checked_seeds(seeds)


def checked_seeds(seeds: Iterable[int]) -> tuple[int, ...]:
    """``seeds`` as a tuple; ``ValueError`` for a negative or repeated seed, or too many."""
    chosen = tuple(seeds)
    seen: set[int] = set()
    for seed in chosen:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"expected seeds that are integers ≥ 0, got {seed!r}")
        if seed in seen:
            raise ValueError(f"seed {seed} is listed twice; expected each seed once")
        seen.add(seed)
    if len(chosen) > SEEDS_MAX:
        raise ValueError(f"expected at most {SEEDS_MAX:,} seeds")
    return chosen


def format_seeds(seeds: Sequence[int]) -> str:
    """The shortest ``parse_seeds`` text for ``seeds`` (consecutive runs become ranges)."""
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(str(seeds[i]) if i == j else f"{seeds[i]}-{seeds[j]}")
        i = j + 1
    return ",".join(parts)


@frozen
class ParamSet:
    """One parameter set of a sweep: its case, its grid point and the workload they make."""

    index: int
    param_id: str
    case: str | None
    case_overrides: tuple[tuple[str, Any], ...]  # field path → value
    grid_overrides: tuple[tuple[str, Any], ...]
    workload: Workload

    @property
    def overrides(self) -> tuple[tuple[str, Any], ...]:
        """Every override, the case's first (a grid value wins over the case's)."""
        return (*self.case_overrides, *self.grid_overrides)

    @property
    def label(self) -> str:
        """``case, key=value, …`` with each grid key's last segment; ``baseline`` if none."""
        parts = [self.case] if self.case else []
        parts += [f"{path.rsplit('.', 1)[-1]}={_compact(value)}"
                  for path, value in self.grid_overrides]
        return ", ".join(parts) or "baseline"


@frozen
class Sweep:
    name: str
    path: str
    workload_path: str
    params: tuple[ParamSet, ...]
    seeds: tuple[int, ...]
    frames: tuple[str, ...]
    description: str = ""
    text: str = ""
    workload_text: str = ""
    grid_paths: tuple[str, ...] = ()
    case_paths: tuple[str, ...] = ()

    @property
    def param_paths(self) -> tuple[str, ...]:
        """Every overridden field path, cases' first, in file order."""
        return tuple(dict.fromkeys((*self.case_paths, *self.grid_paths)))


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _param_id(data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


# overrides ---------------------------------------------------------------------------------
def _set(data: Any, path: tuple[Segment, ...], value: Any) -> str | None:
    """Set ``value`` at ``path`` inside ``data``; why not, if its parent does not exist."""
    node = data
    for depth, segment in enumerate(path[:-1]):
        child = _child(node, segment)
        if child is None:
            return _missing(node, path[:depth + 1])
        node = child
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or not -len(node) <= last < len(node):
            return _missing(node, path)
        node[last] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        return f"{field_path(path[:-1])} is not a mapping; expected a path to a mapping key"
    return None


def _child(node: Any, segment: Segment) -> Any:
    if isinstance(segment, int):
        ok = isinstance(node, list) and -len(node) <= segment < len(node)
        return node[segment] if ok else None
    return node.get(segment) if isinstance(node, dict) else None


def _missing(node: Any, path: tuple[Segment, ...]) -> str:
    hint = ""
    if isinstance(node, dict) and isinstance(path[-1], str):
        match = difflib.get_close_matches(path[-1], list(node), n=1)
        hint = f" (did you mean {match[0]}?)" if match else ""
        if node:
            hint += f"; expected one of: {', '.join(node)}"
    return f"the workload has no field {field_path(path)}{hint}"


def _located(problem: Problem, overrides: Sequence[tuple[str, Any, FieldPath]],
             sweep_doc: Document) -> Problem:
    """A problem of an overridden workload, moved to the sweep file where it comes from."""
    for path, value, where in reversed(overrides):
        related = (problem.field == path or problem.field.startswith((path + ".", path + "["))
                   or path.startswith((problem.field + ".", problem.field + "[")))
        if related:
            return sweep_doc.problem_at(where, f"with {path} = {_compact(value)} the workload "
                                        f"is invalid: {problem.field}: {problem.message}")
    return problem


# reading -----------------------------------------------------------------------------------
def _points(data: dict[str, Any]) -> list[tuple[str | None, list[tuple[str, Any, FieldPath]]]]:
    """(case, [(path, value, where in the sweep file)]) per parameter set, in order."""
    cases: list[tuple[str | None, list[tuple[str, Any, FieldPath]]]] = [
        (name, [(path, value, ("cases", name, path)) for path, value in overrides.items()])
        for name, overrides in data.get("cases", {}).items()] or [(None, [])]
    grid = data.get("grid", {})
    axes = [[(path, value, ("grid", path, i)) for i, value in enumerate(values)]
            for path, values in grid.items()]
    return [(case, [*items, *point]) for case, items in cases
            for point in itertools.product(*axes)]


def _read_params(document: Document, base: Document) -> tuple[ParamSet, ...]:
    problems: list[Problem] = []
    params: list[ParamSet] = []
    seen: dict[str, int] = {}
    for case, items in _points(document.data):
        data = copy.deepcopy(base.data)
        refused = False
        for path, value, site in items:
            reason = _set(data, parse_field_path(path), copy.deepcopy(value))
            if reason is not None:
                problems.append(document.problem_at(site[:-1] if site[0] == "grid" else site,
                                                    reason, key=True))
                refused = True
        if refused:
            continue
        try:
            workload = read_workload(evolve(base, data=data))
        except ScenarioInvalid as error:
            problems.extend(_located(p, items, document) for p in error.problems)
            continue
        param_id = _param_id(data)
        if param_id in seen:
            problems.append(document.problem_at(items[-1][2] if items else (), "this parameter "
                            f"set repeats set {seen[param_id] + 1}; expected distinct sets"))
            continue
        seen[param_id] = len(params)
        params.append(ParamSet(len(params), param_id, case,
                               tuple((p, v) for p, v, site in items if site[0] == "cases"),
                               tuple((p, v) for p, v, site in items if site[0] == "grid"),
                               workload))
    if problems:
        raise ScenarioInvalid(document.path, problems)
    return tuple(params)


def _seeds(reader: Reader, raw: Any) -> tuple[int, ...]:
    if raw is None:
        return ()
    if isinstance(raw, int):
        return (raw,)
    try:
        return parse_seeds(raw if isinstance(raw, str) else ",".join(str(s) for s in raw))
    except ValueError as error:
        reader.report(("seeds",), str(error))
        return ()


def load_sweep(path: str | Path, seeds: Iterable[int] | None = None) -> Sweep:
    """Read and check a sweep file and its workload; ``seeds`` replaces the file's seeds.

    ``ScenarioError`` when either file cannot be used (every problem, located)."""
    name = str(path)
    text = read_text(path, "sweep")
    document = parse_yaml(text, name)
    found = sweep_problems(document)
    if not isinstance(document.data, dict) or any(p is not None for p, _ in found):
        raise ScenarioInvalid(name, [problem for _, problem in found])
    reader = Reader(document)
    reader.problems.extend(problem for _, problem in found)  # unknown keys
    data: dict[str, Any] = document.data
    chosen = checked_seeds(seeds) if seeds is not None else _seeds(reader, data.get("seeds"))
    if not chosen and not reader.problems:
        reader.report(("seeds",) if "seeds" in data else (), "no seeds: expected seeds in the "
                      "sweep file or --seeds on the command line")
    for key in data.get("grid", {}):
        _check_path(reader, ("grid", key), key)
    for case, overrides in data.get("cases", {}).items():
        for key in overrides:
            _check_path(reader, ("cases", case, key), key)
    if reader.problems:
        raise ScenarioInvalid(name, reader.problems)
    workload_file = Path(name).parent / data["workload"]
    try:
        workload_text = read_text(workload_file)
    except (ScenarioNotFound, ScenarioUnreadable) as error:
        reader.report(("workload",), f"{error.message}: {workload_file}; expected a workload "
                      "file, relative to this sweep file")
        raise ScenarioInvalid(name, reader.problems) from None
    base = parse_yaml(workload_text, str(workload_file))
    read_workload(base)  # the workload alone must be valid: its problems at its own lines
    params = _read_params(document, base)
    return Sweep(data["sweep"], name, str(workload_file), params, chosen,
                 tuple(data.get("frames", FRAME_NAMES)), data.get("description", ""), text,
                 workload_text, tuple(data.get("grid", {})),
                 tuple(dict.fromkeys(k for o in data.get("cases", {}).values() for k in o)))


def _check_path(reader: Reader, where: FieldPath, text: str) -> None:
    try:
        parse_field_path(text)
    except ValueError as error:
        reader.report(where, str(error), key=True)

