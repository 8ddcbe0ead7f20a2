"""A model of a world rebuilt from its event log alone, to hold the engine's state against.

Public names: ``LogReplay``, ``TxModel``, ``Where``, ``expected_cancel_allowed``,
``open_instruction_legs``.

DESIGN.md: "Every observable fact is one record appended to the world's log … nothing reads
private state of a process to learn what happened." ``LogReplay.feed`` folds a world's log,
incrementally, into an independent model:

- each ledger's supply, balances and locks (``ledger.fund|lock|return|transfer|burn|mint``);
- the RTGS adapter's balances and earmarks (``rtgs.account|earmark|settle|release``);
- each transaction's public state, walked through the transition table
  (``transaction.state``), and the triggers seen;
- where each transaction's source tokens are: in the member's wallet, locked, in the issuer's
  treasury, or burned. The only paths are lock → return | transfer | burn and
  treasury → burn | refund; anything else (a refund of a burned source, a second burn) is a
  ``violation``.

``mismatches(world)`` lists every difference between the replayed model and the world's state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from decimal import Decimal
from enum import StrEnum
from itertools import islice
from typing import Any

from attrs import define, field

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.lifecycle import (
    LifecycleStatus,
    State,
    Trigger,
    is_terminal,
    transition,
)
from clearing_sim.domain.profile import Ledger
from clearing_sim.domain.saga import SagaPath, StepName
from clearing_sim.domain.transaction import LegTerms, Transaction
from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.world import World

__all__ = ["LogReplay", "TxModel", "Where", "expected_cancel_allowed", "open_instruction_legs"]

ZERO = Decimal(0)


class Where(StrEnum):
    """Where a transaction's source tokens are."""

    WALLET = "wallet"
    LOCKED = "locked"
    TREASURY = "treasury"
    BURNED = "burned"


@define
class TxModel:
    state: State = State(None)
    triggers: Counter[str] = field(factory=Counter)
    source: Where = Where.WALLET
    burns: int = 0
    mints: int = 0
    refunds: int = 0
    proofs: list[str] = field(factory=list)  # legs with a proof-backed event (Burned, Minted)
    instruction: dict[str, str] = field(factory=dict)  # leg → its latest instruction
    decided: dict[str, bool] = field(factory=dict)  # leg → its issuer approved that one
    settled_fiat: int = 0


