"""The transaction book: the one place a transaction changes, and every change logged.

Public names: ``TransactionBook``.

``update`` replaces fields (details, saga, fee status) and stamps ``updatedAt``; ``amend``
keeps ``details`` true after a transaction stopped (a refund landing after a park); ``apply``
moves the public state through the transition table and logs the public event it names.
Every saga step whose status changed is logged as ``saga.step``; every state change as
``transaction.state`` with the event type, the fact the webhook channel fans out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from clearing_sim.domain.lifecycle import EventType, LifecycleStatus, Trigger, transition_from
from clearing_sim.domain.saga import Saga, Step, StepName, StepStatus
from clearing_sim.domain.transaction import Transaction

if TYPE_CHECKING:
    from clearing_sim.sim.eventlog import EventLog

__all__ = ["TransactionBook"]

#: The log's text of every status, step and trigger the book writes, looked up by the member
#: itself (a ``StrEnum`` member is the string it stands for): ``.value`` is a Python-level
#: property, about 1,900 instructions a read, and the book writes ~35 per redeem.
_TEXT: dict[str, str] = {member: member.value for kind in (
    StepName, StepStatus, LifecycleStatus, Trigger, EventType) for member in kind}


class TransactionBook:
    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._by_id: dict[str, Transaction] = {}

    def __getitem__(self, transaction_id: str) -> Transaction:
        return self._by_id[transaction_id]

    def get(self, transaction_id: str) -> Transaction | None:
        return self._by_id.get(transaction_id)

    def __contains__(self, transaction_id: object) -> bool:
        return transaction_id in self._by_id

    def __iter__(self) -> Iterator[Transaction]:
        """In initiation order (dicts keep insertion order)."""
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def forget(self, transaction_id: str) -> Transaction:
        """Remove a terminal transaction (``World.forget``); it is no longer found."""
        tx = self._by_id.pop(transaction_id)
        assert tx.terminal, f"forgetting open transaction {transaction_id}"
        return tx

    def open(self, tx: Transaction) -> Transaction:
        """Record a new transaction in state ``received`` (trigger ``initiated``)."""
        assert tx.id not in self._by_id
        self._by_id[tx.id] = tx
        self._log_steps(None, tx.saga, tx.id)
        self._log_state(tx, Trigger.INITIATED, EventType.RECEIVED)
        return tx

    def update(self, transaction_id: str, now_ms: int, **changes: Any) -> Transaction:
        old = self._by_id[transaction_id]
        assert not old.terminal, f"terminal transaction {transaction_id} changed: {changes}"
        new = old.replace(updated_at_ms=now_ms, **changes)
        self._by_id[transaction_id] = new
        if "saga" in changes:
            self._log_steps(old.saga, new.saga, transaction_id)
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
        row = transition_from(old.lifecycle_status, old.parked, trigger)
        assert row is not None, f"no transition {old.state} --{trigger}--> for {transaction_id}"
        assert row.target.status is not None
        new = old.replace(lifecycle_status=row.target.status, parked=row.target.parked,
                          updated_at_ms=now_ms, **changes)
        self._by_id[transaction_id] = new
        if "saga" in changes:
            self._log_steps(old.saga, new.saga, transaction_id)
        self._log_state(new, trigger, row.event)
        return new

    def _log_state(self, tx: Transaction, trigger: Trigger, event: EventType) -> None:
        self._log.append("transaction.state", transactionId=tx.id,
                         paymentReference=tx.payment_reference,
                         lifecycleStatus=_TEXT[tx.lifecycle_status], parked=tx.parked,
                         terminal=tx.terminal, event=_TEXT[event], trigger=_TEXT[trigger],
                         reason=tx.reason_code)

    def _log_steps(self, old: Saga | None, new: Saga, transaction_id: str) -> None:
        """One ``saga.step`` per step of ``new`` that is not the same as in ``old``, in order.

        A saga that stays on its path never changes a step before its current one (those
        are done: ``domain/saga.py``), so the comparison starts at ``old``'s current step;
        a step a change does not rebuild is the same object, passed over without comparing
        it. A new saga, or one that changed path (cancelled), is compared from its start."""
        steps = new.steps
        old_steps: tuple[Step, ...] = ()
        start = 0
        if old is not None:
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
