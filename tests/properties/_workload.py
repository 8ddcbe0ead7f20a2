"""Workloads for property tests: drawn orders played onto an example world on virtual time.

Public names: ``Order``, ``orders``, ``workloads``, ``schedule``, ``play``, ``play_lockstep``,
``request``, ``AMOUNTS``, ``MODES``, ``OUTCOMES``, ``WALLET_START``.

An ``Order`` is one transaction: a redeem or a swap between two settlement modes, an amount,
when it starts, an outcome armed some time after it starts, a cancel some time after it
starts. ``play`` performs every order's actions in virtual-time order on ``example_world``'s
cast and checks each answer against the model as it goes: a cancel succeeds iff
``actions.cancel.allowed`` said so, an arm succeeds iff the transaction is not terminal and an
issuer-instructed leg is still open (docs/semantics.md).
"""

from __future__ import annotations

from decimal import Decimal

from attrs import frozen
from hypothesis import strategies as st

from clearing_sim.domain.errors import NotAllowed
from clearing_sim.domain.initiation import InitiateRequest
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.transaction import UseCase, cancel_action
from clearing_sim.sim.examples import Cast, redeem, swap

from ._replay import LogReplay, open_instruction_legs

__all__ = ["AMOUNTS", "MODES", "OUTCOMES", "WALLET_START", "Order", "orders", "play",
           "play_lockstep", "request", "schedule", "workloads"]

MODES = (1, 2, 3)
#: Wallets hold 10 000.00 of each asset: the last amounts cannot be covered (insufficient_funds).
AMOUNTS = ("0.01", "1.00", "99.99", "100.00", "2500.00", "9999.99", "10000.00", "10000.01",
           "25000.00")
OUTCOMES = (Outcome.REJECTED, Outcome.FAILED, Outcome.SILENCE)
WALLET_START = Decimal("10000.00")


@frozen
class Order:
    use_case: UseCase
    source_mode: int
    target_mode: int | None
    amount: str
    start_ms: int
    arm: Outcome | None = None
    arm_after_ms: int = 0
    cancel_after_ms: int | None = None


@st.composite
def orders(draw: st.DrawFn, *, amounts: tuple[str, ...] = AMOUNTS,
           cancels: bool = True) -> Order:
    use_case = draw(st.sampled_from(UseCase))
    source = draw(st.sampled_from(MODES))
    target = (draw(st.sampled_from([m for m in MODES if m != source]))
              if use_case is UseCase.SWAP else None)
    # small offsets hit the intake, lock and earmark windows (cancel allowed); large ones
    # land on the issuer legs and past the 900 s approval SLA
    offset = st.one_of(st.integers(0, 3_000), st.integers(0, 1_200_000))
    amount = draw(st.sampled_from(amounts))
    start_ms = draw(st.integers(0, 60_000))
    # about 3 orders in 5 are armed and 1 in 4 cancelled, so cancels do not hide the unwinds
    arm = draw(st.sampled_from(OUTCOMES)) if draw(st.integers(0, 4)) >= 2 else None
    arm_after_ms = draw(offset) if arm is not None else 0
    cancel_ms = draw(offset) if cancels and draw(st.integers(0, 3)) == 0 else None
    return Order(use_case, source, target, amount, start_ms, arm, arm_after_ms, cancel_ms)


def workloads(max_size: int = 6, *, amounts: tuple[str, ...] = AMOUNTS,
              cancels: bool = True) -> st.SearchStrategy[list[Order]]:
    return st.lists(orders(amounts=amounts, cancels=cancels), min_size=1, max_size=max_size)


def schedule(workload: list[Order]) -> list[tuple[int, str, int]]:
    """Every action of ``workload`` as (virtual ms, action, order index), in the order played:
    by time, then initiations before arms before cancels, then by order."""
    actions: list[tuple[int, int, str, int]] = []
    for i, order in enumerate(workload):
        actions.append((order.start_ms, 0, "initiate", i))
        if order.arm is not None:
            actions.append((order.start_ms + order.arm_after_ms, 1, "arm", i))
        if order.cancel_after_ms is not None:
            actions.append((order.start_ms + order.cancel_after_ms, 2, "cancel", i))
    return [(at_ms, what, i) for at_ms, _, what, i in sorted(actions)]


def play(cast: Cast, workload: list[Order], replay: LogReplay | None = None) -> list[str]:
    """Perform every action of ``workload`` at its virtual time; return the transaction ids
    in order. The world is left at the last action's time (call ``run_all`` to finish)."""
    return play_lockstep([cast], workload, [replay or LogReplay()])[0]


def play_lockstep(casts: list[Cast], workload: list[Order],
                  replays: list[LogReplay] | None = None) -> list[list[str]]:
    """``play`` on several worlds at once, one action at a time on each in turn."""
    replays = replays or [LogReplay() for _ in casts]
    ids: list[dict[int, str]] = [{} for _ in casts]
    for at_ms, what, i in schedule(workload):
        for cast, replay, known in zip(casts, replays, ids, strict=True):
            world, order = cast.world, workload[i]
            world.run_until(max(at_ms, world.now_ms))
            if what == "initiate":
                known[i] = world.initiate(cast.member.id, request(cast, order, f"WL-{i:04d}")).id
            elif what == "arm":
                _arm(cast, replay, known[i], order.arm)
            else:
                _cancel(cast, known[i])
    return [[known[i] for i in range(len(workload))] for known in ids]


def request(cast: Cast, order: Order, reference: str) -> InitiateRequest:
    source = cast.asset(order.source_mode)
    if order.use_case is UseCase.REDEEM:
        return redeem(source, order.amount, reference)
    assert order.target_mode is not None
    return swap(source, cast.asset(order.target_mode), order.amount, reference)


def _arm(cast: Cast, replay: LogReplay, tx_id: str, outcome: Outcome | None) -> None:
    world = cast.world
    assert outcome is not None
    replay.feed(world.log)
    tx = world.transactions[tx_id]
    legs = [] if tx.terminal else open_instruction_legs(tx, replay.tx(tx_id), outcome)
    try:
        world.arm(tx_id, outcome)
    except NotAllowed:
        assert not legs, f"arm refused although {legs[0].leg} is issuer-instructed and open"
    else:
        assert legs, f"arm accepted on {tx_id}: terminal, or no open issuer-instructed leg"


def _cancel(cast: Cast, tx_id: str) -> None:
    world = cast.world
    tx = world.transactions[tx_id]
    allowed = cancel_action(tx).allowed
    try:
        world.cancel(tx_id)
    except NotAllowed:
        assert not allowed, f"cancel refused although actions.cancel.allowed on {tx_id}"
    else:
        assert allowed, f"cancel accepted although actions.cancel.allowed is false on {tx_id}"
