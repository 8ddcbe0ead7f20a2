"""Operator routes that read the world: deliveries, balances, the event log and its digest.

Public names: ``ROUTES``, ``LOG_LIMIT_MAX``, ``balances_of``, ``delivery_attempts`` and
``delivery_page`` (from ``clearing_sim.stories.delivery_log``, below this package, so the story
reads attempts without importing the shim), ``whole_number``.

Everything here is read from the event log or the ledgers, never from a process's private
state (DESIGN.md: the log is the spine):

- ``GET /sim/v1/deliveries?transactionId=&subscriptionId=&cursor=&limit=``: the webhook
  attempts whose outcome is known (``webhook.attempt`` records), oldest send first, a page
  at a time (``limit`` 1–1000, default 100; ``cursor`` the position ``meta.nextCursor``
  gave, in the list as filtered; an attempt whose outcome becomes known later may sort
  before it, since attempts are ordered by send time), with the event it
  carried (``webhook.event``), the request exactly as signed and sent, the answer's status
  (null when the request was lost or timed out) and ``outcome``: ``delivered`` (2xx in time),
  ``lost`` (the network lost the request), ``failed`` (anything else).
- ``GET /sim/v1/balances?participantId=``: ``wallets`` (asset code → amount, at the asset's
  places; ``CODE:issuer`` when a participant holds two assets with one code),
  ``rtgsBalanceGbp`` and ``rtgsEarmarkedGbp``.
- ``GET /sim/v1/log?kind=&cursor=&limit=``: records in order; ``kind`` is a record kind or a
  family (``webhook.``); ``cursor`` a record's ``seq`` to start at (``meta.nextCursor``, or the
  last ``seq`` + 1 to follow the log); ``limit`` 1–1000, default 100.
- ``GET /sim/v1/digest``: the log's sha256 digest, as ``clearing-sim demo`` prints it.
- ``GET /sim/v1/webhooks?participantId=``: every subscription of the world (deleted ones
  too), oldest first, with its ``signingSecret``: the API shows a secret only in the answer
  that created it, so a receiver set up from a world file needs the operator to read it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.domain.money import Money
from clearing_sim.http.surface import OperatorContext, OperatorRoute, participant_of
from clearing_sim.service.context import Reply
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.world import World
from clearing_sim.stories.delivery_log import delivery_attempts, delivery_page

__all__ = ["LOG_LIMIT_MAX", "ROUTES", "balances_of", "delivery_attempts", "delivery_page",
           "whole_number"]

LOG_LIMIT_MAX = 1000
LOG_LIMIT_DEFAULT = 100
_PENNY = Decimal("0.01")


async def deliveries(ctx: OperatorContext) -> Reply:
    query = ctx.query
    start = _whole(query, "cursor", "invalid_cursor", 0, 10**12, 0)
    limit = _whole(query, "limit", "invalid_query", 1, LOG_LIMIT_MAX, LOG_LIMIT_DEFAULT)
    page, more = delivery_page(ctx.world, query.get("transactionId"),
                               query.get("subscriptionId"), start, limit)
    return Reply(200, page, next_cursor=str(start + limit) if more else None)


async def balances(ctx: OperatorContext) -> Reply:
    query = ctx.query
    if "participantId" not in query:
        raise InvalidRequest.one("participantId", "invalid_query",
                                 "participantId is required: whose balances?")
    return Reply(200, balances_of(ctx.world, participant_of(ctx.world,
                                                            query["participantId"])))


def balances_of(world: World, participant: Participant) -> dict[str, Any]:
    """``GET /sim/v1/balances``'s answer for one participant."""
    held: list[Money] = []
    for ledger, account in participant.wallets.items():
        for asset, amount in world.ledgers[ledger].balances.get(account, {}).items():
            held.append(Money.of(amount, asset))
    codes = [money.asset.code for money in held]
    wallets = {(m.asset.code if codes.count(m.asset.code) == 1
                else f"{m.asset.code}:{m.asset.issuer}"): m.wire_amount() for m in held}
    earmarked = sum((e.amount for e in world.rtgs.earmarks.values()
                     if e.payer == participant.id), Decimal(0))
    rtgs = world.rtgs.balances.get(participant.id, Decimal(0))
    return {"participantId": participant.id, "wallets": wallets,
            "rtgsBalanceGbp": f"{rtgs.quantize(_PENNY):f}",
            "rtgsEarmarkedGbp": f"{earmarked.quantize(_PENNY):f}"}


def _whole(query: dict[str, str], name: str, code: str, low: int, high: int,
           default: int) -> int:
    text = query.get(name)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit() and len(text) <= 12 and low <= int(text) <= high):
        raise InvalidRequest.one(name, code, f"{name} must be a whole number from {low} to "
                                             f"{high}")
    return int(text)


whole_number = _whole  # a query parameter read as a bounded whole number


async def log(ctx: OperatorContext) -> Reply:
    query = ctx.query
    world = ctx.world
    start = _whole(query, "cursor", "invalid_cursor", 0, 10**12, 0)
    limit = _whole(query, "limit", "invalid_query", 1, LOG_LIMIT_MAX, LOG_LIMIT_DEFAULT)
    found = world.log.page(query.get("kind") or None, start, limit + 1)
    page = found[:limit]
    next_cursor = str(found[limit].seq) if len(found) > limit else None
    return Reply(200, [{"seq": r.seq, "at": world.iso(r.at_ms), "atMs": r.at_ms,
                        "kind": r.kind, "fields": dict(r.fields)} for r in page],
                 next_cursor=next_cursor)


async def digest(ctx: OperatorContext) -> Reply:
    world = ctx.world
    return Reply(200, {"digest": world.log.digest(), "records": len(world.log),
                       "seed": ctx.sim.seed})


async def webhooks(ctx: OperatorContext) -> Reply:
    query = ctx.query
    world = ctx.world
    wanted = query.get("participantId")
    if wanted is not None:
        wanted = participant_of(world, wanted).id
    return Reply(200, [{
        "id": s.id, "participantId": s.participant_id, "url": s.url,
        "events": [event.value for event in s.events], "status": s.status.value,
        "deleted": s.deleted_at_ms is not None, "signingSecret": s.signing_secret}
        for s in world.subscriptions if wanted is None or s.participant_id == wanted],
        next_cursor=None)


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("GET", "/sim/v1/deliveries", deliveries,
                  "webhook delivery attempts, oldest first, as signed and sent",
                  query=("transactionId", "subscriptionId", "cursor", "limit")),
    OperatorRoute("GET", "/sim/v1/balances", balances,
                  "a participant's wallets and RTGS balance", query=("participantId",)),
    OperatorRoute("GET", "/sim/v1/log", log, "the event log, page by page",
                  query=("kind", "cursor", "limit")),
    OperatorRoute("GET", "/sim/v1/digest", digest, "the event log's digest"),
    OperatorRoute("GET", "/sim/v1/webhooks", webhooks,
                  "every webhook subscription with its signing secret",
                  query=("participantId",)),
)
