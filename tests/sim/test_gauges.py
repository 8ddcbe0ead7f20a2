"""The status check's running figures against their definitions (spec, "System status";
issue 30, section 2): ``OperationTimes.mean_ms`` against the backward walk over the log
(``recent_latency_ms``), the book's ``parked_count`` against a count over every
transaction, ``waiting.idle``'s count against a walk over every saga: after every record
of random workloads (with arms, cancels, operator fixes) and of the scenario library.
Mutants of the running figures show the comparison failing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.transaction import UseCase
from clearing_sim.scenario.loader import load_scenario
from clearing_sim.scenario.runner import run_scenario
from clearing_sim.sim import gauges, waiting
from clearing_sim.sim import world as world_module
from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.examples import Cast, example_world
from clearing_sim.sim.gauges import FAMILIES, OperationTimes, recent_latency_ms
from clearing_sim.sim.world import World
from tests.properties._workload import Order, play, workloads

SCENARIOS = Path(__file__).parents[2] / "scenarios"
WINDOWS = (1, 2, 5, 20)


class FigureWatch:
    """A log listener: after every record, each running figure against its definition."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.checked = 0
        self.mismatches: list[str] = []
        world.keep_read_indexes()  # as ServiceAPI does; what was logged so far is read once
        world.log.listen(self)

    def __call__(self, record: Record) -> None:
        world = self.world
        self.checked += 1
        records = world.log.select()
        for family in FAMILIES:
            for window in WINDOWS:
                kept = world.operation_times.mean_ms(family, window)
                walked = recent_latency_ms(records, family, window)
                if kept != walked:
                    self.mismatches.append(f"seq {record.seq} {record.kind}: {family} window "
                                           f"{window}: kept {kept}, walked {walked}")
        parked = sum(1 for tx in world.transactions if tx.parked)
        if world.transactions.parked_count != parked:
            self.mismatches.append(f"seq {record.seq}: parked_count "
                                   f"{world.transactions.parked_count}, counted {parked}")

    def idle_agrees(self) -> None:
        """Between instants (where waits judge): the count against the sagas' processes."""
        walked = not self.world.webhooks.busy and not any(
            saga.process is not None and saga.process.is_alive
            for saga in self.world.sagas.values())
        if waiting.idle(self.world) != walked:
            self.mismatches.append(f"at {self.world.now_ms} ms: idle {not walked} by count")


def _fix_parked(cast: Cast, watch: FigureWatch) -> None:
    world = cast.world
    for tx in list(world.transactions):
        if tx.parked:
            world.resolve(tx.id)
            watch.idle_agrees()
            world.run_all()
            watch.idle_agrees()


def _watched_run(seed: int, workload: list[Order], late: bool = False) -> FigureWatch:
    """``late``: the figures are asked for only once the workload has been played (the
    world made long before its API), so they start from the records logged so far."""
    cast = example_world(seed)
    watch = None if late else FigureWatch(cast.world)
    play(cast, workload)
    if watch is None:
        watch = FigureWatch(cast.world)
        watch(list(cast.world.log)[-1])
    watch.idle_agrees()
    world = cast.world
    while world.env.peek() != float("inf"):  # judge idle between every pair of instants
        world.run_until(int(world.env.peek()))
        watch.idle_agrees()
    _fix_parked(cast, watch)
    return watch


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), workload=workloads(max_size=8),
       kept=st.sampled_from([2, 5, gauges.RECENT_OPERATIONS]), late=st.booleans())