class LogReplay:
    def __init__(self) -> None:
        self.seen = 0
        self.supply: Counter[tuple[str, str]] = Counter()  # (ledger, asset code)
        self.balances: Counter[tuple[str, str, str]] = Counter()  # (ledger, account, code)
        self.locks: dict[tuple[str, str], tuple[str, str, Decimal]] = {}  # (ledger, tx)
        self.rtgs: Counter[str] = Counter()
        self.earmarks: dict[str, tuple[str, Decimal]] = {}
        self.txs: dict[str, TxModel] = {}
        self.violations: list[str] = []
        self._handlers: dict[str, Callable[[Record], None]] = {
            "ledger.fund": self._fund, "ledger.lock": self._lock,
            "ledger.return": self._return, "ledger.transfer": self._transfer,
            "ledger.burn": self._burn, "ledger.mint": self._mint,
            "rtgs.account": self._rtgs_account, "rtgs.earmark": self._earmark,
            "rtgs.settle": self._settle, "rtgs.release": self._release,
            "transaction.state": self._state, "saga.event": self._saga_event,
            "issuer.instruction": self._instruction, "issuer.expired": self._expired,
        }
        self._leg_of: dict[str, tuple[str, str]] = {}  # instruction → (transaction, leg)

    def feed(self, log: Iterable[Record]) -> None:
        """Fold the records not seen yet."""
        for record in islice(log, self.seen, None):
            handler = self._handlers.get(record.kind)
            if handler is not None:
                handler(record)
            self.seen += 1

    def _instruction(self, r: Record) -> None:
        tx_id, leg = str(r["transactionId"]), str(r["leg"])
        model = self.tx(tx_id)
        model.instruction[leg] = str(r["instructionId"])
        self._leg_of[str(r["instructionId"])] = (tx_id, leg)
        model.decided[leg] = r["status"] in ("APPROVED", "EXECUTING", "COMPLETED")

    def _expired(self, r: Record) -> None:
        tx_id, leg = self._leg_of[str(r["instructionId"])]
        if self.tx(tx_id).instruction.get(leg) == r["instructionId"]:
            self.tx(tx_id).decided[leg] = False

    def tx(self, transaction_id: str) -> TxModel:
        return self.txs.setdefault(transaction_id, TxModel())

    # ledgers ------------------------------------------------------------------------------
    def _add(self, r: Record, account: str, amount: Decimal) -> None:
        key = (str(r["ledger"]), account, str(r["asset"]))
        self.balances[key] += amount
        if self.balances[key] < 0:
            self.violations.append(f"seq {r.seq}: {key} went negative")

    def _source(self, r: Record, allowed: tuple[Where, ...], to: Where, what: str) -> None:
        model = self.tx(str(r["transactionId"]))
        if model.source not in allowed:
            self.violations.append(f"seq {r.seq}: {what} of transaction {r['transactionId']} "
                                   f"while its source is {model.source.value}")
        model.source = to

    def _fund(self, r: Record) -> None:
        self.supply[(str(r["ledger"]), str(r["asset"]))] += _amount(r)
        self._add(r, str(r["account"]), _amount(r))

    def _lock(self, r: Record) -> None:
        self._add(r, str(r["account"]), -_amount(r))
        self.locks[(str(r["ledger"]), str(r["transactionId"]))] = (
            str(r["account"]), str(r["asset"]), _amount(r))
        self._source(r, (Where.WALLET,), Where.LOCKED, "lock")

    def _take_lock(self, r: Record) -> bool:
        """Consume the transaction's lock when the record moves it (same account)."""
        key = (str(r["ledger"]), str(r["transactionId"]))
        lock = self.locks.get(key)
        if lock is None or lock[0] != r["account"]:
            return False
        if lock[1:] != (r["asset"], _amount(r)):
            self.violations.append(f"seq {r.seq}: {r.kind} moved {r['amount']} {r['asset']} "
                                   f"from a lock of {lock[2]} {lock[1]}")
        del self.locks[key]
        return True

    def _return(self, r: Record) -> None:
        if not self._take_lock(r):
            self.violations.append(f"seq {r.seq}: return without a lock")
        self._add(r, str(r["account"]), _amount(r))
        self._source(r, (Where.LOCKED,), Where.WALLET, "return")

    def _transfer(self, r: Record) -> None:
        self._add(r, str(r["toAccount"]), _amount(r))
        if self._take_lock(r):  # the Mode 3 pre-burn transfer of the locked tokens
            self._source(r, (Where.LOCKED,), Where.TREASURY, "pre-burn transfer")
            return
        self._add(r, str(r["account"]), -_amount(r))  # a refund from the issuer's treasury
        self.tx(str(r["transactionId"])).refunds += 1
        self._source(r, (Where.TREASURY,), Where.WALLET, "refund")

    def _burn(self, r: Record) -> None:
        self.supply[(str(r["ledger"]), str(r["asset"]))] -= _amount(r)
        if not self._take_lock(r):
            self._add(r, str(r["account"]), -_amount(r))
        self.tx(str(r["transactionId"])).burns += 1
        self._source(r, (Where.LOCKED, Where.TREASURY), Where.BURNED, "burn")

    def _mint(self, r: Record) -> None:
        self.supply[(str(r["ledger"]), str(r["asset"]))] += _amount(r)
        self._add(r, str(r["account"]), _amount(r))
        model = self.tx(str(r["transactionId"]))
        model.mints += 1
        if model.mints > 1:
            self.violations.append(f"seq {r.seq}: transaction {r['transactionId']} minted twice")

    # RTGS ---------------------------------------------------------------------------------
    def _rtgs_account(self, r: Record) -> None:
        self.rtgs[str(r["account"])] = Decimal(str(r["balanceGbp"]))

    def _earmark(self, r: Record) -> None:
        tx = str(r["transactionId"])
        if tx in self.earmarks:
            self.violations.append(f"seq {r.seq}: second earmark for {tx}")
        self.rtgs[str(r["account"])] -= Decimal(str(r["amountGbp"]))
        self.earmarks[tx] = (str(r["account"]), Decimal(str(r["amountGbp"])))

    def _settle(self, r: Record) -> None:
        tx = str(r["transactionId"])
        payer, amount = self.earmarks.pop(tx, ("?", ZERO))
        paid, fee = Decimal(str(r["amountGbp"])), Decimal(str(r["feeGbp"]))
        if payer != r["account"] or paid + fee != amount:
            self.violations.append(f"seq {r.seq}: settle of {tx} does not match its earmark")
        self.rtgs[str(r["creditor"])] += paid
        self.rtgs["operator:fees"] += fee
        self.tx(tx).settled_fiat += 1

    def _release(self, r: Record) -> None:
        tx = str(r["transactionId"])
        payer, amount = self.earmarks.pop(tx, ("?", ZERO))
        if payer != r["account"] or amount != Decimal(str(r["amountGbp"])):
            self.violations.append(f"seq {r.seq}: release of {tx} does not match its earmark")
        self.rtgs[str(r["account"])] += Decimal(str(r["amountGbp"]))

    # transactions -------------------------------------------------------------------------
    def _state(self, r: Record) -> None:
        model = self.tx(str(r["transactionId"]))
        trigger = Trigger(str(r["trigger"]))
        row = transition(model.state, trigger)
        status = LifecycleStatus(str(r["lifecycleStatus"]))
        target = State(status, bool(r["parked"]))
        if row is None:
            self.violations.append(f"seq {r.seq}: no transition {model.state} --{trigger}-->")
        elif row.target != target or row.event.value != r["event"]:
            self.violations.append(f"seq {r.seq}: {model.state} --{trigger}--> {target} "
                                   f"({r['event']}), the table says {row.target} ({row.event})")
        if r["terminal"] != is_terminal(status):
            self.violations.append(f"seq {r.seq}: terminal={r['terminal']} for {status}")
        model.state = target
        model.triggers[trigger.value] += 1

    def _saga_event(self, r: Record) -> None:
        leg = {"Burned": "burn", "Minted": "mint"}.get(str(r["event"]))
        if leg is None:
            return
        model = self.tx(str(r["transactionId"]))
        if leg in model.proofs:
            self.violations.append(f"seq {r.seq}: second {r['event']} for {r['transactionId']}")
        model.proofs.append(leg)

    # the world against the model ----------------------------------------------------------
    def mismatches(self, world: World) -> list[str]:
        out: list[str] = []
        for ledger in Ledger:
            chain = world.ledgers[ledger]
            name = ledger.value
            _diff(out, f"{name} supply",
                  {(name, a.code): v for a, v in chain.supply.items()}, _on(self.supply, name))
            held = {(name, acct, a.code): v for acct, by_asset in chain.balances.items()
                    for a, v in by_asset.items()}
            _diff(out, f"{name} balances", held, _on(self.balances, name))
            locks = {(name, tx): (lk.account, lk.money.asset.code, lk.money.amount)
                     for tx, lk in chain.locks.items()}
            _diff(out, f"{name} locks", locks,
                  {k: v for k, v in self.locks.items() if k[0] == name})
        _diff(out, "rtgs balances", dict(world.rtgs.balances), dict(self.rtgs))
        _diff(out, "rtgs earmarks",
              {tx: (e.payer, e.amount) for tx, e in world.rtgs.earmarks.items()}, self.earmarks)
        for tx in world.transactions:
            if self.tx(tx.id).state != tx.state:
                out.append(f"transaction {tx.id} is {tx.state}, its events say "
                           f"{self.tx(tx.id).state}")
        return out


