"""A sweep's output folder read back: every damaged file refused by name, never a traceback."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.analysis import load_results
from clearing_sim.analysis.cli import sweep as sweep_command
from clearing_sim.analysis.resultfiles import (
    ResultsFileError,
    ResultsFileMissing,
    read_plan,
    read_table,
)
from clearing_sim.analysis.runs import run_folder
from clearing_sim.analysis.sweeps import SweepResult
from tests.analysis.conftest import TWO_CASES
from tests.analysis.kit import snapshot

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8)


def _flipped(original: bytes, changes: list[tuple[int, int]]) -> bytes:
    damaged = bytearray(original)
    for where, byte in changes:
        damaged[where % len(damaged)] = byte
    return bytes(damaged)


def damaged(original: bytes, is_json: bool) -> st.SearchStrategy[bytes]:
    """What a damaged copy of a file may hold: any bytes, the file cut short, bytes of it
    overwritten; for a JSON object also any JSON, or the object with a key removed or its
    value replaced by any JSON."""
    found = [st.binary(max_size=64),
             st.integers(0, len(original) - 1).map(lambda n: original[:n]),
             st.lists(st.tuples(st.integers(0, len(original) - 1), st.integers(0, 255)),
                      min_size=1, max_size=4).map(lambda changes: _flipped(original, changes))]
    if is_json:
        data: dict[str, Any] = json.loads(original)
        key = st.sampled_from(sorted(data))
        found += [_JSON.map(lambda value: json.dumps(value).encode()),
                  key.map(lambda k: json.dumps({n: v for n, v in data.items() if n != k})
                          .encode()),
                  st.tuples(key, _JSON).map(lambda kv: json.dumps({**data, kv[0]: kv[1]})
                                            .encode())]
    return st.one_of(found)


@contextmanager
def _copy(results: SweepResult) -> Iterator[Path]:
    """A copy of a finished sweep's output folder, removed after."""
    assert results.out is not None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        shutil.copytree(results.out, out)
        yield out


def _first_run(results: SweepResult, out: Path) -> Path:
    first = results.runs.iloc[0]
    return run_folder(out, first["param_id"], int(first["seed"]))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_damaged_results_file_is_refused_by_name_or_read_whole(
        tiny_sweep: SweepResult, data: st.DataObject) -> None:
    """Whatever a results file holds (any bytes, cut short, overwritten in places, JSON of
    another shape), reading the results either refuses with ``ResultsFileError`` naming
    that file, or answers results whose every property can be used (a run whose id was
    changed to another run's has no frames: ``ResultsFileMissing``, as a frame not kept)."""
    name = data.draw(st.sampled_from(["sweep.json", "metrics.parquet", "runs.parquet",
                                      "RUN/transactions.parquet"]))
    with _copy(tiny_sweep) as out:
        path = out / name if not name.startswith("RUN/") \
            else _first_run(tiny_sweep, out) / name.removeprefix("RUN/")
        path.write_bytes(data.draw(damaged(path.read_bytes(), name.endswith(".json"))))
        try:
            results = load_results(out)
            assert (results.seeds, results.params, results.command, results.digests,
                    results.unfinished) is not None
            results.frames("transactions")
        except ResultsFileMissing as error:  # a run the results name kept no such frame
            assert error.path.name == "transactions.parquet" and name == "runs.parquet"
        except ResultsFileError as error:
            assert error.path == path and str(error).startswith(f"{path}: ")


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_sweep_resuming_into_a_damaged_folder_is_refused_by_name_and_writes_nothing(
        tiny_sweep: SweepResult, data: st.DataObject) -> None:
    """Resuming a sweep in a folder whose plan, or a finished run's ``run.json`` or
    ``metrics.parquet``, holds anything: either the sweep resumes (exit 0), or it is
    refused with exit code 2 and a message naming the file (the plan of another version:
    the folder), and not one byte of the folder has changed."""
    name = data.draw(st.sampled_from(["sweep.json", "RUN/run.json", "RUN/metrics.parquet"]))
    with _copy(tiny_sweep) as out:
        path = out / name if not name.startswith("RUN/") \
            else _first_run(tiny_sweep, out) / name.removeprefix("RUN/")
        path.write_bytes(data.draw(damaged(path.read_bytes(), name.endswith(".json"))))
        before = snapshot(out)
        result = CliRunner().invoke(sweep_command, [str(TWO_CASES), "--out", str(out)])
        assert result.exit_code in (0, 2) and "Traceback" not in result.output, result.output
        if result.exit_code == 2:
            named = f"Error: {path}: " in result.output
            conflict = name == "sweep.json" and f"Error: {out} holds results of" in result.output
            assert named or conflict, result.output
            assert snapshot(out) == before


def test_a_plan_or_table_of_the_wrong_shape_names_the_field(tiny_sweep: SweepResult,
                                                            tmp_path: Path) -> None:
    """A plan lacking a field its readers use, or holding another kind in one, and a table
    lacking a column or holding another kind in one, are refused at that field."""
    assert tiny_sweep.out is not None
    plan = json.loads((tiny_sweep.out / "sweep.json").read_text())
    for changed, message in [({**plan, "seeds": [0, "1"]},
                              "seeds[1]: expected an integer, found a string"),
                             ({**plan, "seeds": {}}, "seeds: expected an array, found an object"),
                             ({**plan, "params": [{"label": "x"}]},
                              "params[0].param_id: missing; expected a string")]:
        (tmp_path / "sweep.json").write_text(json.dumps(changed))
        with pytest.raises(ResultsFileError) as refused:
            read_plan(tmp_path)
        assert str(refused.value) == f"{tmp_path / 'sweep.json'}: {message}"
    table = tmp_path / "t.parquet"
    tiny_sweep.runs.assign(seed=tiny_sweep.runs["seed"].astype("str")).to_parquet(table)
    with pytest.raises(ResultsFileError, match=r"t\.parquet: seed: expected a column of int64, "
                                               r"found str"):
        read_table(table, [("param_id", "str"), ("seed", "int64")])
    with pytest.raises(ResultsFileMissing, match="no such file"):
        read_table(tmp_path / "nothing.parquet", [])
    pd.DataFrame({"a": [1]}).to_parquet(table)
    with pytest.raises(ResultsFileError, match="b: missing column"):
        read_table(table, [("a", "int64"), ("b", "str")])
