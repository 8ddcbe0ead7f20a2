"""The transaction book: every change logged (``saga.step`` for each step whose status or time
changed, ``transaction.state`` for each move of the transition table, spec "States and
transitions"), and the records' fields plain JSON strings."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.fees import FeeSchedule, quote
from clearing_sim.domain.ids import CommandId, ParticipantId, TransactionId
from clearing_sim.domain.lifecycle import LifecycleStatus, Trigger
from clearing_sim.domain.money import GBP, Asset, Money
from clearing_sim.domain.parties import ParticipantKind, Party
from clearing_sim.domain.profile import SettlementMode
from clearing_sim.domain.saga import Saga
from clearing_sim.domain.transaction import (
    ChainState,
    FeeStatus,
    LegTerms,
    RtgsState,
    Side,
    Transaction,
    UseCase,
)
from clearing_sim.sim.book import TransactionBook
from clearing_sim.sim.eventlog import EventLog
from clearing_sim.sim.examples import example_world, redeem, swap
from clearing_sim.sim.world import World

MEMBER = Party(ParticipantId("m"), ParticipantKind.CLEARING_MEMBER, "Northbank")
ISSUER = Party(ParticipantId("i"), ParticipantKind.STABLECOIN_ISSUER, "Ether Pound")
GBPE = Asset("GBPE", "0xETHERISSUER", 2, "GBP")


def _opened() -> tuple[TransactionBook, EventLog, Transaction]:
    log = EventLog(lambda: 0)
    book = TransactionBook(log)
    tx = Transaction(
        id=TransactionId("t1"), payment_reference="INV-1", use_case=UseCase.REDEEM,
        initiator_id=MEMBER.participant_id, command_id=CommandId("c1"),
        lifecycle_status=LifecycleStatus.RECEIVED, parked=False, initiated_at_ms=0,
        updated_at_ms=0, source=Side(Money(GBPE, Decimal("10.00")), MEMBER),
        target=Side(Money(GBP, Decimal("10.00")), MEMBER), chain=ChainState.NONE,
        rtgs=RtgsState.NONE, saga=Saga.initiated(0), quote=quote(Decimal("10.00"),
                                                                 FeeSchedule()),
        fee_status=FeeStatus.PENDING, creditor=MEMBER, debtor=ISSUER,
        legs=(LegTerms("burn", ISSUER.participant_id, SettlementMode.MODE_2, 1),))
    book.open(tx)
    return book, log, tx


def _steps(log: EventLog) -> list[tuple[int, str, str]]:
    return [(r["index"], r["name"], r["status"]) for r in log.select("saga.step")]  # type: ignore[misc]


def test_open_logs_every_step_and_the_received_event() -> None:
    _, log, _ = _opened()
    assert _steps(log) == [(0, "Received", "done"), (1, "Validated", "done"),
                           (2, "Lock", "current"), (3, "Earmarked", "pending"),
                           (4, "Burning", "pending"), (5, "Settled", "pending")]
    (state,) = log.select("transaction.state")
    assert state.fields == {"transactionId": "t1", "paymentReference": "INV-1",
                            "lifecycleStatus": "received", "parked": False,
                            "terminal": False, "event": "transaction.received",
                            "trigger": "initiated", "reason": None}


def test_a_step_update_logs_only_the_steps_it_changed() -> None:
    book, log, tx = _opened()
    book.apply(tx.id, Trigger.VALIDATED, 5)
    book.update(tx.id, 7, saga=tx.saga.complete_current(7), chain=ChainState.LOCKED)
    assert _steps(log)[6:] == [(2, "Lock", "done"), (3, "Earmarked", "current")]
    assert book[tx.id].updated_at_ms == 7 and book[tx.id].chain is ChainState.LOCKED
    book.update(tx.id, 8, rtgs=RtgsState.EARMARKED)  # no saga change: no saga.step
    assert len(_steps(log)) == 8


def test_apply_logs_the_tables_event_as_plain_strings() -> None:
    book, log, tx = _opened()
    book.apply(tx.id, Trigger.VALIDATED, 5)
    new = book.apply(tx.id, Trigger.CANCEL, 9, saga=tx.saga.cancelled(9),
                     reason_code="operator_cancelled")
    assert new.terminal and new.lifecycle_status is LifecycleStatus.CANCELLED
    last = list(log.select("transaction.state"))[-1]
    assert (last["event"], last["lifecycleStatus"], last["trigger"], last["terminal"]) == \
        ("transaction.cancelled", "cancelled", "cancel", True)
    assert all(type(v) is str for v in (last["event"], last["lifecycleStatus"], last["trigger"]))
    assert all(type(r["name"]) is str and type(r["status"]) is str
               for r in log.select("saga.step"))
    assert _steps(log)[6:] == [(2, "Lock", "cancelled"), (3, "Earmarked", "cancelled"),
                               (4, "Cancelled", "cancelled")]


def test_a_move_the_table_does_not_have_stops_the_run() -> None:
    book, _, tx = _opened()
    with pytest.raises(AssertionError, match="no transition"):
        book.apply(tx.id, Trigger.PROOF_COMPLETE, 5)


def _records(log: EventLog) -> list[tuple[int, str, dict[str, object]]]:
    return [(r.at_ms, r.kind, dict(r.fields)) for r in log]


def test_complete_step_logs_what_update_and_apply_with_the_completed_saga_log() -> None:
    """``complete_step`` is ``update`` (or ``apply`` of a trigger) with
    ``saga.complete_current``: the same transactions and the same records, step by step to
    the last one (Settled: no next step), through the proof-complete transition."""
    by_step, by_step_log, tx = _opened()
    by_hand, by_hand_log, _ = _opened()
    for book in (by_step, by_hand):
        book.apply(tx.id, Trigger.VALIDATED, 5)
    for at_ms, changes in ((7, {"chain": ChainState.LOCKED}), (8, {"rtgs": RtgsState.EARMARKED}),
                           (9, {"chain": ChainState.BURNED})):
        new = by_step.complete_step(tx.id, at_ms, **changes)
        assert new == by_hand.update(tx.id, at_ms, **changes,
                                     saga=by_hand[tx.id].saga.complete_current(at_ms))
    settled = {"rtgs": RtgsState.SETTLED, "fee_status": FeeStatus.COLLECTED}
    new = by_step.complete_step(tx.id, 11, Trigger.PROOF_COMPLETE, **settled)
    assert new == by_hand.apply(tx.id, Trigger.PROOF_COMPLETE, 11, **settled,
                                saga=by_hand[tx.id].saga.complete_current(11))
    assert new.terminal and new.saga.current.status == "done"
    assert _records(by_step_log) == _records(by_hand_log)
    assert _steps(by_step_log)[6:] == [(2, "Lock", "done"), (3, "Earmarked", "current"),
                                       (3, "Earmarked", "done"), (4, "Burning", "current"),
                                       (4, "Burning", "done"), (5, "Settled", "current"),
                                       (5, "Settled", "done")]


# the participant index (issue 30, section 2) ---------------------------------------------
def _scan(book: TransactionBook, participant_id: str,
          after: tuple[str, int] | None) -> list[str]:
    """What the list route answered before the index: a walk over every transaction
    (scope: spec, Authentication 3, ``service.transactions.in_scope``)."""
    mine = [tx for tx in book if participant_id in tx.audience][::-1]
    if after is not None:
        found = [i for i, tx in enumerate(mine) if tx.id == after[0]]
        mine = (mine[found[0] + 1:] if found
                else [tx for tx in mine if tx.initiated_at_ms < after[1]])
    return [tx.id for tx in mine]


def _index_disagreements(world: World, created: dict[str, int]) -> list[str]:
    """Every participant, from the start and after every cursor a page could have named
    (every transaction ever opened, forgotten or not, and an unknown one), against the scan."""
    book = world.transactions
    cursors: list[tuple[str, int] | None] = [None, *created.items(),
                                             ("00000000-0000-4000-8000-000000000000", 1_500)]
    wrong = []
    for participant in world.participants:
        for after in cursors:
            indexed = [tx.id for tx in book.newest_first(participant.id, after)]
            if indexed != _scan(book, participant.id, after):
                wrong.append(f"{participant.name} after {after}")
    return wrong


def _indexed_world(seed: int, starts: list[tuple[int, int, bool]], forget: bool,
                   stop_ms: int, early: bool = True) -> tuple[World, dict[str, int]]:
    """``early``: the index is kept from the start (as ``ServiceAPI`` asks), else made
    from the book at the first read."""
    cast = example_world(seed, forget_terminal=forget)
    world = cast.world
    if early:
        world.transactions.index_scopes()
    wallets = {cast.asset(mode): Decimal("10000.00") for mode in (1, 2, 3)}
    members = [cast.member, world.add_member("Southbank", Decimal("0.00"), wallets)]
    created: dict[str, int] = {}
    for at_ms, mode, second in sorted(starts):
        world.run_until(max(at_ms, world.now_ms))
        target = cast.asset(mode % 3 + 1)
        request = swap(cast.asset(mode), target) if second else redeem(cast.asset(mode))
        tx = world.initiate(members[second].id, request)
        created[tx.id] = tx.initiated_at_ms
    world.run_until(max(stop_ms, world.now_ms))
    return world, created


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16),
       starts=st.lists(st.tuples(st.sampled_from([0, 1_000, 1_500, 90_000]),
                                 st.integers(1, 3), st.booleans()), max_size=12),
       forget=st.booleans(), stop_ms=st.sampled_from([0, 30_000, 10_000_000]),
       early=st.booleans())
def test_newest_first_pages_as_the_scan_over_every_transaction(
        seed: int, starts: list[tuple[int, int, bool]], forget: bool, stop_ms: int,
        early: bool) -> None:
    """``GET /api/v1/transactions`` (newest first, a cursor resumes after its transaction or,
    once that is forgotten, by its creation time) from the index equals the scan, with
    forgotten transactions (a ``forget_terminal`` world) and ties in creation time."""
    world, created = _indexed_world(seed, starts, forget, stop_ms, early)
    assert _index_disagreements(world, created) == []


def test_the_index_comparison_fails_on_an_index_that_breaks_the_rule(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: a cursor always resumes by creation time, so a page after a transaction
    skips the others opened in the same millisecond."""
    starts = [(1_000, 1, False), (1_000, 2, True), (1_000, 3, False)]
    world, created = _indexed_world(0, starts, False, 0)
    assert _index_disagreements(world, created) == []
    newest_first = TransactionBook.newest_first

    def by_time_only(self: TransactionBook, participant_id: str,
                     after: tuple[str, int] | None = None) -> Iterator[Transaction]:
        if after is not None:
            after = ("00000000-0000-4000-8000-000000000000", after[1])
        return newest_first(self, participant_id, after)

    monkeypatch.setattr(TransactionBook, "newest_first", by_time_only)
    assert _index_disagreements(world, created) != []
