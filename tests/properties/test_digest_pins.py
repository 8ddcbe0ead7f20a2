"""Engine optimisations keep every log byte for byte: the digests of a few seeded runs, pinned.

Issue "the engine, three times faster": every optimisation keeps "the run's log byte-identical
to today's for the same seed". DESIGN.md: "the log digest is a run's fingerprint; default runs
must keep their digests unless your issue changes behaviour on purpose". A change that alters
behaviour on purpose updates the pins in the same commit and says why.

The runs cover each path of the engine: the benchmark's redeem workload in all three modes
(``bench_sagas.py``), the determinism test's script (a swap, an armed rejection, an armed
silence, a cancel), the analysts' mixed workload (swaps, drawn rejections, failures and
silences, a webhook subscription with a receiver outage) in memory and streamed to a sink,
and the whole scenario library (its combined digest).

The values are those of main after issue 26 (verdicts: a Mode 2 issuer holds at
PENDING_APPROVAL and the saga sends execute once the instruction is created, whatever status
the issuer stands at; swaps move the burn first and compensate a burned source whose mint is
then rejected), which changed behaviour on purpose, as issue 13 had before it. The library's
combined digest also changes when a scenario is added (issue 14's forged cursors, issue 16's
exported journal walkthrough, issue 29's RTGS calendar: the library without that file still
digests to 424d0a10…, the pin before it).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from clearing_sim.analysis.driver import WorkloadDriver
from clearing_sim.analysis.loader import load_workload
from clearing_sim.cli import main
from clearing_sim.sim.examples import example_world
from clearing_sim.sim.workload import poisson_redeems

from .test_determinism import _mixed_workload_digest

ROOT = Path(__file__).resolve().parents[2]

BENCH = {
    0: "fe29c0498e5eff1d995374ab31814f2e08d7677153d018edec78fce64ea6d9fe",
    7: "282d46cdbcbc0b1ad387f2561c67967572006a84ce3eb492bf54b530d48c09ec",
}
SCRIPT = {
    0: "852eb85751b82f653fddb782a363b472673db024979966896e25f792428957b2",
    20260101: "76cee49002eb11663720efb483b2af6601abda85f353a595c1f2e31dc4999430",
}
MIXED_WORKLOAD = "7705f02b5515c8509b784864feed2211da890c09ab17dc01d4ce6e08e7f1c75b"
SCENARIO_LIBRARY = "b54e9cc7fd8dfbf864fa505aa41aa5417d08e37113c8973f556d963f23cdd3b6"


@pytest.mark.parametrize("seed", sorted(BENCH))
def test_the_benchmarks_redeem_workload_keeps_its_digest(seed: int) -> None:
    cast = example_world(seed)
    cast.world.env.process(poisson_redeems(cast, 300, mean_gap_ms=2_000))
    cast.world.run_all()
    assert cast.world.log.digest() == BENCH[seed]


@pytest.mark.parametrize("seed", sorted(SCRIPT))
def test_the_determinism_script_keeps_its_digest(seed: int) -> None:
    assert _mixed_workload_digest(seed)[0] == SCRIPT[seed]


@pytest.mark.parametrize("streamed", [False, True], ids=["in-memory", "streamed"])
def test_the_mixed_workload_keeps_its_digest_in_memory_and_streamed(streamed: bool) -> None:
    workload = load_workload(ROOT / "notebooks" / "inputs" / "mixed.yaml")
    sink = io.StringIO() if streamed else None
    world = WorkloadDriver(workload, 0, log_sink=sink).run()
    assert world.log.digest() == MIXED_WORKLOAD


def test_the_scenario_library_keeps_its_combined_digest() -> None:
    result = CliRunner().invoke(main, ["run", str(ROOT / "scenarios")])
    assert result.exit_code == 0, result.output
    found = re.search(r"scenario\(s\): .*; digest ([0-9a-f]{64})", result.output)
    assert found is not None, result.output
    assert found.group(1) == SCENARIO_LIBRARY
