"""The RTGS settlement adapter (mock, state ``connected``): GBP accounts, earmark, settle, release.

Public names: ``RtgsAdapter``, ``RtgsRefused``, ``OPERATOR_FEE_ACCOUNT``.

Accounts are keyed by participant id, plus the operator's fee account. An earmark holds an
amount of the payer's balance for one transaction; ``settle`` pays the held amount out to
the creditor and the fee account; ``release`` returns it to the payer. Each operation waits a
sampled latency, then applies atomically and logs an ``rtgs.<op>`` record. ``release_now``
is the instant form a cancel uses. Fiat is conserved: Σ balances + Σ earmarked is constant.
"""

from __future__ import annotations

from collections.abc import Generator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import simpy
from attrs import frozen

from clearing_sim.domain.latency import Latency

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["OPERATOR_FEE_ACCOUNT", "RtgsAdapter", "RtgsRefused"]

OPERATOR_FEE_ACCOUNT = "operator:fees"
CONNECTION_STATE = "connected"
_ZERO = Decimal(0)


class RtgsRefused(Exception):
    """The adapter refused the earmark (insufficient funds); nothing changed."""


@frozen
class _Earmark:
    payer: str
    amount: Decimal


class RtgsAdapter:
    def __init__(self, world: World, latency: Latency) -> None:
        self.world = world
        self.latency = latency
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

    def earmark(self, transaction_id: str, payer: str,
                amount: Decimal) -> Generator[simpy.Event, Any, None]:
        yield self._wait()
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
        yield self._wait()
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
