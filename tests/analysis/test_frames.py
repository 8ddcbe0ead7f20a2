"""Frames: one pass over the log, documented columns and dtypes, the same from a JSONL file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from clearing_sim.analysis import frames_from_jsonl, frames_from_log
from clearing_sim.analysis.frames import FRAME_NAMES, SCHEMAS, Frames
from clearing_sim.analysis.runs import WorkloadRun
from clearing_sim.sim.examples import example_world, redeem


@pytest.mark.parametrize("name", FRAME_NAMES)
def test_columns_and_dtypes_are_the_documented_ones(tiny_run: WorkloadRun, name: str) -> None:
    frame = tiny_run.frames[name]
    assert [(c, str(t)) for c, t in frame.dtypes.items()] == [
        (c, str(pd.Series(dtype=t).dtype)) for c, t in SCHEMAS[name]]


def test_documentation_lists_every_column() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "analysis.md").read_text()
    for name, columns in SCHEMAS.items():
        assert f"### `{name}`" in doc, name
        for column, dtype in columns:
            assert f"| `{column}` | `{dtype}` |" in doc, (name, column)


def test_transactions_agree_with_the_log(tiny_run: WorkloadRun) -> None:
    tx = tiny_run.transactions
    assert tx["transaction_id"].is_unique and len(tx) > 10
    assert set(tx["use_case"]) == {"redeem", "swap"}
    assert set(tx["mode"].dropna()) == {1, 2}
    swaps = tx[tx["use_case"] == "swap"]
    assert swaps["target_issuer"].notna().all() and swaps["mint_mode"].notna().all()
    settled = tx[tx["lifecycle_status"] == "settled"]
    expected = (settled["terminal_ms"] - settled["initiated_ms"]).astype(float) / 1000
    assert (settled["settlement_latency_s"] == expected).all()
    assert tx.loc[tx["lifecycle_status"] != "settled", "settlement_latency_s"].isna().all()
    assert (tx["terminal_at"] - tx["initiated_at"]).dropna().min() >= pd.Timedelta(0)
    parked = tx[tx["parked"]]
    assert len(parked) and parked["park_cause"].notna().all()
    assert (parked["park_issuer"] == "Ether Pound").all() and (parked["park_mode"] == 2).all()


def test_deliveries_and_attempts_agree(tiny_run: WorkloadRun) -> None:
    deliveries, attempts = tiny_run.frames.deliveries, tiny_run.frames.attempts
    assert deliveries["attempts"].sum() == len(attempts)
    assert (deliveries["subscription"] == "treasury").all()
    early = deliveries[deliveries["created_ms"] < 1_200_000 - 360_000]  # the receiver is down
    assert (early["attempts"] > 1).all()
    delivered = deliveries[deliveries["outcome"] == "delivered"]
    assert (delivered["delivered_ms"] >= delivered["created_ms"]).all()
    assert set(attempts["outcome"]) == {"success", "failure"}


def test_instructions_and_saga_steps(tiny_run: WorkloadRun) -> None:
    instructions, steps = tiny_run.frames.instructions, tiny_run.frames.saga_steps
    assert set(instructions["issuer"]) == {"Ether Pound"}
    done = instructions[instructions["final_status"] == "COMPLETED"]
    assert (done["approved_ms"] >= done["pending_approval_ms"]).all()
    assert instructions["silent"].any()
    assert set(steps["name"]) >= {"Received", "Validated", "Lock", "Earmarked", "Burning"}


def test_the_same_frames_from_a_jsonl_log(tmp_path: Path) -> None:
    cast = example_world(seed=2)
    cast.world.initiate(cast.member.id, redeem(cast.asset(2), "10.00"))
    cast.world.run_all()
    with (tmp_path / "log.jsonl").open("w") as out:
        cast.world.log.write_jsonl(out)
    from_log = frames_from_log(cast.world.log)
    from_file = frames_from_jsonl(tmp_path / "log.jsonl")
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(from_log[name], from_file[name])
    tx = from_log.transactions  # no workload records: what only the driver knew is missing
    assert len(tx) == 1 and tx["use_case"].isna().all() and tx["mode"].isna().all()
    assert tx["lifecycle_status"].iloc[0] == "settled"


def test_only_the_frames_asked_for_are_built(tiny_run: WorkloadRun) -> None:
    assert tiny_run.frames.names() == FRAME_NAMES
    small = frames_from_log([], ("transactions",))
    assert small.names() == ("transactions",) and len(small.transactions) == 0
    with pytest.raises(AttributeError, match="was not built"):
        _ = small.attempts


def test_parquet_round_trip_keeps_dtypes(tiny_run: WorkloadRun, tmp_path: Path) -> None:
    tiny_run.frames.to_parquet(tmp_path)
    back = Frames.read_parquet(tmp_path)
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(back[name], tiny_run.frames[name])


def test_parquet_round_trip_keeps_category_columns_that_met_no_value(
        tiny_run: WorkloadRun, tmp_path: Path) -> None:
    """A run in which nothing parked has ``park_*`` category columns without categories:
    they come back from Parquet as such (``str`` categories, not ``object``)."""
    tx = tiny_run.frames.transactions
    calm = tx[~tx["ever_parked"]].reset_index(drop=True)
    calm = calm.assign(**{c: calm[c].cat.remove_unused_categories()
                          for c in ("park_cause", "park_leg", "park_issuer", "reason")})
    assert len(calm) and len(calm["park_cause"].cat.categories) == 0
    Frames({"transactions": calm}).to_parquet(tmp_path)
    pd.testing.assert_frame_equal(Frames.read_parquet(tmp_path).transactions, calm)


def test_read_jsonl_with_kinds_parses_only_their_lines_and_misses_none(tmp_path: Path) -> None:
    """``kinds`` skips other lines unparsed, yet a string or a nested key that looks like a
    wanted kind neither hides a wanted record nor lets another one through."""
    from clearing_sim.analysis.frames import read_jsonl
    from clearing_sim.sim.eventlog import EventLog

    log = EventLog(lambda: 5)
    log.append("a.b", note='"kind":"x.y"', body={"kind": "x.y"})
    log.append("x.y", n=1)
    log.append("x.yz", n=2)
    log.append("x.y", note="kind", n=3)
    path = tmp_path / "log.jsonl"
    with path.open("w", encoding="utf-8") as out:
        log.write_jsonl(out)
    assert [(kind, fields["n"]) for _, kind, fields in read_jsonl(path, ["x.y"])] == \
        [("x.y", 1), ("x.y", 3)]
    assert len(list(read_jsonl(path))) == 4


def test_read_jsonl_hints_fields_and_lines_across_chunks(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``hints`` skips a kind's lines without one of its strings; ``fields`` reads only the
    named fields (None when missing); a line split between two reads of the file, and a last
    line without its newline, are read whole."""
    from clearing_sim.analysis import frames
    from clearing_sim.sim.eventlog import EventLog

    monkeypatch.setattr(frames, "_CHUNK", 7)  # smaller than any line
    log = EventLog(lambda: 5)
    log.append("saga.event", event="Burned", n=1)
    log.append("saga.event", event="ParkedOnSilence", n=2, note="ünï")
    log.append("x.y", n=3, other={"deep": [1, 2]})
    log.append("x.y", m=4)
    path = tmp_path / "log.jsonl"
    with path.open("w", encoding="utf-8") as out:
        log.write_jsonl(out)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.rstrip("\n"), encoding="utf-8")
    got = list(frames.read_jsonl(path, ["saga.event", "x.y"],
                                 hints={"saga.event": ['"event":"ParkedOnSilence"']},
                                 fields={"x.y": ["n"]}))
    assert [(kind, dict(f)) for _, kind, f in got] == [
        ("saga.event", {"at": 5, "event": "ParkedOnSilence", "kind": "saga.event", "n": 2,
                        "note": "ünï", "seq": 1}),
        ("x.y", {"at": 5, "kind": "x.y", "n": 3}), ("x.y", {"at": 5, "kind": "x.y", "n": None})]


