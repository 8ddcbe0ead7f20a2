"""The on-chain ledgers: accounts, balances, locks, and the five operations of a saga.

Public names: ``ChainLedger``, ``Receipt``, ``LedgerRefused``.

One ``ChainLedger`` per chain (stellar, evm, solana). An account holds balances of several
issued assets. A lock moves an amount from an account into escrow under a transaction id;
``return_to_sender``, ``transfer_locked`` and ``burn_locked`` consume a lock; ``burn`` and
``mint`` change supply. Each operation is a SimPy generator a process yields from: it waits
the sampled finality latency (``until_final``), then applies atomically and logs one
``ledger.<op>`` record with the tx hash and ledger sequence. A process interrupted while it
waits has changed nothing. ``burn_final``, ``burn_locked_final`` and ``mint_final`` are the
applying steps alone, for a caller that waits on the timeout itself (the simulated issuer).

Invariant (checked by ``conserved``): for every asset, supply = Σ balances + Σ locked.
"""

from __future__ import annotations

from collections.abc import Generator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import simpy
from attrs import frozen

from clearing_sim.domain.latency import Latency
from clearing_sim.domain.money import Asset, Money
from clearing_sim.domain.profile import Ledger
from clearing_sim.sim.chain_formats import BLOCK_MS, GENESIS_SEQUENCE, account_id, tx_hash

if TYPE_CHECKING:
    from clearing_sim.sim.seams import Engine

__all__ = ["ChainLedger", "LedgerRefused", "Receipt"]

Op = Generator[simpy.Event, Any, "Receipt"]
_ZERO = Decimal(0)


class LedgerRefused(Exception):
    """The chain refused the operation (insufficient balance); nothing changed."""


@frozen
class Receipt:
    tx_hash: str
    ledger_sequence: int
    finalized_at_ms: int


@frozen
class _Lock:
    account: str
    money: Money


