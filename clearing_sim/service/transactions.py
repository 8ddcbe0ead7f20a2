"""Transactions: initiate, list, get, cancel and recovery-status.

Public names: ``ROUTES``, ``read_initiation``, ``in_scope``, ``LIMIT_DEFAULT``, ``LIMIT_MAX``.

Scope (spec, Authentication 3): a transaction belongs to its initiating member and to the
issuers it lists; anything else is reported as 404. Cancel needs ``transactions:write``,
which only members hold, so only the initiator cancels. The list is newest first; its
cursor names the last transaction returned, so transactions that arrive between pages appear
only on a new first page and pages never repeat or skip (docs/semantics.md); when that
transaction has been forgotten since, the next page resumes by its creation time. Pages
come from the book's index of each participant's transactions (``newest_first``, the same
rule as ``in_scope``), so a page costs its size, not the world's. A cursor is
opaque and bound to the caller and the query (``clearing_sim.service.cursors``).
"""

from __future__ import annotations

from itertools import islice
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
from clearing_sim.service.cursors import CursorCodec, Position

__all__ = ["LIMIT_DEFAULT", "LIMIT_MAX", "ROUTES", "in_scope", "read_initiation"]

LIMIT_DEFAULT = 20
LIMIT_MAX = 100


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


_USE_CASES = tuple(u.value for u in UseCase)


def read_initiation(f: Fields) -> InitiateRequest | None:
    """The initiate body's fields (problems collected in ``f``); ``None`` if any is missing."""
    use_case = f.text("useCase", choices=_USE_CASES)
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
    agent_id = None
    if agent_ref is not None:  # the mandate's cap needs the amount before anything acts
        amount = ctx.world.check_initiation(ctx.caller.id, request)
        agent_id = authorise_agent(ctx, agent_ref, "initiateTransaction", amount)
    # ``world.initiate`` validates (the same checks, the same errors) before it acts
    tx = ctx.world.initiate(ctx.caller.id, request, CommandId(ctx.command_id), agent_id)
    return Reply(201, _full(ctx, tx))


def _limit(text: str | None) -> int:
    if text is None:
        return LIMIT_DEFAULT
    if not (text.isascii() and text.isdigit() and len(text) <= 3) \
            or not 1 <= int(text) <= LIMIT_MAX:
        raise InvalidRequest.one("limit", "invalid_query",
                                 f"limit must be an integer from 1 to {LIMIT_MAX}")
    return int(text)


def list_transactions(ctx: Context) -> Reply:
    query = ctx.request.query  # only cursor and limit, each once (the route's ``query``)
    limit = _limit(ctx.request.query_param("limit"))
    cursor = ctx.request.query_param("cursor")
    codec: CursorCodec = ctx.credentials.cursors
    scope = CursorCodec.query_scope(ctx.request.path, query, limit)
    after = None
    if cursor is not None:
        position = codec.decode(cursor, ctx.caller.id, scope)
        after = (position.item_id, position.at_ms)
    # the caller's own, from the book's index (scope: ``in_scope``): a page costs its size
    mine = list(islice(ctx.world.transactions.newest_first(ctx.caller.id, after), limit + 1))
    page = mine[:limit]
    next_cursor = None
    if len(mine) > limit:
        last = page[-1]
        next_cursor = codec.encode(Position(last.id, last.initiated_at_ms), ctx.caller.id,
                                   scope)
    return Reply(200, [wire.transaction_item(tx) for tx in page], next_cursor=next_cursor)


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
          _READ, query=("cursor", "limit")),
    Route("GET", "/api/v1/transactions/{id}", get_transaction, "one transaction, full form",
          _READ),
    Route("POST", "/api/v1/transactions/{id}/cancel", cancel, "cancel a transaction", _WRITE),
    Route("GET", "/api/v1/transactions/{id}/recovery-status", recovery_status,
          "how a transaction stands on the way to recovery", _READ),
)