def test_running_figures_equal_their_definitions_after_every_record(
        seed: int, workload: list[Order], kept: int, late: bool) -> None:
    """System status: ``engineStalledJobs``, ``onChainLatencyMs`` and ``rtgsLatencyMs`` kept
    as records are appended answer what the walk over the whole log answers, at every
    record, whether kept from the world's start or from a late first ask; with few
    operations kept the walk is what answers past them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gauges, "RECENT_OPERATIONS", kept)
        watch = _watched_run(seed, workload, late)
    assert watch.checked > 0
    assert watch.mismatches == []


@pytest.fixture
def watched_worlds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FigureWatch]]:
    """Every world made while the fixture is active, watched from its first record on."""
    watches: list[FigureWatch] = []
    made = World.__init__

    def init(self: World, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        watches.append(FigureWatch(self))

    monkeypatch.setattr(World, "__init__", init)
    yield watches


@pytest.mark.parametrize("name", sorted(p.name for p in SCENARIOS.glob("*.yaml")))
def test_running_figures_equal_their_definitions_over_the_scenario_library(
        name: str, watched_worlds: list[FigureWatch]) -> None:
    run_scenario(load_scenario(SCENARIOS / name))
    assert watched_worlds and all(w.checked for w in watched_worlds)
    for watch in watched_worlds:
        watch.idle_agrees()
        assert watch.mismatches == []


# the comparison fails on figures that break the definition --------------------------------
class ForgetsCancels(OperationTimes):
    """Mutant: samples a cancel's instant return."""

    def _state(self, record: Record) -> None:
        tx = record.fields.get("transactionId")
        if type(tx) is str:
            self._last[tx] = record.at_ms


class TimesRefunds(OperationTimes):
    """Mutant: an issuer refund's hidden processing is timed as if it were not hidden."""

    def _untimed(self, record: Record) -> None:
        return None


class NoFallback(OperationTimes):
    """Mutant: answers from the kept operations even where the walk reaches past them."""

    def mean_ms(self, family: str, window: int = gauges.LATENCY_WINDOW) -> int | None:
        self._seen = dict.fromkeys(FAMILIES, 0)
        return super().mean_ms(family, window)


CANCEL_AFTER_LOCK = [Order(UseCase.REDEEM, 1, None, "100.00", 0, None, 0, 6_000)]
MODE_3_REFUNDS = [Order(UseCase.REDEEM, 3, None, "100.00", 0, Outcome.SILENCE, 1_000),
                  Order(UseCase.REDEEM, 1, None, "100.00", 100)]
MIXED = [Order(UseCase.SWAP, 2, 3, "100.00", i * 700, Outcome.SILENCE if i % 2 else None,
               1_000) for i in range(6)]


@pytest.mark.parametrize(("mutant", "workload", "kept"), [
    (ForgetsCancels, CANCEL_AFTER_LOCK, gauges.RECENT_OPERATIONS),
    (TimesRefunds, MODE_3_REFUNDS, gauges.RECENT_OPERATIONS),
    (NoFallback, MIXED, 2),
])
def test_the_comparison_fails_on_a_figure_that_breaks_the_definition(
        mutant: type[OperationTimes], workload: list[Order], kept: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gauges, "RECENT_OPERATIONS", kept)
    assert _watched_run(0, workload).mismatches == []
    monkeypatch.setattr(world_module, "OperationTimes", mutant)
    assert _watched_run(0, workload).mismatches != []


def test_the_comparison_fails_on_a_parked_count_that_misses_a_park(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant book: a transition into parked not counted."""
    from clearing_sim.sim.book import TransactionBook

    transit = TransactionBook._transit

    def uncounted(self: TransactionBook, old: Any, *args: Any, **kwargs: Any) -> Any:
        new, event = transit(self, old, *args, **kwargs)
        self._parked -= new.parked - old.parked
        return new, event

    assert _watched_run(0, MODE_3_REFUNDS).mismatches == []
    monkeypatch.setattr(TransactionBook, "_transit", uncounted)
    assert any("parked_count" in m for m in _watched_run(0, MODE_3_REFUNDS).mismatches)


def test_the_comparison_fails_on_an_idle_count_that_misses_an_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant count: a saga's end not counted, so the world never looks idle."""
    monkeypatch.setattr(gauges.RunningProcesses, "_ended", lambda self, _process: None)
    assert any("idle" in m for m in _watched_run(0, CANCEL_AFTER_LOCK).mismatches)
