"""Sweeps: one tidy result whatever the executor and worker count; resume; output files."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import dask
import pandas as pd
import pytest
from click.testing import CliRunner
from distributed import Client, LocalCluster

from clearing_sim.analysis import load_results, load_sweep, parse_seeds, sweep
from clearing_sim.analysis import sweeps as sweeps_module
from clearing_sim.analysis.cli import sweep as sweep_command
from clearing_sim.analysis.driver import SetupRefused
from clearing_sim.analysis.frames import SCHEMAS
from clearing_sim.analysis.runs import RunOutput, RunTask, execute, run_folder
from clearing_sim.analysis.sweeps import SweepOutputConflict, SweepResult
from clearing_sim.scenario.errors import ScenarioInvalid
from clearing_sim.sim.issuer import IssuerBehaviour
from tests.analysis.conftest import TINY, TWO_CASES
from tests.analysis.kit import variant

SILENCE = "issuers.etherpound.behaviour.outcomes.silence"


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
    silence = tiny_sweep.metrics[SILENCE]
    assert str(silence.dtype) == "float64" and set(silence) == {0.1, 0.5}
    tx = tiny_sweep.frames("transactions")
    assert tx.groupby(["param_id", "seed"]).ngroups == 4


def test_concatenated_frames_keep_category_columns_with_every_runs_values(
        tiny_sweep: SweepResult) -> None:
    """Runs that met different values (one parked, one did not) still concatenate into a
    ``category`` column: its categories are the union of the runs', sorted."""
    tx = tiny_sweep.frames("transactions")
    for column, dtype in SCHEMAS["transactions"]:
        if dtype == "category":
            assert isinstance(tx[column].dtype, pd.CategoricalDtype), column
            categories = list(tx[column].cat.categories)
            assert categories == sorted(set(tx[column].dropna())), column


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


def test_parameter_columns_hold_each_sets_effective_value(tiny_sweep: SweepResult,
                                                         tmp_path: Path) -> None:
    """Not only where a set overrides the path: the baseline's silence is the workload's 0.1;
    a field the workload leaves out has the model's default, or no value if it has none."""
    params = tiny_sweep.params.set_index("param_label")
    assert params[SILENCE].to_dict() == {"baseline": 0.1, "silent-etherpound": 0.5}
    by_run = tiny_sweep.runs.set_index(["param_label", "seed"])[SILENCE].to_dict()
    assert by_run == {("baseline", 0): 0.1, ("baseline", 1): 0.1,
                      ("silent-etherpound", 0): 0.5, ("silent-etherpound", 1): 0.5}
    assert tiny_sweep.out is not None
    meta = json.loads((tiny_sweep.out / "sweep.json").read_text())
    assert [p["values"] for p in meta["params"]] == [{SILENCE: 0.1}, {SILENCE: 0.5}]

    variant(tmp_path, "outcomes: {rejected: 0.1, failed: 0.1, silence: 0.1}",
            "outcomes: {rejected: 0.1, failed: 0.1}")  # silence left out: the model's 0
    (tmp_path / "s.yaml").write_text(
        "sweep: s\nworkload: w.yaml\nseeds: 0\ncases:\n  baseline: {}\n"
        f"  silent: {{{SILENCE}: 0.5}}\n  drained: {{drain: 2h}}\n")
    params = sweep(tmp_path / "s.yaml").params.set_index("param_label")
    assert params[SILENCE].to_dict() == {"baseline": IssuerBehaviour().p_silence,
                                         "silent": 0.5, "drained": 0.0}
    assert str(params["drain"].dtype) == "str"  # no default: until nothing is scheduled
    assert params["drain"].isna().to_dict() == {"baseline": True, "silent": True,
                                                "drained": False}
    assert params.loc["drained", "drain"] == "2h"


def test_sweep_takes_seeds_as_the_command_line_writes_them(tiny_sweep: SweepResult) -> None:
    assert parse_seeds("0-2,7") == (0, 1, 2, 7)  # exported beside sweep
    assert load_sweep(TWO_CASES, "0-2,7").seeds == (0, 1, 2, 7)
    assert load_sweep(TWO_CASES, 4).seeds == (4,)
    seed_1 = {key: digest for key, digest in tiny_sweep.digests.items() if key[1] == 1}
    assert sweep(TWO_CASES, "1").digests == seed_1
    assert sweep(TWO_CASES, 1).digests == seed_1
    with pytest.raises(ValueError, match="the range 3-1 runs backwards"):
        sweep(TWO_CASES, "3-1")
    with pytest.raises(ValueError, match="seed 1 is listed twice"):
        sweep(TWO_CASES, "0-1,1")


PRIVATE = "  private: {webhooks.treasury.url: \"https://127.0.0.1/x\"}\n"


def test_a_setup_an_override_makes_the_api_refuse_is_reported_at_the_override(
        tmp_path: Path) -> None:
    shutil.copy(TINY, tmp_path / "tiny.yaml")
    (tmp_path / "s.yaml").write_text(
        f"sweep: s\nworkload: tiny.yaml\nseeds: 0\ncases:\n{PRIVATE}  public: {{}}\n")
    result = CliRunner().invoke(sweep_command, [str(tmp_path / "s.yaml"), "--out",
                                                str(tmp_path / "out")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (f"{tmp_path / 's.yaml'}:5:36: cases.private.webhooks.treasury.url: with "
            "webhooks.treasury.url = https://127.0.0.1/x the set-up is refused: "
            "webhooks.treasury: the API refused to create webhook treasury: 400 url_not_public"
            ) in result.output
    assert "tiny.yaml:" not in result.output
    assert not (tmp_path / "out").exists()  # refused before anything runs or is written
    with pytest.raises(ScenarioInvalid) as caught:
        sweep(tmp_path / "s.yaml")
    assert [(p.path, p.location.line) for p in caught.value.problems] == [
        (str(tmp_path / "s.yaml"), 5)]


def test_a_setup_the_workload_itself_makes_the_api_refuse_stays_at_its_line(
        tmp_path: Path) -> None:
    bad = variant(tmp_path, "url: https://hooks.northbank.example/clearing",
                  "url: https://127.0.0.1/hooks")
    (tmp_path / "s.yaml").write_text(
        "sweep: s\nworkload: w.yaml\nseeds: 0\ncases:\n"
        f"  quiet: {{{SILENCE}: 0.0}}\n  baseline: {{}}\n")
    where = re.escape(f"{bad}:34:5: webhooks.treasury: the API refused")
    with pytest.raises(SetupRefused, match=f"^{where}"):
        sweep(tmp_path / "s.yaml")
