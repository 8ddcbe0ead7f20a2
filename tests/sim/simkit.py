"""Helpers the simulation tests share: drive a world a step at a time and read its log.

Public names: ``INTAKE_MS``, ``call``, ``step_until``, ``state_events``, ``steps``,
``holdings``, ``watch_invariants``, ``log_without``, ``instruction_ids``.

Tests read what happened from the world's event log (DESIGN.md, "The event log is the
spine") and from the public registries (transactions, ledgers, the RTGS adapter).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Generator
from decimal import Decimal
from typing import Any

from clearing_sim.domain.transaction import Transaction
from clearing_sim.sim.eventlog import JsonValue, Record
from clearing_sim.sim.examples import Cast
from clearing_sim.sim.rtgs import OPERATOR_FEE_ACCOUNT
from clearing_sim.sim.world import World

__all__ = ["INTAKE_MS", "call", "holdings", "instruction_ids", "log_without", "state_events",
           "step_until", "step_until_deadline", "steps", "watch_invariants"]

INTAKE_MS = 200


def step_until(world: World, kind: str, /, **match: JsonValue) -> Record:
    """Run the world one SimPy event at a time until a ``kind`` record matching ``match``
    exists; return the first such record. The clock stops at that record's instant."""
    return _step_until_record(
        world, lambda r: r.kind == kind and all(r.get(k) == v for k, v in match.items()),
        f"a {kind} record matching {match}")


def step_until_deadline(world: World, transaction_id: str) -> Record:
    """Run the world until the saga sends the transaction's first request an approval SLA
    counts from (a ``saga.execute_sent``, or a ``saga.instruction_sent`` with a deadline:
    Mode 3); return its record."""
    return _step_until_record(
        world, lambda r: r.kind in ("saga.execute_sent", "saga.instruction_sent")
        and r.get("transactionId") == transaction_id and r.get("deadlineMs") is not None,
        f"{transaction_id}'s first deadline")


def _step_until_record(world: World, wanted: Callable[[Record], bool], what: str) -> Record:
    seen = 0
    while True:
        for record in itertools.islice(world.log, seen, None):
            if wanted(record):
                return record
        seen = len(world.log)
        if world.env.peek() == math.inf:
            raise AssertionError(f"the world ran dry before {what}")
        world.env.step()


def call(world: World, process: Generator[Any, Any, Any]) -> Any:
    """Run one engine sub-process (an issuer route, a ledger operation) to its end."""
    return world.env.run(until=world.env.process(process))


def state_events(world: World, transaction_id: str) -> list[str]:
    """The public events the transaction published, in order, without the prefix."""
    return [str(r["event"]).removeprefix("transaction.")
            for r in world.log.select("transaction.state", transactionId=transaction_id)]


def steps(tx: Transaction) -> list[tuple[str, str]]:
    return [(s.name.value, s.status.value) for s in tx.saga.steps]


def holdings(cast: Cast) -> dict[tuple[str, str], Decimal]:
    """Every balance a path can move: the member's wallet and the supply of each issued
    asset, and every RTGS account (named by participant; the fee account by its key)."""
    world = cast.world
    out: dict[tuple[str, str], Decimal] = {}
    for issuer in world.participants:
        for asset in issuer.assets:
            ledger = world.ledgers[issuer.profile.ledger]
            out[("wallet", asset.code)] = ledger.balance(
                world.wallet(cast.member, ledger.ledger), asset).amount
            out[("supply", asset.code)] = ledger.supply.get(asset, Decimal(0))
    for account, balance in world.rtgs.balances.items():
        name = account if account == OPERATOR_FEE_ACCOUNT else world.participants[account].name
        out[("rtgs", name)] = balance
    return out


def watch_invariants(world: World) -> Callable[[], None]:
    """Check on every log record that each ledger conserves its assets and that the fiat in
    the RTGS scheme is constant, and that no field takes a name of the canonical line's own
    members (``EventLog.append`` leaves that check to the paths that run every kind);
    returns a final check for the end of the test."""
    fiat = world.rtgs.total()

    def check(record: Record | None = None) -> None:
        if record is not None:
            assert not {"at", "seq", "kind"} & record.fields.keys(), record
        for ledger in world.ledgers.values():
            assert ledger.conserved(), f"{ledger.ledger} not conserved at {record}"
        assert world.rtgs.total() == fiat, f"RTGS fiat changed at {record}"

    world.log.listen(check)
    return check


def log_without(world: World, *dropped: Record) -> list[tuple[int, str, dict[str, Any]]]:
    """The log as (at, kind, fields), leaving out ``dropped`` (for comparing two runs)."""
    skip = {r.seq for r in dropped}
    return [(r.at_ms, r.kind, dict(r.fields)) for r in world.log if r.seq not in skip]


def instruction_ids(world: World, transaction_id: str, kind: str | None = None) -> list[str]:
    """Ids of the issuer instructions created for a transaction, in creation order."""
    match: dict[str, JsonValue] = {"transactionId": transaction_id, "status": "RECEIVED"}
    if kind is not None:
        match["leg"] = kind
    return [str(r["instructionId"]) for r in world.log.select("issuer.instruction", **match)]
