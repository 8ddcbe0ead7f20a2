"""The workload driver: arrivals through the public API, seeded streams, receivers, set-up."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from clearing_sim.analysis import load_workload, run_workload
from clearing_sim.analysis.driver import SetupRefused, WorkloadDriver, simulate
from clearing_sim.analysis.frames import FRAME_NAMES
from clearing_sim.analysis.model import Arrivals
from clearing_sim.analysis.runs import WorkloadRun
from tests.analysis.conftest import TINY
from tests.analysis.kit import variant


def test_same_workload_and_seed_give_the_same_log_and_another_seed_another() -> None:
    workload = load_workload(TINY)
    first, again, other = simulate(workload, 3), simulate(workload, 3), simulate(workload, 4)
    assert first.log.digest() == again.log.digest()
    assert first.log.digest() != other.log.digest()


def test_every_initiation_goes_through_the_api_and_is_logged_by_the_driver() -> None:
    driver = WorkloadDriver(load_workload(TINY), 0)
    world = driver.run()
    posts = world.log.select("api.request", method="POST", path="/api/v1/transactions")
    initiated = world.log.select("workload.initiated")
    assert len(posts) == driver.initiated + driver.refused == len(initiated) > 0
    assert all(r["status"] == 201 for r in posts)
    assert {r["transactionId"] for r in initiated} == {tx.id for tx in world.transactions}
    assert Counter(r["useCase"] for r in initiated).keys() == {"redeem", "swap"}
    for record in initiated:  # arrivals only inside the horizon
        assert record.at_ms < 3_600_000
    started = world.log.select("workload.started")[0]
    assert started["subscriptions"] == {"treasury": driver.subscriptions["treasury"]}


def test_amounts_stay_in_their_range_and_swaps_go_to_another_asset() -> None:
    world = simulate(load_workload(TINY), 1)
    for record in world.log.select("workload.initiated"):
        assert 10 <= float(str(record["amount"])) <= 500
        if record["useCase"] == "swap":
            assert record["sourceAsset"] != record["targetAsset"]
            assert record["targetIssuerId"] is not None


def test_an_intraday_profile_keeps_arrivals_out_of_closed_hours(tmp_path: Path) -> None:
    hours = [0.0] * 8 + [1.0] * 8 + [0.0] * 8  # open 08:00-16:00 UTC only
    path = variant(tmp_path, "    arrivals: {rate_per_hour: 24}",
                   f"    arrivals: {{rate_per_hour: 6, intraday: {hours}}}")
    path.write_text(path.read_text().replace("horizon: 1h", "horizon: 24h"))
    world = simulate(load_workload(path), 0)
    times = [r.at_ms for r in world.log.select("workload.initiated")]
    assert len(times) > 20
    assert all(8 * 3_600_000 <= t < 16 * 3_600_000 for t in times)


def test_rate_at_follows_the_hour_of_day() -> None:
    arrivals = Arrivals(10.0, tuple(float(h) for h in range(24)))
    assert arrivals.peak_per_hour == 230.0
    assert arrivals.rate_at(0) == 0.0 and arrivals.rate_at(25 * 3_600_000 + 5) == 10.0


def test_receiver_outages_switch_the_endpoint_at_their_start(tmp_path: Path) -> None:
    path = variant(tmp_path, "outages: [{from: 0s, until: 20m}]",
                   "outages: [{from: 10m, until: 20m, status: 500}]")
    world = simulate(load_workload(path), 0)
    receivers = world.log.select("webhook.receiver")
    assert [(r.at_ms, r["status"], r["untilMs"]) for r in receivers] == [
        (0, 200, None), (600_000, 500, 1_200_000)]
    statuses = {r["status"] for r in world.log.select("webhook.arrival")
                if 600_000 <= r.at_ms < 1_200_000}
    assert statuses <= {500}


def test_a_subscription_the_api_refuses_is_a_setup_error_at_its_line(tmp_path: Path) -> None:
    path = variant(tmp_path, "url: https://hooks.northbank.example/clearing",
                   "url: https://10.0.0.7/clearing")
    with pytest.raises(SetupRefused, match=r"w\.yaml:34:5: webhooks\.treasury: the API refused "
                                           r"to create webhook treasury: 400 url_not_public"):
        WorkloadDriver(load_workload(path), 0)


@pytest.mark.parametrize("name", ["tiny.yaml", "disable.yaml"])
def test_a_streamed_run_writes_the_same_log_forgets_what_ended_and_builds_the_same_frames(
        name: str, tmp_path: Path) -> None:
    """``log_sink`` streams the log and forgets finished transactions: the digest and the
    frames read back from the file are those of the in-memory run (issue: a long run's memory
    stays flat)."""
    path = TINY.parent / name
    plain = run_workload(path, 1, log=tmp_path / "plain.jsonl")
    streamed = run_workload(path, 1, log=tmp_path / "streamed.jsonl", stream=True)
    assert streamed.digest == plain.digest and streamed.records == plain.records
    assert (tmp_path / "streamed.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()
    for frame in FRAME_NAMES:
        pd.testing.assert_frame_equal(getattr(streamed.frames, frame),
                                      getattr(plain.frames, frame))
    assert streamed.metrics.equals(plain.metrics)
    with (tmp_path / "again.jsonl").open("w", encoding="utf-8") as sink:
        driver = WorkloadDriver(load_workload(path), 1, log_sink=sink)
        world = driver.run()
    assert driver.initiated > 0 and len(world.transactions) == 0 and world.sagas == {}


def test_a_run_reporting_progress_is_the_same_run(tiny_run: WorkloadRun) -> None:
    """Issue 29 §2: the progress bar's hook pauses the run every few thousand events to report
    the virtual time reached and the transactions initiated; the log and digest are unchanged."""
    seen: list[tuple[int, int]] = []
    run = run_workload(TINY, seed=0, progress=lambda now, n: seen.append((now, n)))
    assert run.digest == tiny_run.digest and run.end_ms == tiny_run.end_ms
    assert seen and seen == sorted(seen) and seen[-1] == (run.end_ms, len(run.transactions))


def test_a_streamed_run_reporting_progress_is_the_same_run(tiny_run: WorkloadRun,
                                                           tmp_path: Path) -> None:
    """`workload --stream` on a terminal reports through the same hook: same log, digest."""
    seen: list[tuple[int, int]] = []
    run = run_workload(TINY, seed=0, log=tmp_path / "log.jsonl", stream=True,
                       progress=lambda now, n: seen.append((now, n)))
    assert run.digest == tiny_run.digest and seen[-1][0] == run.end_ms
