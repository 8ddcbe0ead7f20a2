"""The RTGS settlement adapter (mock, state ``connected``): GBP accounts, earmark, settle, release.

Public names: ``CLOSED``, ``CONNECTION_STATE``, ``OPERATOR_FEE_ACCOUNT``, ``RtgsAdapter``,
``RtgsRefused``.

Accounts are keyed by participant id, plus the operator's fee account. An earmark holds an
amount of the payer's balance for one transaction; ``settle`` pays the held amount out to
the creditor and the fee account; ``release`` returns it to the payer. Each operation waits a
sampled latency, then applies atomically and logs an ``rtgs.<op>`` record. ``release_now``
is the instant form a cancel uses. Fiat is conserved: Σ balances + Σ earmarked is constant.

Business hours (beyond the spec; off by default): with an operating ``calendar``
(``domain.calendar``), an earmark or settlement whose answer comes outside the scheme's hours
(an earmark from the cut-off, a settlement from the close, until the next opening) is
queued: an ``rtgs.closed_wait`` record at the answer's instant names the operation and the
reopening (``reopensAt``, ``reopensAtMs``), and the operation applies at exactly that
opening. A release (giving held fiat back) is not gated. Without a calendar the adapter is
always open and draws and logs exactly what it did before calendars existed.
"""

from __future__ import annotations

from collections.abc import Generator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import simpy
from attrs import frozen

from clearing_sim.domain.calendar import OperatingCalendar, Operation
from clearing_sim.domain.latency import Latency

if TYPE_CHECKING:
    from clearing_sim.sim.seams import Engine

__all__ = ["CLOSED", "CONNECTION_STATE", "OPERATOR_FEE_ACCOUNT", "RtgsAdapter", "RtgsRefused"]

OPERATOR_FEE_ACCOUNT = "operator:fees"
CONNECTION_STATE = "connected"
CLOSED = "closed"  # the connection's state outside the calendar's settlement hours
_ZERO = Decimal(0)


class RtgsRefused(Exception):
    """The adapter refused the earmark (insufficient funds); nothing changed."""


@frozen
class _Earmark:
    payer: str
    amount: Decimal


class RtgsAdapter:
    def __init__(self, world: Engine, latency: Latency,
                 calendar: OperatingCalendar | None = None) -> None:
        self.world = world
        self.latency = latency
        #: the operating calendar (None: always open); operations asked after a change obey
        #: the new one, an operation already queued keeps its reopening
        self.calendar = calendar
        self.connection = CONNECTION_STATE
        self.balances: dict[str, Decimal] = {OPERATOR_FEE_ACCOUNT: Decimal("0.00")}
        self.earmarks: dict[str, _Earmark] = {}
        self._rng = world.streams.get("rtgs")

    def open_account(self, owner: str, balance: Decimal) -> None:
        self.balances[owner] = balance
        self.world.log.append("rtgs.account", account=owner, balanceGbp=f"{balance:f}")

    def total(self) -> Decimal:
        """All fiat in the scheme: balances plus earmarks (constant across a run)."""
        return sum(self.balances.values(), Decimal(0)) + sum(
            (e.amount for e in self.earmarks.values()), Decimal(0))

    def _wait(self) -> simpy.Timeout:
        """The adapter's answer time: a timeout of the sampled latency."""
        return self.world.env.timeout(self.latency.sample(self._rng))

    def connection_state(self) -> str:
        """``connected``, or ``closed`` while the calendar takes no settlement."""
        calendar = self.calendar
        if calendar is None or calendar.is_open(self.world.epoch_ms + self.world.now_ms,
                                                Operation.SETTLE):
            return self.connection
        return CLOSED

    def _answer(self, transaction_id: str,
                operation: Operation) -> Generator[simpy.Event, Any, None]:
        """The answer time, then, outside the calendar's hours, the wait for the opening."""
        yield self._wait()
        calendar = self.calendar
        if calendar is None:
            return
        world = self.world
        unix_ms = world.epoch_ms + world.now_ms
        if calendar.is_open(unix_ms, operation):
            return
        opening = calendar.next_opening_ms(unix_ms)
        if opening is None:  # no opening before 9999-12-31: the request waits for ever
            world.log.append("rtgs.closed_wait", transactionId=transaction_id,
                             operation=operation.value, reopensAt=None, reopensAtMs=None)
            yield world.env.event()  # never triggered
            return
        opens_ms = opening - world.epoch_ms
        world.log.append("rtgs.closed_wait", transactionId=transaction_id,
                         operation=operation.value, reopensAt=world.iso(opens_ms),
                         reopensAtMs=opens_ms)
        yield world.env.timeout(opens_ms - world.now_ms)

    def earmark(self, transaction_id: str, payer: str,
                amount: Decimal) -> Generator[simpy.Event, Any, None]:
        yield from self._answer(transaction_id, Operation.EARMARK)
        if self.balances.get(payer, _ZERO) < amount:
            self.world.log.append("rtgs.refused", transactionId=transaction_id, account=payer,
                                  amountGbp=f"{amount:f}")
            raise RtgsRefused(f"{payer} cannot cover {amount}")
        self.balances[payer] -= amount
        self.earmarks[transaction_id] = _Earmark(payer, amount)
        self.world.log.append("rtgs.earmark", transactionId=transaction_id, account=payer,
                              amountGbp=f"{amount:f}")

    def settle(self, transaction_id: str, creditor: str, fee: Decimal,
               settled_by: str) -> Generator[simpy.Event, Any, None]:
        yield from self._answer(transaction_id, Operation.SETTLE)
        mark = self.earmarks.pop(transaction_id)
        paid = mark.amount - fee
        self.balances[creditor] = self.balances.get(creditor, _ZERO) + paid
        self.balances[OPERATOR_FEE_ACCOUNT] += fee
        self.world.log.append("rtgs.settle", transactionId=transaction_id, account=mark.payer,
                              creditor=creditor, amountGbp=f"{paid:f}", feeGbp=f"{fee:f}",
                              settledBy=settled_by)

    def release(self, transaction_id: str) -> Generator[simpy.Event, Any, None]:
        yield self._wait()
        self.release_now(transaction_id)

    def release_now(self, transaction_id: str) -> None:
        mark = self.earmarks.pop(transaction_id)
        self.balances[mark.payer] += mark.amount
        self.world.log.append("rtgs.release", transactionId=transaction_id, account=mark.payer,
                              amountGbp=f"{mark.amount:f}")
