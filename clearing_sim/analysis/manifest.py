"""Every output's manifest: what made it, so that it can be checked and made again.

Public names: ``MANIFEST_FILE``, ``MANIFEST_KEY``, ``ManifestConflict``, ``ManifestMissing``,
``check_results``,
``input_file``, ``read_parquet_manifest``, ``run_manifest``, ``sweep_manifest``,
``workload_manifest``, ``write_manifest``, ``write_parquet``.

A manifest is a JSON object: ``manifest`` (its format, 1), ``kind`` (``workload``, ``run`` of
a sweep, or ``sweep``), ``version`` (clearing-sim's), ``inputs`` (each input file's path as
given and the sha256 of its text), the seed(s), the digest(s) and record counts, and the
``command`` that makes the output again. Nothing in it changes between identical runs: no
wall-clock time, no host name, no path the user did not write. It is written

- into every Parquet file's schema metadata, under ``MANIFEST_KEY`` (``write_parquet``;
  ``pyarrow.parquet.read_schema(path).metadata``), the run's manifest in a run's files and
  the sweep's in ``metrics.parquet`` and ``runs.parquet`` of a sweep's folder;
- as ``manifest.json`` in the output folder (and in each sweep run's ``run.json``);
- in the HTML report's footer.

``check_results(folder, runs)`` is what ``clearing-sim report`` asks before writing a page:
``ManifestConflict`` (exit 2) when the results' manifests name different versions or input
files (a ``metrics.parquet`` copied from another sweep, a run of another version or of
another workload file); ``None`` for results written before manifests existed, a
``ManifestMissing`` warning (``clearing-sim report`` prints it and goes on), as are runs of a
resumed sweep finished before manifests existed.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pyarrow  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from pyarrow import ArrowException

import clearing_sim
from clearing_sim.analysis.resultfiles import ResultsFileError, read_json_object
from clearing_sim.domain.jsontext import parse_untrusted

__all__ = ["MANIFEST_FILE", "MANIFEST_KEY", "ManifestConflict", "ManifestMissing",
           "check_results", "input_file",
           "read_parquet_manifest", "run_manifest", "sweep_manifest", "workload_manifest",
           "write_manifest", "write_parquet"]

MANIFEST_FILE = "manifest.json"
MANIFEST_KEY = b"clearing_sim.manifest"
FORMAT = 1


class ManifestConflict(ResultsFileError):
    """The results' manifests name different versions or inputs: one report would mix them."""


class ManifestMissing(UserWarning):
    """Results, or some of their runs, were written before manifests existed: read, but
    their versions and inputs cannot be checked."""


