"""Transactions: initiate, list, get, cancel and recovery-status.

Public names: ``ROUTES``, ``read_initiation``, ``in_scope``, ``encode_cursor``,
``decode_cursor``, ``LIMIT_DEFAULT``, ``LIMIT_MAX``.

Scope (spec, Authentication 3): a transaction belongs to its initiating member and to the
issuers it lists; anything else is reported as 404. Cancel needs ``transactions:write``,
which only members hold, so only the initiator cancels. The list is newest first; its
cursor names the last transaction returned, so transactions that arrive between pages appear
only on a new first page and pages never repeat or skip (docs/semantics.md).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from clearing_sim.domain.errors import InvalidRequest, NotFound
from clearing_sim.domain.ids import CommandId
from clearing_sim.domain.initiation import AssetRef, InitiateRequest, LegRequest
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.domain.parties import Capability
from clearing_sim.domain.transaction import Transaction, UseCase
from clearing_sim.service import wire
from clearing_sim.service.agents import authorise_agent, read_agent_ref
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Context, Reply, Route

__all__ = ["LIMIT_DEFAULT", "LIMIT_MAX", "ROUTES", "decode_cursor", "encode_cursor",
           "in_scope", "read_initiation"]

LIMIT_DEFAULT = 20
LIMIT_MAX = 100
_CURSOR_PREFIX = "txc1:"


def _leg(f: Fields, side: str) -> LegRequest | None:
    leg = f.object(side)
    if leg is None:
        return None
    amount = leg.text("amount", length_max=80)
    asset = leg.object("asset")
    ref = None
    if asset is not None:
        code = asset.text("code", length_max=32)
        issuer = asset.text("issuer", required=False, length_max=200)
        asset.check_unknown()
        ref = AssetRef(code, issuer) if code is not None else None
    leg.check_unknown()
    return LegRequest(amount, ref) if amount is not None and ref is not None else None


def read_initiation(f: Fields) -> InitiateRequest | None:
    """The initiate body's fields (problems collected in ``f``); ``None`` if any is missing."""
    use_case = f.text("useCase", choices=[u.value for u in UseCase])
    reference = f.text("paymentReference", length_max=140)
    source = _leg(f, "source")
    target = _leg(f, "target")
    if use_case is None or reference is None or source is None or target is None:
        return None
    return InitiateRequest(UseCase(use_case), reference, source, target)


def in_scope(tx: Transaction, participant_id: str) -> bool:
    return participant_id in tx.audience


def _find(ctx: Context) -> Transaction:
    tx = ctx.world.transactions.get(ctx.params["id"])
    if tx is None or not in_scope(tx, ctx.caller.id):
        raise NotFound.one(None, "transaction_not_found",
                           f"no transaction {ctx.params['id'][:64]} in your scope")
    return tx


def _full(ctx: Context, tx: Transaction) -> dict[str, Any]:
    return wire.transaction_full(tx, ctx.world.epoch_ms)


def initiate(ctx: Context) -> Reply:
    f = ctx.fields()
    request = read_initiation(f)
    agent_ref = read_agent_ref(f)
    f.done()
    assert request is not None
    amount = ctx.world.check_initiation(ctx.caller.id, request)
    agent_id = authorise_agent(ctx, agent_ref, "initiateTransaction", amount)
    tx = ctx.world.initiate(ctx.caller.id, request, CommandId(ctx.command_id), agent_id)
    return Reply(201, _full(ctx, tx))


def encode_cursor(position: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{position}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    number = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not number.isascii() or not number.isdigit():
        raise InvalidRequest.one("cursor", "invalid_cursor",
                                 "cursor must be a meta.nextCursor value from this list")
    return int(number)


def _limit(text: str | None) -> int:
    if text is None:
        return LIMIT_DEFAULT
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= LIMIT_MAX:
        raise InvalidRequest.one("limit", "invalid_query",
                                 f"limit must be an integer from 1 to {LIMIT_MAX}")
    return int(text)


def list_transactions(ctx: Context) -> Reply:
    unknown = [name for name, _ in ctx.request.query if name not in ("cursor", "limit")]
    if unknown:
        raise InvalidRequest.one(unknown[0], "invalid_query",
                                 f"unknown query parameter {unknown[0][:40]!r}; "
                                 "accepted: cursor, limit")
    limit = _limit(ctx.request.query_param("limit"))
    cursor = ctx.request.query_param("cursor")
    before = decode_cursor(cursor) if cursor is not None else None
    mine = [(position, tx) for position, tx in enumerate(ctx.world.transactions)
            if in_scope(tx, ctx.caller.id) and (before is None or position < before)]
    page = mine[::-1][:limit]
    has_more = len(mine) > limit
    next_cursor = encode_cursor(page[-1][0]) if has_more else None
    return Reply(200, [wire.transaction_item(tx) for _, tx in page], next_cursor=next_cursor)


def get_transaction(ctx: Context) -> Reply:
    return Reply(200, _full(ctx, _find(ctx)))


def cancel(ctx: Context) -> Reply:
    f = ctx.fields(empty_ok=True)
    agent_ref = read_agent_ref(f)
    f.done()
    tx = _find(ctx)
    if tx.initiator_id != ctx.caller.id:
        raise NotFound.one(None, "transaction_not_found",
                           f"no transaction {tx.id} you initiated")
    authorise_agent(ctx, agent_ref, "cancelOwnTransaction")
    return Reply(200, _full(ctx, ctx.world.cancel(tx.id)))


def recovery_status(ctx: Context) -> Reply:
    """Where a transaction stands on the way to recovery, from the log's state records."""
    tx = _find(ctx)
    world = ctx.world
    history = world.log.select("transaction.state", transactionId=tx.id)
    parks = [r for r in history if r["event"] == EventType.PARKED.value]
    fixes = [r for r in history if r["trigger"] == "operator_fix"]
    return Reply(200, {
        "transactionId": tx.id,
        "lifecycleStatus": tx.lifecycle_status.value,
        "parked": tx.parked,
        "terminal": tx.terminal,
        "recoverable": tx.parked,
        "awaiting": "operator" if tx.parked else ("none" if tx.terminal else "service"),
        "reason": None if tx.reason_code is None else {"code": tx.reason_code},
        "parkedAt": world.iso(parks[-1].at_ms) if tx.parked and parks else None,
        "operatorFixes": len(fixes),
        "lastOperatorFixAt": world.iso(fixes[-1].at_ms) if fixes else None,
        "history": [{"at": world.iso(r.at_ms), "event": r["event"],
                     "lifecycleStatus": r["lifecycleStatus"], "parked": r["parked"]}
                    for r in history],
    })


_C = Capability
_READ = (_C.TRANSACTIONS_READ, _C.TRANSACTIONS_WRITE)
_WRITE = (_C.TRANSACTIONS_WRITE,)
ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/transactions", initiate, "initiate a redeem or swap", _WRITE),
    Route("GET", "/api/v1/transactions", list_transactions, "list the caller's transactions",
          _READ),
    Route("GET", "/api/v1/transactions/{id}", get_transaction, "one transaction, full form",
          _READ),
    Route("POST", "/api/v1/transactions/{id}/cancel", cancel, "cancel a transaction", _WRITE),
    Route("GET", "/api/v1/transactions/{id}/recovery-status", recovery_status,
          "how a transaction stands on the way to recovery", _READ),
)