class ChainLedger:
    def __init__(self, world: Engine, ledger: Ledger, finality: Latency) -> None:
        self.world = world
        self.ledger = ledger
        self.finality = finality
        self.balances: dict[str, dict[Asset, Decimal]] = {}
        self.locks: dict[str, _Lock] = {}
        self.supply: dict[Asset, Decimal] = {}
        self._rng = world.streams.get(f"ledger:{ledger.value}")
        self._name = ledger.value  # what each record says (an enum's value is a lookup)
        self._genesis = GENESIS_SEQUENCE[ledger]
        self._block_ms = BLOCK_MS[ledger]

    # accounts -----------------------------------------------------------------------------
    def open_account(self, label: str) -> str:
        account = account_id(self.ledger, self.world.ids.raw("account", 32))
        self.balances[account] = {}
        self.world.log.append("ledger.account", ledger=self.ledger.value, account=account,
                              label=label)
        return account

    def balance(self, account: str, asset: Asset) -> Money:
        return Money(asset, self.balances.get(account, {}).get(asset, Decimal(0)))

    def locked(self, asset: Asset) -> Decimal:
        return sum((lk.money.amount for lk in self.locks.values() if lk.money.asset == asset),
                   Decimal(0))

    def conserved(self) -> bool:
        for asset, supply in self.supply.items():
            held = sum((b.get(asset, Decimal(0)) for b in self.balances.values()), Decimal(0))
            if supply != held + self.locked(asset):
                return False
        return True

    # operations ---------------------------------------------------------------------------
    # Each operation waits ``until_final`` (the sampled finality latency), then cuts its
    # receipt and applies at once (its ``*_final`` step). The generator forms are what a
    # saga yields from; the issuer's own progress, which runs as callbacks, waits on the
    # timeout and calls the ``*_final`` step itself.
    def until_final(self) -> simpy.Timeout:
        """The wait for the ledger's close: a timeout of the sampled finality latency."""
        return self.world.env.timeout(self.finality.sample(self._rng))

    def _receipt_now(self) -> Receipt:
        at_ms = self.world.now_ms
        digest = self.world.ids.raw("txhash", 64)
        return Receipt(tx_hash(self.ledger, digest),
                       self._genesis + at_ms // self._block_ms, at_ms)  # ledger_sequence

    def _record(self, op: str, receipt: Receipt, money: Money, **fields: str | None) -> None:
        self.world.log.append(
            f"ledger.{op}", ledger=self._name, txHash=receipt.tx_hash,
            ledgerSequence=receipt.ledger_sequence, asset=money.asset.code,
            amount=money.wire_amount(), **fields)

    def _credit(self, account: str, money: Money) -> None:
        held = self.balances.setdefault(account, {})
        held[money.asset] = held.get(money.asset, _ZERO) + money.amount

    def _debit(self, account: str, money: Money) -> None:
        held = self.balances.setdefault(account, {})
        after = held.get(money.asset, _ZERO) - money.amount
        if after < 0:
            raise LedgerRefused(f"{account} holds less than {money.wire_amount()}")
        held[money.asset] = after

    def _refuse(self, op: str, transaction_id: str, account: str, money: Money) -> None:
        self.world.log.append("ledger.refused", ledger=self.ledger.value, op=op,
                              transactionId=transaction_id, account=account,
                              asset=money.asset.code, amount=money.wire_amount())

    def mint_now(self, account: str, money: Money, transaction_id: str | None = None) -> None:
        """Issue at once (world set-up: funding wallets before the run starts)."""
        self.supply[money.asset] = self.supply.get(money.asset, _ZERO) + money.amount
        self._credit(account, money)
        self.world.log.append("ledger.fund", ledger=self.ledger.value, account=account,
                              asset=money.asset.code, amount=money.wire_amount())

    def lock(self, transaction_id: str, account: str, money: Money) -> Op:
        yield self.until_final()
        receipt = self._receipt_now()
        try:
            self._debit(account, money)
        except LedgerRefused:
            self._refuse("lock", transaction_id, account, money)
            raise
        self.locks[transaction_id] = _Lock(account, money)
        self._record("lock", receipt, money, transactionId=transaction_id, account=account)
        return receipt

    def return_to_sender(self, transaction_id: str) -> Op:
        yield self.until_final()
        return self.return_now(transaction_id, self._receipt_now())

    def return_now(self, transaction_id: str, receipt: Receipt | None = None) -> Receipt:
        """Release a lock back to its account; at once when ``receipt`` is None (a cancel)."""
        if receipt is None:
            receipt = self._receipt_now()
        lock = self.locks.pop(transaction_id)
        self._credit(lock.account, lock.money)
        self._record("return", receipt, lock.money, transactionId=transaction_id,
                     account=lock.account)
        return receipt

    def transfer_locked(self, transaction_id: str, to_account: str) -> Op:
        yield self.until_final()
        receipt = self._receipt_now()
        lock = self.locks.pop(transaction_id)
        self._credit(to_account, lock.money)
        self._record("transfer", receipt, lock.money, transactionId=transaction_id,
                     account=lock.account, toAccount=to_account)
        return receipt

    def transfer(self, transaction_id: str, from_account: str, to_account: str,
                 money: Money) -> Op:
        yield self.until_final()
        receipt = self._receipt_now()
        try:
            self._debit(from_account, money)
        except LedgerRefused:
            self._refuse("transfer", transaction_id, from_account, money)
            raise
        self._credit(to_account, money)
        self._record("transfer", receipt, money, transactionId=transaction_id,
                     account=from_account, toAccount=to_account)
        return receipt

    def burn_locked(self, transaction_id: str) -> Op:
        yield self.until_final()
        return self.burn_locked_final(transaction_id)

    def burn_locked_final(self, transaction_id: str) -> Receipt:
        receipt = self._receipt_now()
        lock = self.locks.pop(transaction_id)
        self.supply[lock.money.asset] -= lock.money.amount
        self._record("burn", receipt, lock.money, transactionId=transaction_id,
                     account=lock.account)
        return receipt

    def burn(self, transaction_id: str, account: str, money: Money) -> Op:
        yield self.until_final()
        return self.burn_final(transaction_id, account, money)

    def burn_final(self, transaction_id: str, account: str, money: Money) -> Receipt:
        receipt = self._receipt_now()
        try:
            self._debit(account, money)
        except LedgerRefused:
            self._refuse("burn", transaction_id, account, money)
            raise
        self.supply[money.asset] -= money.amount
        self._record("burn", receipt, money, transactionId=transaction_id, account=account)
        return receipt

    def mint(self, transaction_id: str, account: str, money: Money) -> Op:
        yield self.until_final()
        return self.mint_final(transaction_id, account, money)

    def mint_final(self, transaction_id: str, account: str, money: Money) -> Receipt:
        receipt = self._receipt_now()
        self.supply[money.asset] = self.supply.get(money.asset, _ZERO) + money.amount
        self._credit(account, money)
        self._record("mint", receipt, money, transactionId=transaction_id, account=account)
        return receipt