def test_the_metrics_frames_alone_from_a_file_are_those_of_the_run(tmp_path: Path) -> None:
    """Without the attempts frame, an attempt's line is read for four fields only: the
    three frames the metrics need are still those of the in-memory run."""
    from clearing_sim.analysis import run_workload
    from tests.analysis.conftest import TINY

    run = run_workload(TINY, 0, log=tmp_path / "log.jsonl")
    names = ("transactions", "deliveries", "subscriptions")
    from_file = frames_from_jsonl(tmp_path / "log.jsonl", names)
    assert from_file.names() == names and len(from_file.deliveries) > 0
    for name in names:
        pd.testing.assert_frame_equal(from_file[name], run.frames[name])



def test_reading_a_log_and_its_metrics_import_neither_the_engine_nor_plotting() -> None:
    """Every module imported stays in the process: reading a log into frames and computing
    their metrics import pandas, pyarrow and msgspec, not attrs (the engine's values), the
    engine, matplotlib, Parquet or Dask."""
    probe = ("import json, sys\n"
             "import clearing_sim.analysis.frames, clearing_sim.analysis.metrics\n"
             "print(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    modules = json.loads(done.stdout)
    assert "clearing_sim.analysis.frames" in modules and "pandas" in modules
    heavy = {"attr", "attrs", "matplotlib", "dask", "simpy"}
    assert [m for m in modules if m.split(".")[0] in heavy] == []
    assert [m for m in modules if m.startswith(
        ("clearing_sim.sim", "clearing_sim.domain.delivery", "pyarrow.parquet"))] == []
