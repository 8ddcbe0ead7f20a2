"""Sweeps: one tidy result whatever the executor and worker count; resume; output files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dask
import pandas as pd
import pytest
from distributed import Client, LocalCluster

from clearing_sim.analysis import load_results, sweep
from clearing_sim.analysis import sweeps as sweeps_module
from clearing_sim.analysis.runs import RunOutput, RunTask, execute, run_folder
from clearing_sim.analysis.sweeps import SweepOutputConflict, SweepResult
from tests.analysis.conftest import TWO_CASES


def _same(a: SweepResult, b: SweepResult) -> None:
    pd.testing.assert_frame_equal(a.metrics, b.metrics)
    pd.testing.assert_frame_equal(a.runs, b.runs)
    assert a.digests == b.digests


def test_results_are_identical_for_local_1_and_2_workers_and_a_dask_cluster(
        tiny_sweep: SweepResult, tmp_path: Path) -> None:
    one = tiny_sweep  # local, 1 worker: this process
    two = sweep(TWO_CASES, workers=2, out=tmp_path / "two")
    # Worker processes fork from the fork server the local pool started (clearing_sim already
    # imported there), as distributed's own test suite does to start workers fast.
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster, Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        on_dask = sweep(TWO_CASES, dask=client, out=tmp_path / "dask")
    _same(one, two)
    _same(one, on_dask)
    assert len(one.runs) == 4 and one.runs["digest"].is_unique
    for name in ("transactions", "attempts"):
        pd.testing.assert_frame_equal(one.frames(name), on_dask.frames(name))


def test_the_output_folder(tiny_sweep: SweepResult) -> None:
    out = tiny_sweep.out
    assert out is not None
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["seeds"] == [0, 1] and meta["command"].startswith(
        f"clearing-sim sweep {TWO_CASES} --seeds 0-1 --out ")
    assert "workload: tiny" in meta["workloadText"]
    back = load_results(out)
    pd.testing.assert_frame_equal(back.metrics, tiny_sweep.metrics)
    pd.testing.assert_frame_equal(back.runs, tiny_sweep.runs)
    digests = pd.read_csv(out / "digests.csv")
    assert list(digests["digest"]) == list(tiny_sweep.runs["digest"])
    assert list(tiny_sweep.metrics.columns[:6]) == [
        "param_id", "param_label", "case", "issuers.etherpound.behaviour.outcomes.silence",
        "seed", "metric"]
    silence = tiny_sweep.metrics["issuers.etherpound.behaviour.outcomes.silence"]
    assert str(silence.dtype) == "float64" and set(silence.dropna()) == {0.5}
    tx = tiny_sweep.frames("transactions")
    assert tx.groupby(["param_id", "seed"]).ngroups == 4


def test_an_interrupted_sweep_resumes_without_redoing_finished_runs(
        tiny_sweep: SweepResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert tiny_sweep.out is not None
    out = tmp_path / "resume"
    shutil.copytree(tiny_sweep.out, out)
    first = tiny_sweep.runs.iloc[0]
    lost = run_folder(out, first["param_id"], int(first["seed"]))
    shutil.rmtree(lost)  # this run never finished …
    lost.with_name(lost.name + ".partial").mkdir()  # … it was being written when stopped
    ran: list[tuple[str, int]] = []

    def counting(task: RunTask) -> RunOutput:
        ran.append((task.param_id, task.seed))
        return execute(task)

    monkeypatch.setattr(sweeps_module, "execute", counting)
    progress: list[tuple[int, int]] = []
    again = sweep(TWO_CASES, out=out, progress=lambda done, total: progress.append(
        (done, total)))
    assert ran == [(first["param_id"], int(first["seed"]))]
    assert progress == [(3, 4), (4, 4)]
    assert not lost.with_name(lost.name + ".partial").exists()
    _same(again, tiny_sweep)


def test_results_of_another_version_are_not_resumed(tiny_sweep: SweepResult,
                                                     tmp_path: Path) -> None:
    assert tiny_sweep.out is not None
    out = tmp_path / "old"
    shutil.copytree(tiny_sweep.out, out)
    meta = json.loads((out / "sweep.json").read_text())
    (out / "sweep.json").write_text(json.dumps({**meta, "version": "0.0.1"}))
    with pytest.raises(SweepOutputConflict, match=r"results of clearing-sim 0\.0\.1"):
        sweep(TWO_CASES, out=out)


def test_an_in_memory_sweep_keeps_its_frames_in_the_seed_order_given() -> None:
    result = sweep(TWO_CASES, [3, 2])
    assert result.out is None and len(result.runs) == 4
    assert list(result.runs["seed"]) == [3, 2, 3, 2]
    tx = result.frames("transactions")
    assert list(dict.fromkeys(tx["seed"])) == [3, 2] and tx["param_label"].nunique() == 2