def input_file(path: str | Path, text: str) -> dict[str, str]:
    """An input as a manifest names it: its path as given and the sha256 of its text."""
    return {"file": str(path), "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _base(kind: str, inputs: dict[str, dict[str, str]]) -> dict[str, Any]:
    return {"manifest": FORMAT, "kind": kind, "version": clearing_sim.__version__,
            "inputs": inputs}


def workload_manifest(workload: dict[str, str], seed: int, digest: str, records: int,
                      transactions: int, command: str) -> dict[str, Any]:
    """The manifest of one ``clearing-sim workload`` run."""
    return {**_base("workload", {"workload": workload}), "seed": seed, "digest": digest,
            "records": records, "transactions": transactions, "command": command}


def run_manifest(workload: dict[str, str], param_id: str, seed: int, digest: str,
                 records: int, transactions: int, command: str) -> dict[str, Any]:
    """The manifest of one run of a sweep (its parameter set's id names its overrides)."""
    return {**_base("run", {"workload": workload}), "param_id": param_id, "seed": seed,
            "digest": digest, "records": records, "transactions": transactions,
            "command": command}


def sweep_manifest(sweep: dict[str, str], workload: dict[str, str], runs: pd.DataFrame,
                   command: str) -> dict[str, Any]:
    """The manifest of a sweep's results: every run's seed, digest and record count."""
    rows = [{"param_id": r.param_id, "seed": int(r.seed), "digest": r.digest,
             "records": int(r.records), "transactions": int(r.transactions)}
            for r in runs.itertuples()]
    return {**_base("sweep", {"sweep": sweep, "workload": workload}),
            "seeds": list(dict.fromkeys(row["seed"] for row in rows)),
            "records": sum(row["records"] for row in rows), "runs": rows, "command": command}


def _text(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """``manifest`` as indented JSON in the file at ``path`` (``MANIFEST_FILE`` of a folder)."""
    path.write_text(_text(manifest), encoding="utf-8")


def write_parquet(frame: pd.DataFrame, path: Path, manifest: dict[str, Any]) -> None:
    """``frame.to_parquet(path, index=False)`` with ``manifest`` in the schema metadata."""
    table = pyarrow.Table.from_pandas(frame, preserve_index=False)
    metadata = {**(table.schema.metadata or {}),
                MANIFEST_KEY: json.dumps(manifest, sort_keys=True).encode("utf-8")}
    pq.write_table(table.replace_schema_metadata(metadata), path)


def read_parquet_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest in a Parquet file's metadata; None if it has none."""
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (ArrowException, OSError) as error:
        raise ResultsFileError(path, f"expected a Parquet table: {error}") from None
    if MANIFEST_KEY not in metadata:
        return None
    try:
        found = parse_untrusted(metadata[MANIFEST_KEY])
    except ValueError as error:
        raise ResultsFileError(path, f"its manifest is not JSON: {error}") from None
    if not isinstance(found, dict):
        raise ResultsFileError(path, "its manifest is not a JSON object")
    return found


def _differ(first: tuple[Path, dict[str, Any]], other: tuple[Path, dict[str, Any]],
            inputs: tuple[str, ...]) -> None:
    (path, mine), (there, theirs) = first, other
    if mine.get("version") != theirs.get("version"):
        raise ManifestConflict(there, f"made by clearing-sim {theirs.get('version')}, but "
                               f"{path} by {mine.get('version')}: one report would mix "
                               "versions; rerun the sweep into a new folder")
    for name in inputs:
        wanted = mine.get("inputs", {}).get(name, {})
        found = theirs.get("inputs", {}).get(name, {})
        if wanted.get("sha256") != found.get("sha256"):
            raise ManifestConflict(there, f"made from another {name} file ({found.get('file')} "
                                   f"sha256 {str(found.get('sha256'))[:12]}…) than {path} "
                                   f"({wanted.get('file')} sha256 "
                                   f"{str(wanted.get('sha256'))[:12]}…): one report would mix "
                                   "inputs; rerun the sweep into a new folder")


def check_results(folder: Path, run_folders: list[Path]) -> dict[str, Any] | None:
    """The sweep manifest of the results in ``folder`` once every manifest there agrees on
    the version and inputs (``ManifestConflict`` names the first that does not); None when
    the results have no ``manifest.json`` (written before manifests existed). Either, and
    runs without a manifest (finished before manifests existed, then resumed), are a
    ``ManifestMissing`` warning."""
    path = folder / MANIFEST_FILE
    if not path.exists():
        warnings.warn(f"{folder} holds results written before manifests existed (no "
                      f"{MANIFEST_FILE}): their versions and inputs cannot be checked",
                      ManifestMissing, stacklevel=2)
        return None
    manifest = read_json_object(path)
    first = (path, manifest)
    for name in ("metrics.parquet", "runs.parquet"):
        found = read_parquet_manifest(folder / name)
        if found is None:
            raise ManifestConflict(folder / name, f"has no manifest, but {path} does: the "
                                   "results were written by two versions")
        _differ(first, (folder / name, found), ("sweep", "workload"))
    unchecked = 0
    for run in run_folders:
        info = read_json_object(run / "run.json")
        found = info.get("manifest")
        if found is None:
            unchecked += 1
            continue
        if not isinstance(found, dict):
            raise ResultsFileError(run / "run.json", "expected an object", "manifest")
        _differ(first, (run / "run.json", found), ("workload",))
    if unchecked:
        warnings.warn(f"{unchecked} of the {len(run_folders)} runs in {folder} were written "
                      "before manifests existed: their versions and inputs cannot be checked",
                      ManifestMissing, stacklevel=2)
    return manifest
