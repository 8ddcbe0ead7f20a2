"""Promote a finding: one cell of a sweep's results as a workload file whose gates pin it.

Public names: ``DEFAULT_TOLERANCE``, ``PromoteRefused``, ``parse_tolerance``,
``pinned_gates``, ``promote``.

``promote(results, param_id, seed, tolerance)`` is the Python side of ``clearing-sim sweep
promote``. It rebuilds the parameter set's effective workload from the texts the results
folder keeps (``sweep.json``: the sweep file and its workload as they were run), sets its
``seed`` and writes every figure that run's metrics hold as an ``always`` band gate,
``metric{dimensions} between LOW and HIGH`` with LOW and HIGH the figure ∓ ``tolerance`` of
it (relative: a count, a rate and a latency in seconds alike). The file runs that one cell
again with ``clearing-sim workload FILE`` — same workload, same seed, same digest — and exits
1 naming each figure that moved out of its band: a change of the modelled behaviour (an
issuer's latency or outcome probabilities, the arrivals, the seed) moves some.

The default tolerance (``DEFAULT_TOLERANCE``, 1 %) and why: the run is deterministic, so the
same file, seed and version reproduce every figure exactly; a tolerance is there for what may
change without the modelled behaviour changing (floating-point summation and percentile
interpolation across platforms and numpy versions: far below 1e-9 relative). 1 % is far above
that and below what one more or one fewer settled, parked or failed transaction does to a
figure of a run small enough to be a CI check (one transaction in a hundred); figures that are
0 stay exactly 0 at any tolerance. Widen it (``--tolerance 10%``) to keep a finding's shape
through changes of the code that reshuffle random draws.
"""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import yaml

from clearing_sim.analysis.gates import parse_gate, row_name, workload_names
from clearing_sim.analysis.metrics import DIMENSIONS
from clearing_sim.analysis.sweepfile import read_param_sets
from clearing_sim.analysis.sweeps import load_results

__all__ = ["DEFAULT_TOLERANCE", "PromoteRefused", "parse_tolerance", "pinned_gates",
           "promote"]

DEFAULT_TOLERANCE = "1%"
_PERCENT = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%?\s*")


class PromoteRefused(Exception):
    """The cell asked for is not in the results (or cannot be rebuilt): exit 2."""


def parse_tolerance(text: str) -> float:
    """``"1%"`` → 0.01, ``"0"`` → 0.0; ``ValueError`` unless a percentage from 0 to 100."""
    found = _PERCENT.fullmatch(text)
    if found is None or (not text.strip().endswith("%") and float(found[1]) != 0):
        raise ValueError(f"expected a percentage like 1% or 0.5% (0 pins figures exactly), "
                         f"got {text[:40]!r}")
    share = float(found[1]) / 100
    if share > 1:
        raise ValueError(f"expected a percentage from 0% to 100%, got {text.strip()}")
    return share


def _bound(edge: float, value: float, down: bool) -> str:
    """A band's end ``edge`` to 6 significant digits, if the figure ``value`` stays inside
    the band; else exactly (``repr``: it reads back as the same float)."""
    if edge == value:  # a tolerance of 0: the figure itself, exactly
        return repr(value)
    text = f"{edge:.6g}"
    return text if ((float(text) <= value) if down else (float(text) >= value)) else repr(edge)


def _where(row: Any, issuer_keys: dict[str, str]) -> list[tuple[str, str | int]]:
    """A metrics row's dimensions (its issuer by key), as a gate's ``where``."""
    where: list[tuple[str, str | int]] = []
    for dimension, _ in DIMENSIONS:
        value = getattr(row, dimension)
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
            continue
        label = int(value) if dimension in ("mode", "attempts") else str(value)
        where.append((dimension, issuer_keys.get(str(label), label)
                      if dimension == "issuer" else label))
    return where


def pinned_gates(metrics: pd.DataFrame, tolerance: float, data: dict[str, Any]) -> list[str]:
    """One ``always`` band per finite figure of one run's ``metrics``, in the metrics' order;
    ``data`` is the workload's (issuers are named by key)."""
    issuer_keys = {str(spec.get("name", key)) if isinstance(spec, dict) else key: key
                   for key, spec in (data.get("issuers") or {}).items()}
    names = workload_names(data)
    texts = []
    for row in metrics.itertuples():
        value = float(row.value)
        if not math.isfinite(value):
            continue
        spread = abs(value) * tolerance
        text = (f"{row_name(row.metric, _where(row, issuer_keys))} between "
                f"{_bound(value - spread, value, down=True)} and "
                f"{_bound(value + spread, value, down=False)}")
        gate = parse_gate("always", text, names)  # what is written reads back, and holds
        assert gate.holds(value), (text, value)
        texts.append(text)
    return texts


def promote(results: str | Path, param_id: str, seed: int, tolerance: float,
            command: str = "") -> str:
    """The text of a workload file for the run (``param_id``, ``seed``) of the sweep results
    in ``results``, its figures pinned within ``tolerance`` (a share: 0.01 is 1 %).
    ``PromoteRefused`` if there is no such run; ``ResultsFileError`` if the folder cannot be
    read; ``ScenarioError`` if its sweep file no longer reads (another version's)."""
    result = load_results(results)
    digest = result.digests.get((param_id, seed))
    if digest is None:
        cells = sorted({f"{pid} seed {s}" for pid, s in result.digests})
        listed = ", ".join(cells[:12]) + (", …" if len(cells) > 12 else "")
        raise PromoteRefused(f"{results} has no run of parameter set {param_id!r} with seed "
                             f"{seed}; expected one of: {listed}")
    meta = result.meta
    params = read_param_sets(meta["sweepText"], meta["sweepFile"], meta["workloadText"],
                             meta["workloadFile"])
    chosen = next((p for p in params if p.param_id == param_id), None)
    if chosen is None:
        raise PromoteRefused(f"the sweep file kept in {results}/sweep.json no longer makes "
                             f"parameter set {param_id} (the folder's plan was replaced by "
                             "another sweep); run the cell's sweep again into its own folder")
    metrics = result.metrics
    rows = metrics[(metrics["param_id"] == param_id) & (metrics["seed"] == seed)]
    data = copy.deepcopy(chosen.workload.data)
    data["seed"] = seed
    data["gates"] = {"always": pinned_gates(rows, tolerance, data)}
    header = [
        f"# Promoted from sweep {meta['sweep']} ({meta['sweepFile']}), parameter set "
        f"{chosen.label} ({param_id}), seed {seed}; that run's digest: {digest}.",
        f"# Each gate pins one of the run's figures within ±{tolerance * 100:g} % of it; "
        "0 stays 0.",
        "# Check it (exit 1 names every figure that moved): clearing-sim workload THIS_FILE",
    ]
    if command:
        header.insert(1, f"# Written by: {command}")
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(header) + "\n" + body
