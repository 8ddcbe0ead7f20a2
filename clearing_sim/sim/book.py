"""The transaction book: the one place a transaction changes, and every change logged.

Public names: ``TransactionBook``.

``update`` replaces fields (details, saga, fee status) and stamps ``updatedAt``; ``amend``
keeps ``details`` true after a transaction stopped (a refund landing after a park); ``apply``
moves the public state through the transition table and logs the public event it names;
``complete_step`` is either of them with the saga's current step completed (the commonest
change: the records of the two steps it touches, without comparing the rest).
Every saga step whose status changed is logged as ``saga.step``; every state change as
``transaction.state`` with the event type, the fact the webhook channel fans out.

The book also keeps what the API's reads ask of it at the cost of their answer (issue 30,
section 2): ``parked_count``, the transactions parked now, and ``newest_first``, one
participant's transactions (those it is in the audience of) newest first, from an index
kept in creation order once asked for (``index_scopes``: ``ServiceAPI`` asks when it is
made, so a run no API reads pays nothing for it); ``in_order`` reads the book, or that
index, oldest first and lazily, for the operator's list.

A book with an ``archive`` (a ``TransactionArchive``: the served world's history on disk)
hands each forgotten transaction to it (``forget``) and still finds it there: ``get``,
``[]``, ``in``, ``len``, iteration (in initiation order, the live and the archived merged)
and ``newest_first`` (whose index then keeps archived transactions) answer as if it had
stayed, so the routes read it as before.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol

from clearing_sim.domain.lifecycle import (
    TERMINAL_STATUSES,
    EventType,
    LifecycleStatus,
    Trigger,
    transition_from,
)
from clearing_sim.domain.saga import Saga, StepName, StepStatus
from clearing_sim.domain.transaction import Transaction

if TYPE_CHECKING:
    from clearing_sim.sim.eventlog import EventLog

__all__ = ["TransactionArchive", "TransactionBook"]

#: The log's text of every status, step and trigger the book writes, looked up by the member
#: itself (a ``StrEnum`` member is the string it stands for): ``.value`` is a Python-level
#: property, about 1,900 instructions a read, and the book writes ~35 per redeem.
_TEXT: dict[str, str] = {member: member.value for kind in (
    StepName, StepStatus, LifecycleStatus, Trigger, EventType) for member in kind}


class TransactionArchive(Protocol):
    """Where a book keeps the transactions it forgets, each with its place in initiation
    order (its ordinal)."""

    def __len__(self) -> int: ...

    def put(self, ordinal: int, tx: Transaction) -> None: ...

    def get(self, transaction_id: str) -> Transaction | None: ...

    def items(self) -> Iterator[tuple[int, Transaction]]:
        """(ordinal, transaction), in ordinal order."""


_first = itemgetter(0)


class _Scope:
    """One participant's transactions in creation order: ids, creation numbers and
    initiation times side by side (for ``bisect``); ``dead``: how many are forgotten."""

    __slots__ = ("at_ms", "dead", "ids", "seqs")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.seqs: list[int] = []
        self.at_ms: list[int] = []
        self.dead = 0


class TransactionBook:
    def __init__(self, log: EventLog, archive: TransactionArchive | None = None) -> None:
        self._log = log
        self._archive = archive
        self._ordinals: dict[str, int] = {}  # with an archive: each live transaction's place
        self._placed = 0  # with an archive: transactions opened so far
        self._by_id: dict[str, Transaction] = {}
        #: every transaction by id, read-only (the saga's read of its own, without a call)
        self.by_id: Mapping[str, Transaction] = self._by_id
        self._parked = 0
        #: participant → its transactions, kept once asked for (``index_scopes``)
        self._scopes: dict[str, _Scope] | None = None
        self._seq: dict[str, int] = {}  # creation number of each transaction, when indexed
        self._opened = 0

    def index_scopes(self) -> None:
        """Keep the index ``newest_first`` reads from now on (made from the book at once)."""
        if self._scopes is not None:
            return
        self._scopes = {}
        for tx in (self._by_id.values() if self._archive is None else self):
            self._index(tx)

    def _index(self, tx: Transaction) -> None:
        assert self._scopes is not None
        seq = self._seq[tx.id] = self._opened
        self._opened += 1
        scopes = self._scopes
        for participant_id in dict.fromkeys(tx.audience):
            scope = scopes.get(participant_id)
            if scope is None:
                scope = scopes[participant_id] = _Scope()
            scope.ids.append(tx.id)
            scope.seqs.append(seq)
            scope.at_ms.append(tx.initiated_at_ms)

    @property
    def parked_count(self) -> int:
        """How many transactions in the book are parked now."""
        return self._parked

    def newest_first(self, participant_id: str,
                     after: tuple[str, int] | None = None) -> Iterator[Transaction]:
        """The transactions ``participant_id`` is in the audience of, newest first.

        ``after`` (a list cursor's transaction id and initiation time): only those older
        than that transaction, or, when it is no longer in the participant's view, those
        initiated before that time."""
        self.index_scopes()
        assert self._scopes is not None
        scope = self._scopes.get(participant_id)
        if scope is None:
            return
        end = len(scope.ids)
        if after is not None:
            item_id, at_ms = after
            tx = self.get(item_id)
            if tx is not None and participant_id in tx.audience:
                end = bisect_left(scope.seqs, self._seq[item_id])
            else:
                end = bisect_left(scope.at_ms, at_ms)
        find = self._by_id.get if self._archive is None else self.get
        ids = scope.ids
        for index in range(end - 1, -1, -1):
            tx = find(ids[index])
            if tx is not None:
                yield tx

    def in_order(self, participant_id: str | None = None, *,
                 live_only: bool = False) -> Iterator[Transaction]:
        """The book's transactions in initiation order (as iteration gives them), lazily, so
        a reader that stops early pays for what it read: with ``live_only``, only those not
        forgotten (every archived one is terminal), read from memory; else with
        ``participant_id``, only those it is in the audience of (from the index
        ``newest_first`` reads). A superset of the wanted: the caller still filters."""
        if live_only:
            return iter(self._by_id.values())  # in opening order: a replaced value keeps its place
        if participant_id is None:
            return iter(self)
        self.index_scopes()
        assert self._scopes is not None
        scope = self._scopes.get(participant_id)
        if scope is None:
            return iter(())
        find = self._by_id.get if self._archive is None else self.get
        return (tx for tx in map(find, scope.ids) if tx is not None)

    def __getitem__(self, transaction_id: str) -> Transaction:
        tx = self.get(transaction_id)
        if tx is None:
            raise KeyError(transaction_id)
        return tx

    def get(self, transaction_id: str) -> Transaction | None:
        tx = self._by_id.get(transaction_id)
        if tx is None and self._archive is not None:
            return self._archive.get(transaction_id)
        return tx

    def __contains__(self, transaction_id: object) -> bool:
        return isinstance(transaction_id, str) and self.get(transaction_id) is not None

    def __iter__(self) -> Iterator[Transaction]:
        """In initiation order (dicts keep insertion order; the archive keeps ordinals)."""
        if self._archive is None:
            return iter(self._by_id.values())
        ordinals = self._ordinals
        live = [(ordinals[tx_id], tx) for tx_id, tx in self._by_id.items()]
        return (tx for _, tx in heapq.merge(live, self._archive.items(), key=_first))

    def __len__(self) -> int:
        return len(self._by_id) + (0 if self._archive is None else len(self._archive))

    def forget(self, transaction_id: str) -> Transaction:
        """Remove a terminal transaction (``World.forget``): into the archive, where it is
        still found (and still indexed), or gone."""
        tx = self._by_id.pop(transaction_id)
        assert tx.terminal, f"forgetting open transaction {transaction_id}"
        self._parked -= tx.parked
        if self._archive is not None:
            self._archive.put(self._ordinals.pop(transaction_id), tx)
        elif self._scopes is not None:
            del self._seq[transaction_id]
            for participant_id in dict.fromkeys(tx.audience):
                scope = self._scopes[participant_id]
                scope.dead += 1
                if 2 * scope.dead > len(scope.ids):  # keep the index the size of the book
                    self._scopes[participant_id] = self._compacted(scope)
        return tx

    def _compacted(self, scope: _Scope) -> _Scope:
        kept = _Scope()
        for tx_id, seq, at_ms in zip(scope.ids, scope.seqs, scope.at_ms, strict=True):
            if tx_id in self._by_id:
                kept.ids.append(tx_id)
                kept.seqs.append(seq)
                kept.at_ms.append(at_ms)
        return kept

    def open(self, tx: Transaction) -> Transaction:
        """Record a new transaction in state ``received`` (trigger ``initiated``)."""
        assert tx.id not in self._by_id and not tx.parked
        self._by_id[tx.id] = tx
        if self._archive is not None:
            self._ordinals[tx.id] = self._placed
            self._placed += 1
        if self._scopes is not None:
            self._index(tx)
        append = self._log.append
        for index, step in enumerate(tx.saga.steps):  # a new saga: every step, in order
            append("saga.step", transactionId=tx.id, index=index, name=_TEXT[step.name],
                   status=_TEXT[step.status])
        self._log_state(tx, Trigger.INITIATED, EventType.RECEIVED)
        return tx

    def update(self, transaction_id: str, now_ms: int, **changes: Any) -> Transaction:
        old = self._by_id[transaction_id]
        assert not old.terminal, f"terminal transaction {transaction_id} changed: {changes}"
        assert "parked" not in changes, "parked changes by a transition (apply) only"
        new = old.replace(updated_at_ms=now_ms, **changes)
        self._by_id[transaction_id] = new
        if "saga" in changes:
            self._log_steps(old.saga, new.saga, transaction_id)
        return new

    def complete_step(self, transaction_id: str, now_ms: int, trigger: Trigger | None = None,
                      **changes: Any) -> Transaction:
        """The saga's current step done and the next one current (``Saga.complete_current``)
        with ``changes``: ``update``, or ``apply`` of ``trigger`` if given, with that saga.
        The same records; only the two steps a completion rebuilds are compared."""
        old = self._by_id[transaction_id]
        index = old.saga.current_index
        saga = old.saga.complete_current(now_ms)
        if trigger is None:
            assert not old.terminal, f"terminal transaction {transaction_id} changed: {changes}"
            assert "parked" not in changes, "parked changes by a transition (apply) only"
            new = old.replace(updated_at_ms=now_ms, saga=saga, **changes)
        else:
            new, event = self._transit(old, trigger, now_ms, saga=saga, **changes)
        self._by_id[transaction_id] = new
        append = self._log.append
        done = saga.steps[index]  # was current: always changed
        append("saga.step", transactionId=transaction_id, index=index, name=_TEXT[done.name],
               status=_TEXT[done.status])
        following = saga.current_index
        if following != index and saga.steps[following] != old.saga.steps[following]:
            step = saga.steps[following]
            append("saga.step", transactionId=transaction_id, index=following,
                   name=_TEXT[step.name], status=_TEXT[step.status])
        if trigger is not None:
            self._log_state(new, trigger, event)
        return new

    def amend(self, transaction_id: str, now_ms: int, **changes: Any) -> Transaction:
        """Keep ``details`` true after the public state stopped: a Mode 3 refund that lands
        after the transaction parked returns the tokens (``chain`` and ``rtgs`` only; logged
        as ``transaction.details``, no public event)."""
        assert set(changes) <= {"chain", "rtgs"}, changes
        new = self._by_id[transaction_id].replace(updated_at_ms=now_ms, **changes)
        self._by_id[transaction_id] = new
        self._log.append("transaction.details", transactionId=transaction_id,
                         chain=new.chain.value, rtgs=new.rtgs.value)
        return new

    def apply(self, transaction_id: str, trigger: Trigger, now_ms: int,
              **changes: Any) -> Transaction:
        old = self._by_id[transaction_id]
        new, event = self._transit(old, trigger, now_ms, **changes)
        self._by_id[transaction_id] = new
        if "saga" in changes:
            self._log_steps(old.saga, new.saga, transaction_id)
        self._log_state(new, trigger, event)
        return new

    def _transit(self, old: Transaction, trigger: Trigger, now_ms: int,
                 **changes: Any) -> tuple[Transaction, EventType]:
        """``old`` moved by ``trigger`` through the transition table, with ``changes``; the
        public event the transition names. Every change of ``parked`` passes here."""
        row = transition_from(old.lifecycle_status, old.parked, trigger)
        assert row is not None, f"no transition {old.state} --{trigger}--> for {old.id}"
        assert row.target.status is not None
        new = old.replace(lifecycle_status=row.target.status, parked=row.target.parked,
                          updated_at_ms=now_ms, **changes)
        self._parked += new.parked - old.parked
        return new, row.event

    def _log_state(self, tx: Transaction, trigger: Trigger, event: EventType) -> None:
        self._log.append("transaction.state", transactionId=tx.id,
                         paymentReference=tx.payment_reference,
                         lifecycleStatus=_TEXT[tx.lifecycle_status], parked=tx.parked,
                         terminal=tx.lifecycle_status in TERMINAL_STATUSES,  # tx.terminal
                         event=_TEXT[event], trigger=_TEXT[trigger], reason=tx.reason_code)

    def _log_steps(self, old: Saga, new: Saga, transaction_id: str) -> None:
        """One ``saga.step`` per step of ``new`` that is not the same as in ``old``, in order.

        A saga that stays on its path never changes a step before its current one (those
        are done: ``domain/saga.py``), so the comparison starts at ``old``'s current step;
        a step a change does not rebuild is the same object, passed over without comparing
        it. A saga that changed path (cancelled) is compared from its start."""
        steps = new.steps
        old_steps = old.steps
        start = old.current_index if old.path is new.path else 0
        known = len(old_steps)
        append = self._log.append
        for index in range(start, len(steps)):
            step = steps[index]
            if index < known:
                before = old_steps[index]
                if before is step or before == step:
                    continue
            append("saga.step", transactionId=transaction_id, index=index,
                   name=_TEXT[step.name], status=_TEXT[step.status])
