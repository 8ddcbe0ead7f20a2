"""Sweep files: a workload, named cases and a grid of overrides, and a seed list.

Public names: ``ParamSet``, ``SEEDS_MAX``, ``Sweep``, ``checked_seeds``, ``format_seeds``,
``load_sweep``, ``override_problem``, ``parse_seeds``, ``read_param_sets``.

A sweep file (``docs/workloads.md``) names a workload file (relative to itself), optional
``cases`` (name → overrides) and an optional ``grid`` (field path → values to try); the
parameter sets are every case × every grid point (the grid's product, last key varying
fastest), in file order. Each parameter set is the workload with its overrides applied and
read again by the workload loader, so an override the workload cannot take is reported at the
sweep file's line, with the workload's own message. The parent of every overridden field
must exist in the workload (a misspelt issuer is an error, not a new issuer).

A parameter set's id is the sha256 of its effective workload (canonical JSON), 12 hex digits:
the same parameters have the same id in every sweep, which is what lets a sweep resume.
``ParamSet.value(path)`` is the value at an overridden path in the set's effective workload,
found as overrides find their field (``parse_field_path``, ``lookup``); a field the workload
leaves out has the model's default where ``_DEFAULTS`` lists one, else none (``MISSING``).
Seeds are written as ``--seeds`` takes them (``"0-9,20"``), as one seed or as a list.
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
from clearing_sim.analysis.model import (
    Arrivals,
    IssuerLoad,
    MemberLoad,
    Outage,
    ReceiverLoad,
    Workload,
)
from clearing_sim.analysis.schema import sweep_problems
from clearing_sim.scenario.errors import (
    Problem,
    ScenarioInvalid,
    ScenarioNotFound,
    ScenarioUnreadable,
)
from clearing_sim.scenario.fieldpath import MISSING, Segment, lookup, parse_field_path
from clearing_sim.scenario.reading import Reader
from clearing_sim.scenario.source import Document, FieldPath, field_path, parse_yaml
from clearing_sim.sim.issuer import IssuerBehaviour
from clearing_sim.sim.world import WorldConfig

__all__ = ["SEEDS_MAX", "SEED_MAX", "ParamSet", "Sweep", "checked_seeds", "format_seeds",
           "load_sweep", "override_problem", "parse_seeds", "read_param_sets"]

SEEDS_MAX = 1_000_000
SEED_MAX = (1 << 63) - 1  # a seed is a column of the results' tables: int64
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


def checked_seeds(seeds: str | int | Iterable[int]) -> tuple[int, ...]:
    """``seeds`` — a ``parse_seeds`` text, one seed, or seeds — as a tuple; ``ValueError`` for
    malformed text, a negative or repeated seed, or too many."""
    if isinstance(seeds, str):
        return parse_seeds(seeds)
    chosen = (seeds,) if isinstance(seeds, int) else tuple(seeds)
    seen: set[int] = set()
    for seed in chosen:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
            raise ValueError(f"expected seeds that are integers from 0 to {SEED_MAX}, got "
                             f"{str(seed)[:40]!r}")
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


#: Defaults of optional workload fields (``None`` stands for any key or index), taken from the
#: model, as a workload file would write them. A field left out of a workload that is not
#: listed here (a latency, ``drain``, a name) has no value in a sweep's parameter column.
_DEFAULTS: tuple[tuple[tuple[Segment | None, ...], Any], ...] = (
    (("issuers", None, "rtgs"), str(IssuerLoad("", "", None).rtgs_gbp)),
    (("issuers", None, "currency"), IssuerLoad("", "", None).currency),
    (("issuers", None, "behaviour", "outcomes", "rejected"), IssuerBehaviour().p_rejected),
    (("issuers", None, "behaviour", "outcomes", "failed"), IssuerBehaviour().p_failed),
    (("issuers", None, "behaviour", "outcomes", "silence"), IssuerBehaviour().p_silence),
    (("issuers", None, "behaviour", "hold_at"), IssuerBehaviour().hold_at.value),
    (("members", None, "rtgs"), str(MemberLoad("", "", Arrivals(0.0), ()).rtgs_gbp)),
    (("members", None, "amount"), str(MemberLoad("", "", Arrivals(0.0), ()).amount.low)),
    (("members", None, "mix", "swap"),
     dict(MemberLoad("", "", Arrivals(0.0), ()).mix).get("swap", 0.0)),
    (("webhooks", None, "receiver", "status"), ReceiverLoad().status),
    (("webhooks", None, "receiver", "network", "loss"), ReceiverLoad().loss),
    (("webhooks", None, "receiver", "network", "duplicate"), ReceiverLoad().duplicate),
    (("webhooks", None, "receiver", "network", "reorder"), ReceiverLoad().reorder),
    (("webhooks", None, "receiver", "outages", None, "status"), Outage(0, 1).status),
    (("world", "epoch"), WorldConfig().epoch),
)


def _default(path: tuple[Segment, ...]) -> Any:
    for pattern, value in _DEFAULTS:
        if len(pattern) == len(path) and all(
                want is None or want == got for want, got in zip(pattern, path, strict=True)):
            return value
    return MISSING


@frozen
class ParamSet:
    """One parameter set of a sweep: its case, its grid point and the workload they make."""

    index: int
    param_id: str
    case: str | None
    case_overrides: tuple[tuple[str, Any], ...]  # field path → value
    grid_overrides: tuple[tuple[str, Any], ...]
    workload: Workload
    sites: tuple[FieldPath, ...] = ()  # where each of ``overrides`` is in the sweep file

    @property
    def overrides(self) -> tuple[tuple[str, Any], ...]:
        """Every override, the case's first (a grid value wins over the case's)."""
        return (*self.case_overrides, *self.grid_overrides)

    def value(self, path: str) -> Any:
        """The value at field ``path`` in this set's effective workload (the workload with its
        overrides), as written there; for a field left out, the model's default if
        ``_DEFAULTS`` has one, else ``MISSING``."""
        segments = parse_field_path(path)
        found = lookup(self.workload.data, segments)
        return _default(segments) if found is MISSING or found is None else found

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


#: Workload keys that say how a workload is checked or run alone, not what it models: they
#: are left out of a parameter set's id (and cannot be overridden).
_NOT_PARAMETERS = ("gates", "seed")


def _param_id(data: Any) -> str:
    modelled = {key: value for key, value in data.items() if key not in _NOT_PARAMETERS}
    canonical = json.dumps(modelled, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
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
    found = lookup(node, (segment,))
    return None if found is MISSING else found


def _missing(node: Any, path: tuple[Segment, ...]) -> str:
    hint = ""
    if isinstance(node, dict) and isinstance(path[-1], str):
        match = difflib.get_close_matches(path[-1], list(node), n=1)
        hint = f" (did you mean {match[0]}?)" if match else ""
        if node:
            hint += f"; expected one of: {', '.join(node)}"
    return f"the workload has no field {field_path(path)}{hint}"


def _related(field: str, overrides: Sequence[tuple[str, Any, FieldPath]]
             ) -> tuple[str, Any, FieldPath] | None:
    """The last override at ``field``, inside it or around it."""
    for path, value, where in reversed(overrides):
        if (field == path or field.startswith((path + ".", path + "["))
                or path.startswith((field + ".", field + "["))):
            return path, value, where
    return None


def _located(problem: Problem, overrides: Sequence[tuple[str, Any, FieldPath]],
             sweep_doc: Document) -> Problem:
    """A problem of an overridden workload, moved to the sweep file where it comes from."""
    found = _related(problem.field, overrides)
    if found is None:
        return problem
    path, value, where = found
    return sweep_doc.problem_at(where, f"with {path} = {_compact(value)} the workload is "
                                f"invalid: {problem.field}: {problem.message}")


def override_problem(sweep: Sweep, params: ParamSet, field: str,
                     message: str) -> Problem | None:
    """``message`` about ``field`` of ``params``' workload (the API refused its set-up, say) as
    a problem at the sweep file's line of the override that touches ``field``; ``None`` if no
    override does (the workload file itself is at fault)."""
    found = _related(field, [(p, v, where) for (p, v), where
                             in zip(params.overrides, params.sites, strict=True)])
    if found is None:
        return None
    path, value, where = found
    document = parse_yaml(sweep.text, sweep.path)
    return document.problem_at(where, f"with {path} = {_compact(value)} the set-up is "
                               f"refused: {field}: {message}")


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
        params.append(ParamSet(len(params), param_id, case,  # items: the case's first
                               tuple((p, v) for p, v, site in items if site[0] == "cases"),
                               tuple((p, v) for p, v, site in items if site[0] == "grid"),
                               workload, tuple(site for _, _, site in items)))
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


def load_sweep(path: str | Path, seeds: str | int | Iterable[int] | None = None) -> Sweep:
    """Read and check a sweep file and its workload; ``seeds`` (as ``checked_seeds`` takes
    them) replaces the file's seeds.

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


def read_param_sets(sweep_text: str, sweep_path: str, workload_text: str,
                    workload_path: str) -> tuple[ParamSet, ...]:
    """The parameter sets of a sweep file and its workload given as texts (a results
    folder's ``sweep.json`` keeps both); ``ScenarioError`` as ``load_sweep``."""
    return _read_params(parse_yaml(sweep_text, sweep_path),
                        parse_yaml(workload_text, workload_path))


def _check_path(reader: Reader, where: FieldPath, text: str) -> None:
    try:
        segments = parse_field_path(text)
    except ValueError as error:
        reader.report(where, str(error), key=True)
        return
    if segments[0] in _NOT_PARAMETERS:
        reader.report(where, f"{segments[0]} is not a parameter of the runs; expected a field "
                      "of the model (a sweep's gates go under its own gates key, its seeds "
                      "under seeds)", key=True)

