"""Read-only operator routes the console reads through: they change nothing, not even ids.

Public names: ``ROUTES``, ``TAIL_LIMIT_DEFAULT``.

Reading a transaction through ``/api/v1`` draws a command id and logs ``api.request``, so a
console reading there would change the digest and the journal. These routes read the world
under the world lock and change nothing: no record, no journal entry (they are reads), and
no command id drawn from the operator's seeded stream (``OperatorRoute.quiet``: their
``meta.commandId`` is not from any seeded stream, as for ``GET /sim/v1/health``), so the
operator's later answers carry the ids they would have carried without the console.

- ``GET /sim/v1/transactions?lifecycleStatus=&parked=&terminal=&useCase=&participantId=
  &cursor=&limit=``: every transaction, in initiation order, filtered (``parked`` and
  ``terminal`` are ``true``/``false``; ``participantId`` one of its parties: the initiating
  member or a listed issuer), a page at a time (``limit`` 1–1000, default 100; ``cursor``
  the position ``meta.nextCursor`` gave).
- ``GET /sim/v1/transactions/{id}/story?polls=``: the transaction's story
  (``clearing_sim.stories.story.build_story``); 404 ``transaction_not_found``.
- ``GET /sim/v1/overview``: the clock, the digest, whether a journal is on (and its
  checkpoints), and every participant with its wallets and RTGS balances.
- ``GET /sim/v1/tail?kind=&transactionId=&limit=``: the last ``limit`` (1–1000, default 50)
  records of the log, oldest first, of a ``kind`` (or family, ``webhook.``) and/or about
  one transaction.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from clearing_sim.domain.errors import InvalidRequest, NotFound
from clearing_sim.domain.lifecycle import TERMINAL_STATUSES, LifecycleStatus
from clearing_sim.domain.transaction import Transaction, UseCase
from clearing_sim.http import views
from clearing_sim.http.participants import participant_wire
from clearing_sim.http.surface import OperatorContext, OperatorRoute, participant_of
from clearing_sim.service.context import Reply
from clearing_sim.sim.eventlog import Record, kind_matches
from clearing_sim.sim.world import World
from clearing_sim.stories.story import StoryNotFound, build_story, transaction_row
from clearing_sim.stories.timeline import related_records

__all__ = ["ROUTES", "TAIL_LIMIT_DEFAULT"]

TAIL_LIMIT_DEFAULT = 50
_BOOLEANS = {"true": True, "false": False}


def _flag(query: dict[str, str], name: str) -> bool | None:
    text = query.get(name)
    if text is None:
        return None
    if text not in _BOOLEANS:
        raise InvalidRequest.one(name, "invalid_query", f"{name} must be true or false")
    return _BOOLEANS[text]


def _one_of(query: dict[str, str], name: str, values: list[str]) -> str | None:
    text = query.get(name)
    if text is not None and text not in values:
        raise InvalidRequest.one(name, "invalid_query",
                                 f"{name} must be one of {', '.join(values)}")
    return text


def _wanted(ctx: OperatorContext) -> Iterator[Transaction]:
    """The filtered list, lazily (its filters checked at once): read in initiation order
    as far as the reader goes, and only from memory when the filters leave out terminal
    transactions (the archived ones)."""
    query = ctx.query
    status = _one_of(query, "lifecycleStatus", [s.value for s in LifecycleStatus])
    use_case = _one_of(query, "useCase", [u.value for u in UseCase])
    parked, terminal = _flag(query, "parked"), _flag(query, "terminal")
    party = query.get("participantId")
    if party is not None:
        party = participant_of(ctx.world, party).id
    live_only = terminal is False or (
        status is not None and LifecycleStatus(status) not in TERMINAL_STATUSES)
    return (tx for tx in ctx.world.transactions.in_order(party, live_only=live_only)
            if (status is None or tx.lifecycle_status.value == status)
            and (use_case is None or tx.use_case.value == use_case)
            and (parked is None or tx.parked is parked)
            and (terminal is None or tx.terminal is terminal)
            and (party is None or party in tx.audience))


async def transactions(ctx: OperatorContext) -> Reply:
    found = _wanted(ctx)
    query = dict(ctx.request.query)
    start = views.whole_number(query, "cursor", "invalid_cursor", 0, 10**12, 0)
    limit = views.whole_number(query, "limit", "invalid_query", 1, views.LOG_LIMIT_MAX, 100)
    window = list(islice(found, start, start + limit + 1))  # the page, and one to tell more
    next_cursor = str(start + limit) if len(window) > limit else None
    return Reply(200, [transaction_row(ctx.world, tx) for tx in window[:limit]],
                 next_cursor=next_cursor)


async def story(ctx: OperatorContext) -> Reply:
    query = ctx.query
    transaction_id = ctx.params["id"]
    try:
        return Reply(200, build_story(ctx.world, transaction_id,
                                      polls=bool(_flag(query, "polls"))))
    except StoryNotFound:
        raise NotFound.one("id", "transaction_not_found",
                           f"no transaction {transaction_id[:64]}") from None


async def overview(ctx: OperatorContext) -> Reply:
    world = ctx.world
    journal = ctx.sim.journal
    return Reply(200, {
        "clock": ctx.clock.wire(), "seed": ctx.sim.seed, "digest": world.log.digest(),
        "records": len(world.log), "journal": journal is not None,
        "checkpoints": [] if journal is None
        else [c.wire(world.iso(c.at_ms)) for c in journal.checkpoints.values()],
        "participants": [{**participant_wire(p), **views.balances_of(world, p)}
                         for p in world.participants]})


def _record_wire(world: World, r: Record) -> dict[str, Any]:
    return {"seq": r.seq, "at": world.iso(r.at_ms), "atMs": r.at_ms, "kind": r.kind,
            "fields": dict(r.fields)}


async def tail(ctx: OperatorContext) -> Reply:
    query = ctx.query
    world = ctx.world
    limit = views.whole_number(query, "limit", "invalid_query", 1, views.LOG_LIMIT_MAX,
                               TAIL_LIMIT_DEFAULT)
    kind = query.get("kind") or None
    transaction_id = query.get("transactionId") or None
    if transaction_id is None:
        records: Iterable[Record] = world.log.last(kind, limit)
    else:
        records = (r for r in related_records(world.log, transaction_id, False)
                   if kind_matches(kind, r.kind))
    return Reply(200, [_record_wire(world, r) for r in deque(records, maxlen=limit)],
                 next_cursor=None)


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("GET", "/sim/v1/transactions", transactions,
                  "every transaction, filtered, a page at a time (reads nothing else, "
                  "changes nothing)", quiet=True,
                  query=("lifecycleStatus", "parked", "terminal", "useCase", "participantId",
                         "cursor", "limit")),
    OperatorRoute("GET", "/sim/v1/transactions/{id}/story", story,
                  "one transaction's story on a time axis (changes nothing)", quiet=True,
                  query=("polls",)),
    OperatorRoute("GET", "/sim/v1/overview", overview,
                  "the clock, the digest, the journal and every participant's balances "
                  "(changes nothing)", quiet=True),
    OperatorRoute("GET", "/sim/v1/tail", tail,
                  "the last records of the log, of a kind or a transaction (changes "
                  "nothing)", quiet=True, query=("kind", "transactionId", "limit")),
)
