"""The webhook delivery attempts of a world, read from its event log.

Public names: ``delivery_attempts``, ``delivery_page``.

``delivery_attempts(world, transaction_id=None, subscription_id=None)`` lists the attempts
whose outcome is known (``webhook.attempt`` records), oldest send first (ties in log order),
each with the event it carried (``webhook.event``), the request exactly as signed and sent,
the answer's status (``response``: null when the request was lost or timed out) and
``outcome``: ``delivered`` (2xx in time), ``lost`` (the network lost the request),
``failed`` (anything else). It is what ``GET /sim/v1/deliveries`` pages through
(``http.views``, which re-exports it) and what a transaction's story shows (``story``):
a pure read of the log, below both. ``delivery_page`` reads one page of it at the cost of
the page, through the world's index of attempts in send order
(``clearing_sim.stories.delivery_index``, kept as the log appends them).
"""

from __future__ import annotations

from typing import Any

from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.world import World
from clearing_sim.stories.delivery_index import delivery_index

__all__ = ["delivery_attempts", "delivery_page"]


def _outcome(record: Record) -> str:
    if record["outcome"] == "success":
        return "delivered"
    return "lost" if record["fault"] == "lost" else "failed"


def delivery_attempts(world: World, transaction_id: str | None = None,
                      subscription_id: str | None = None) -> list[dict[str, Any]]:
    """The attempts of ``GET /sim/v1/deliveries``, oldest send first."""
    return delivery_page(world, transaction_id, subscription_id, 0, 10**12)[0]


def delivery_page(world: World, transaction_id: str | None, subscription_id: str | None,
                  start: int, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """``delivery_attempts`` from position ``start``, at most ``limit``, and whether more
    follow: read from the world's index (``delivery_index``), at the cost of the page."""
    pairs, more = delivery_index(world).page(transaction_id, subscription_id, start, limit)
    return [_attempt_wire(world, r, event) for r, event in pairs], more


def _attempt_wire(world: World, r: Record, event: Record) -> dict[str, Any]:
    headers, sent_ms, next_ms = r["headers"], r["sentAtMs"], r["nextAttemptAtMs"]
    assert isinstance(headers, list) and isinstance(sent_ms, int)
    return {
        "eventId": r["eventId"], "eventType": event["type"],
        "transactionId": event["transactionId"], "subscriptionId": r["subscriptionId"],
        "url": r["url"], "attempt": r["attempt"], "at": world.iso(sent_ms),
        "request": {"headers": {name: value for name, value in headers},
                    "body": r["body"]},
        "response": None if r["status"] is None else {"status": r["status"]},
        "outcome": _outcome(r), "fault": r["fault"],
        "nextAttemptAt": world.iso(next_ms) if isinstance(next_ms, int) else None}

