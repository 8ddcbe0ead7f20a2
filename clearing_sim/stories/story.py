"""One transaction's story as one JSON-able document on a time axis, and the transaction list.

Public names: ``StoryNotFound``, ``build_story``, ``transaction_row``.

What the console (``/sim/console``), ``GET /sim/v1/transactions/{id}/story`` and the HTML
reports (``clearing-sim run --html``, ``timeline --html``) show. It is a pure read of a
world: the records are the ones ``clearing_sim.stories.timeline`` picks and describes (one
selection, one wording, shared with the text ``timeline``); the webhook attempts come
through ``delivery_log.delivery_attempts``, the accessor of ``GET /sim/v1/deliveries``. It
draws no id, appends no record and changes nothing.

Every instant is given twice: ``at`` (the virtual ISO instant, from the world's epoch) and
``offsetMs``/``offset`` (from the transaction's initiation; ``+H:MM:SS.mmm``). The story:

- ``transaction``: the spec's full form (``service.wire.transaction_full``), plus ``legs``
  (each leg's issuer and settlement mode) and ``parkedBecause`` (the reason code, the
  instant and the state record's text, while it is parked);
- ``entries``: every record about it, in log order, with ``lane`` (state, saga, issuer,
  ledger, rtgs, webhook, fault), ``kind``, ``text`` and the record's ``fields``;
- ``instructions``: each issuer instruction with every status it took;
- ``deliveries``: each (event, subscription) with its attempts (time, status, outcome,
  the signed request's headers and body), its outcome (``delivered``, ``failed``,
  ``dropped`` or ``pending``) and ``retriesToCome`` (the schedule's later attempts while
  pending, each flagged when it falls at or after the subscription's disable instant);
- ``subscriptions``: the health of every subscription those deliveries went to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clearing_sim.domain.delivery import RETRY_OFFSETS_MS
from clearing_sim.domain.transaction import Transaction
from clearing_sim.service.wire import transaction_full
from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.world import World
from clearing_sim.stories.delivery_log import delivery_attempts
from clearing_sim.stories.timeline import describe, offset_text, related_records

__all__ = ["StoryNotFound", "build_story", "transaction_row"]


class StoryNotFound(LookupError):
    """No transaction with this id in the world (nor any record about it)."""


class _Axis:
    """Instants of one story: ISO and offset from its start."""

    def __init__(self, world: World, start_ms: int) -> None:
        self.world = world
        self.start_ms = start_ms

    def at(self, at_ms: int) -> dict[str, Any]:
        offset_ms = at_ms - self.start_ms
        return {"at": self.world.iso(at_ms), "atMs": at_ms, "offsetMs": offset_ms,
                "offset": offset_text(offset_ms).strip()}


def transaction_row(world: World, tx: Transaction) -> dict[str, Any]:
    """A transaction as the console's table shows it (``GET /sim/v1/transactions``)."""
    saga = tx.saga
    return {"id": tx.id, "paymentReference": tx.payment_reference,
            "useCase": tx.use_case.value, "lifecycleStatus": tx.lifecycle_status.value,
            "parked": tx.parked, "terminal": tx.terminal, "reasonCode": tx.reason_code,
            "initiatorId": tx.initiator_id, "initiatedAt": world.iso(tx.initiated_at_ms),
            "updatedAt": world.iso(tx.updated_at_ms),
            "sagaStep": {"current": saga.current_index + 1, "name": saga.current.name.value,
                         "total": saga.total},
            "legs": [{"leg": leg.leg, "issuerId": leg.issuer_id,
                      "settlementMode": leg.mode.value} for leg in tx.legs]}


def _entries(records: list[Record], axis: _Axis,
             names: Mapping[str, str]) -> list[dict[str, Any]]:
    entries = []
    for r in records:
        lane, text = describe(_renamed(r, names))
        entries.append({"seq": r.seq, **axis.at(r.at_ms), "lane": lane, "kind": r.kind,
                        "text": text, "fields": dict(r.fields)})
    return entries


def _renamed(r: Record, names: Mapping[str, str]) -> Record:
    if not names:
        return r
    fields = {k: names[v] if isinstance(v, str) and v in names and k != "transactionId"
              else v for k, v in r.fields.items()}
    return Record(r.at_ms, r.seq, r.kind, fields)


def _instructions(records: list[Record], axis: _Axis) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.kind != "issuer.instruction":
            continue
        item = found.setdefault(str(r["instructionId"]), {
            "instructionId": r["instructionId"], "issuerId": r["issuerId"], "leg": r["leg"],
            "statuses": []})
        item["statuses"].append({"status": r["status"], **axis.at(r.at_ms)})
    return list(found.values())