def _amount(r: Record) -> Decimal:
    return Decimal(str(r["amount"]))


def _on(counter: Counter[Any], ledger: str) -> dict[Any, Any]:
    return {k: v for k, v in counter.items() if k[0] == ledger}


def _diff(out: list[str], what: str, actual: dict[Any, Any], model: dict[Any, Any]) -> None:
    def nonzero(d: dict[Any, Any]) -> dict[Any, Any]:
        return {k: v for k, v in d.items() if v != ZERO}
    actual, model = nonzero(actual), nonzero(model)
    if actual != model:
        keys = sorted({*actual, *model}, key=repr)
        diffs = [f"{k}: world {actual.get(k)} log {model.get(k)}" for k in keys
                 if actual.get(k) != model.get(k)]
        out.append(f"{what} differ from the log: " + "; ".join(diffs[:4]))


def expected_cancel_allowed(tx: Transaction) -> bool:
    """Our model of ``actions.cancel.allowed`` (docs/semantics.md): the transaction is open
    and its saga has not reached Burning, the first irrevocable signal."""
    return (tx.lifecycle_status in (LifecycleStatus.RECEIVED, LifecycleStatus.IN_FLIGHT)
            and not tx.parked and tx.saga.path is SagaPath.FULL
            and tx.saga.current.name in (StepName.LOCK, StepName.EARMARKED))


def open_instruction_legs(tx: Transaction, model: TxModel,
                          outcome: Outcome | None = None) -> list[LegTerms]:
    """The legs an armed outcome can still act on, the one it lands on first: issuer-
    instructed legs (Mode 2 and 3) without a proof yet, in the order their issuers decide
    (burn first: sim/saga.py ``plan``). A rejection needs an issuer that has not decided yet
    (REJECTED never follows APPROVED)."""
    open_legs = [leg for leg in tx.legs
                 if leg.mode.number in (2, 3) and leg.leg not in model.proofs]
    if outcome is Outcome.REJECTED:
        return [leg for leg in open_legs if not model.decided.get(leg.leg)]
    return open_legs
