"""The receiver kit's evidence rules on their own (spec, Events, guarantee 3: the receiver
fetches "after each delivery before changing its own state"): a fetch counts only inside
its instants, and the n-th change of a view needs n fetches since the first delivery."""

from __future__ import annotations

import asyncio

from clearing_sim.conformance.receiver_evidence import (
    Attempt,
    Observer,
    ProbeRead,
    fetches_between,
    folded,
)
from clearing_sim.conformance.receiver_stage import Fetch
from clearing_sim.conformance.report import Exchange
from clearing_sim.webhooks import TransactionView

RECEIVED = TransactionView("received", False, False)
SETTLED = TransactionView("settled", False, True)


def _fetch(at_s: float, status: int = 200, tx_id: str = "tx") -> Fetch:
    return Fetch(0, tx_id, status, "member", at_s)


def test_a_fetch_counts_only_between_the_instants_it_is_judged_by() -> None:
    fetches = [_fetch(0.9), _fetch(1.0), _fetch(2.0, 503), _fetch(3.0), _fetch(3.0001),
               _fetch(1.5, tx_id="other")]
    assert [f.at_s for f in fetches_between(fetches, "tx", 1.0, 3.0)] == [1.0, 3.0]
    assert [f.status for f in fetches_between(fetches, "tx", 1.0, 3.0, None)] == [200, 503, 200]
    assert fetches_between(fetches, "tx", 3.5, 9.0) == []


def test_repeated_evidence_is_named_once_with_its_count() -> None:
    assert folded(["a 401", "a 200", "a 401", "a 401"]) == ["a 401 (×3)", "a 200"]


def _observer(views: list[TransactionView | None], fetches: list[Fetch]) -> Observer:
    answers = iter(views)
    clock = iter(range(10, 100))

    async def probe(tx_id: str) -> ProbeRead:
        return ProbeRead(tx_id, next(answers), True, Exchange("GET", "probe"), next(clock))

    return Observer(probe, fetches)


def _delivered(observer: Observer, sent_s: float) -> None:
    observer.delivered(Attempt("evt_1", "tx", Exchange("POST", "r"), 200, sent_s, sent_s))


def test_each_change_of_view_needs_a_fetch_of_its_own_after_the_first_delivery() -> None:
    """Baseline None, then received, then settled: two changes. With one fetch after the
    delivery the first change rests on it and the second on nothing (its state came from a
    payload); a fetch before the delivery never counts."""
    observer = _observer([None, RECEIVED, SETTLED], [_fetch(0.5), _fetch(5.0)])

    async def play() -> None:
        await observer.read("tx")  # the baseline, before any delivery
        _delivered(observer, sent_s=1.0)
        await observer.read("tx")
        await observer.read("tx")

    asyncio.run(play())
    assert [(c.before, c.after) for c in observer.changes] == [(None, RECEIVED),
                                                               (RECEIVED, SETTLED)]
    assert [c.fetch.at_s if c.fetch else None for c in observer.changes] == [5.0, None]


def test_a_change_after_a_fetch_is_cleared_and_an_unchanged_read_is_no_change() -> None:
    observer = _observer([None, SETTLED, SETTLED], [_fetch(2.0), _fetch(3.0)])

    async def play() -> None:
        await observer.read("tx")
        _delivered(observer, sent_s=1.0)
        await observer.read("tx")
        await observer.read("tx")

    asyncio.run(play())
    assert [c.fetch is not None for c in observer.changes] == [True]
    assert not observer.broken and observer.reads == 3