def _retries_to_come(first_sent_ms: int, attempts_made: int, disable_at_ms: int | None,
                     axis: _Axis) -> list[dict[str, Any]]:
    """The schedule's attempts after ``attempts_made`` (attempt n starts
    ``RETRY_OFFSETS_MS[n - 1]`` after attempt 1 started)."""
    now_ms = axis.world.now_ms
    return [{"attempt": n, **axis.at(first_sent_ms + RETRY_OFFSETS_MS[n - 1]),
             "onTheWire": first_sent_ms + RETRY_OFFSETS_MS[n - 1] <= now_ms,
             "afterDisableAt": disable_at_ms is not None
             and first_sent_ms + RETRY_OFFSETS_MS[n - 1] >= disable_at_ms}
            for n in range(attempts_made + 1, len(RETRY_OFFSETS_MS) + 1)]


def _deliveries(world: World, transaction_id: str, records: list[Record],
                axis: _Axis) -> list[dict[str, Any]]:
    endings = {(r["eventId"], r["subscriptionId"]): r for r in records
               if r.kind in ("webhook.delivery_failed", "webhook.delivery_dropped")}
    fanned = [(r, sid) for r in records if r.kind == "webhook.event"
              for sid in r["subscriptionIds"]]  # type: ignore[union-attr]
    sent_ms_of = {(r["eventId"], r["subscriptionId"], r["attempt"]): r["sentAtMs"]
                  for r in records if r.kind == "webhook.attempt"}
    by_key: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for attempt in delivery_attempts(world, transaction_id):
        sent_ms = int(str(sent_ms_of[attempt["eventId"], attempt["subscriptionId"],
                                     attempt["attempt"]]))
        by_key.setdefault((attempt["eventId"], attempt["subscriptionId"]), []).append(
            {**attempt, **axis.at(sent_ms)})
    deliveries = []
    for event, sid in fanned:
        key = (event["eventId"], sid)
        attempts = by_key.get(key, [])
        ending = endings.get(key)
        if any(a["outcome"] == "delivered" for a in attempts):
            outcome = "delivered"
        elif ending is not None:
            outcome = "failed" if ending.kind == "webhook.delivery_failed" else "dropped"
        else:
            outcome = "pending"
        subscription = world.subscriptions.get(str(sid))
        disable_at = subscription.disable_at_ms if subscription is not None else None
        to_come = (_retries_to_come(attempts[0]["atMs"], len(attempts), disable_at, axis)
                   if outcome == "pending" and attempts else [])
        deliveries.append({
            "eventId": event["eventId"], "eventType": event["type"], "subscriptionId": sid,
            **axis.at(event.at_ms), "outcome": outcome, "attempts": attempts,
            "retriesToCome": to_come,
            "ending": None if ending is None else {"kind": ending.kind,
                                                   **axis.at(ending.at_ms)}})
    return deliveries


def _subscriptions(world: World, deliveries: list[dict[str, Any]],
                   axis: _Axis) -> list[dict[str, Any]]:
    wanted = list(dict.fromkeys(str(d["subscriptionId"]) for d in deliveries))
    health = []
    for sid in wanted:
        s = world.subscriptions.get(sid)
        if s is None:
            continue

        def at(ms: int | None) -> dict[str, Any] | None:
            return None if ms is None else axis.at(ms)

        health.append({"id": s.id, "participantId": s.participant_id, "url": s.url,
                       "status": s.status.value, "deleted": s.deleted_at_ms is not None,
                       "lastSuccess": at(s.last_success_at_ms),
                       "failingSince": at(s.failing_since_ms),
                       "disableAt": at(s.disable_at_ms), "disabledAt": at(s.disabled_at_ms),
                       "pendingDeliveries": world.webhooks.pending(s.id)})
    return health


def _parked_because(tx: Transaction, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not tx.parked:
        return None
    parking = next((e for e in reversed(entries)
                    if e["kind"] == "transaction.state" and e["fields"].get("parked")), None)
    return {"reasonCode": tx.reason_code,
            **({} if parking is None else {"at": parking["at"], "offset": parking["offset"],
                                           "text": parking["text"]})}


def build_story(world: World, transaction_id: str, *, polls: bool = False,
                names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The story of one transaction (``StoryNotFound`` when the world knows nothing of it).
    ``names``: ids shown in ``text`` as the names a scenario file gave them."""
    tx = world.transactions.get(transaction_id)
    records = related_records(world.log, transaction_id, polls)
    if tx is None and not records:
        raise StoryNotFound(transaction_id)
    start_ms = tx.initiated_at_ms if tx is not None else records[0].at_ms
    axis = _Axis(world, start_ms)
    entries = _entries(records, axis, names or {})
    deliveries = _deliveries(world, transaction_id, records, axis)
    transaction = None
    if tx is not None:
        transaction = {**transaction_full(tx, world.epoch_ms),
                       **{k: v for k, v in transaction_row(world, tx).items()
                          if k in ("legs", "reasonCode", "initiatorId")},
                       "parkedBecause": _parked_because(tx, entries)}
    return {"transactionId": transaction_id, "start": axis.at(start_ms),
            "now": axis.at(world.now_ms), "transaction": transaction, "entries": entries,
            "instructions": _instructions(records, axis), "deliveries": deliveries,
            "subscriptions": _subscriptions(world, deliveries, axis)}
