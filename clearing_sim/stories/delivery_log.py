"""The webhook delivery attempts of a world, read from its event log.

Public names: ``delivery_attempts``.

``delivery_attempts(world, transaction_id=None, subscription_id=None)`` lists the attempts
whose outcome is known (``webhook.attempt`` records), oldest send first (ties in log order),
each with the event it carried (``webhook.event``), the request exactly as signed and sent,
the answer's status (``response``: null when the request was lost or timed out) and
``outcome``: ``delivered`` (2xx in time), ``lost`` (the network lost the request),
``failed`` (anything else). It is what ``GET /sim/v1/deliveries`` pages through
(``http.views``, which re-exports it) and what a transaction's story shows (``story``):
a pure read of the log, below both.
"""

from __future__ import annotations

from typing import Any

from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.world import World

__all__ = ["delivery_attempts"]


def _outcome(record: Record) -> str:
    if record["outcome"] == "success":
        return "delivered"
    return "lost" if record["fault"] == "lost" else "failed"


def delivery_attempts(world: World, transaction_id: str | None = None,
                      subscription_id: str | None = None) -> list[dict[str, Any]]:
    """The attempts of ``GET /sim/v1/deliveries``, oldest send first."""
    events = {r["eventId"]: r for r in world.log.select("webhook.event")}
    attempts = []
    for r in world.log.select("webhook.attempt"):
        event = events[r["eventId"]]
        if transaction_id is not None and event["transactionId"] != transaction_id:
            continue
        if subscription_id is not None and r["subscriptionId"] != subscription_id:
            continue
        headers, sent_ms, next_ms = r["headers"], r["sentAtMs"], r["nextAttemptAtMs"]
        assert isinstance(headers, list) and isinstance(sent_ms, int)
        attempts.append((sent_ms, r.seq, {
            "eventId": r["eventId"], "eventType": event["type"],
            "transactionId": event["transactionId"], "subscriptionId": r["subscriptionId"],
            "url": r["url"], "attempt": r["attempt"], "at": world.iso(sent_ms),
            "request": {"headers": {name: value for name, value in headers},
                        "body": r["body"]},
            "response": None if r["status"] is None else {"status": r["status"]},
            "outcome": _outcome(r), "fault": r["fault"],
            "nextAttemptAt": world.iso(next_ms) if isinstance(next_ms, int) else None}))
    return [item for _, _, item in sorted(attempts, key=lambda a: (a[0], a[1]))]
