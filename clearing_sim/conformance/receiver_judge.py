"""The receiver kit's verdicts that rest on what the receiver did after answering: its
fetches (the shim's log, timed) and its view (the probe), once ``Battery.settle`` is over.

Public names: ``judge_all``.

``judge_all(battery)`` gives, in ``CHECKS`` order, the checks the battery left pending
(``refusal-not-remembered``, ``fetch-failure-retried``, ``reentry-not-duplicate``,
``reordered-pair``), then ``fetch-after-delivery``, ``state-after-fetch`` and
``view-matches-service``, and the advice for the report's notes. Each failure's reason
names the field it is about (``data.transactionId``, ``Service-Webhook-Id``) and what was
seen, with instants as ms since the battery's first delivery.
"""

from __future__ import annotations

import json
import time

from clearing_sim.conformance.receiver_battery import Battery, NewEvent, Pending
from clearing_sim.conformance.receiver_evidence import Change, Observer, fetches_between, folded
from clearing_sim.conformance.receiver_rules import check, pass_if
from clearing_sim.conformance.report import Check, Exchange, Verdict
from clearing_sim.webhooks import TransactionView

__all__ = ["judge_all"]

_NO_PROBE = ("no --probe-url: the receiver's view cannot be read, so {what} cannot be "
             "judged (the probe contract: docs/conformance.md)")
_AUTH_REFUSALS = (401, 403, 404)


def _view_text(view: TransactionView | None) -> str:
    if view is None:
        return "missing (no 200 JSON view)"
    return json.dumps({"lifecycleStatus": view.lifecycle_status, "parked": view.parked,
                       "terminal": view.terminal})


def _since(battery: Battery, pending: Pending) -> float:
    """When a fetch starts to count for a pending check: after the kit's 503 when it asks
    for a retried fetch (and the receiver made the failed one)."""
    if pending.after_fault:
        failed = fetches_between(battery.stage.fetches, pending.tx_id, pending.since_s,
                                 float("inf"), 503)
        if failed:
            return failed[0].at_s
    return pending.since_s


def _pending(battery: Battery, pending: Pending) -> Check:
    tx_id, within = pending.tx_id, battery.within_s
    since = _since(battery, pending)
    until = pending.attempts[-1].answered_s + within
    fetched = fetches_between(battery.stage.fetches, tx_id, since, until)
    notes = [*pending.notes, *(f"GET {tx_id} -> {f.status} at {battery.at(f.at_s)}"
                               for f in fetches_between(battery.stage.fetches, tx_id,
                                                        pending.attempts[0].sent_s, until,
                                                        None))]
    exchanges: list[Exchange] = [a.exchange for a in pending.attempts]
    observer = battery.observer
    what = "after the kit's 503" if pending.after_fault and since != pending.since_s \
        else f"after the delivery of {pending.attempts[-1].event_id}"
    problems = [pending.failure] if pending.failure else []
    problems += [] if fetched or pending.failure else [
        f"data.transactionId {tx_id}: no GET of it answered 200 {what} within {within:g} s "
        "of the answer: the event was not processed"]
    if observer is not None:
        problems += _view_problems(battery, observer, tx_id, exchanges,
                                   f" {within:g} s after the last answer;")
    return check(pending.check_id, pass_if(not problems), pending.started,
                 "; ".join(problems), notes, exchanges)


def _event_line(battery: Battery, event: NewEvent, first_get: float | None) -> str:
    since, answered = event.window
    got = "no GET answered 200" if first_get is None else \
        f"first GET 200 at {battery.at(first_get)}"
    return (f"{event.event.id} ({event.event.type.value}, {event.tx_id}): sent "
            f"{battery.at(since)}, answered {event.attempts[-1].answer()} at "
            f"{battery.at(answered)}, {got}")


def _fetch_after_delivery(battery: Battery) -> tuple[Check, list[str]]:
    started = time.perf_counter()
    within = battery.within_s
    events = [e for e in battery.new_events.values() if e.acknowledged]
    lines = [f"not counted, it was refused: {_event_line(battery, e, None)}"
             for e in battery.new_events.values() if not e.acknowledged]
    missing, late = [], []
    for event in events:
        since, answered = event.window
        got = fetches_between(battery.stage.fetches, event.tx_id, since, answered + within)
        lines.append(_event_line(battery, event, got[0].at_s if got else None))
        acked = next((a.answered_s for a in event.attempts if a.ok), None)
        if not got:
            missing.append(event)
        elif acked is not None and got[0].at_s > acked:
            late.append(event)
    refused = sorted({f.status for e in missing for f in fetches_between(
        battery.stage.fetches, e.tx_id, e.window[0], e.window[1] + within, None)
        if f.status in _AUTH_REFUSALS})
    hint = ""
    if refused:  # 401, 403, 404: the key
        hint = (f"; it did fetch, but the shim answered {', '.join(map(str, refused))}: check "
                "the API key it uses")
    elif len(missing) == len(events):
        hint = "; configure the receiver with the shim's base URL and API key (--show-shim)"
    reason = "" if not missing else (
        f"data.transactionId: {len(missing)} of {len(events)} new events answered 2xx had "
        "no GET of "
        f"their transaction answered 200 between their sending and {within:g} s after "
        f"their answer ({', '.join(folded(e.event.type.value for e in missing))}){hint}")
    if not events:
        return check("fetch-after-delivery", Verdict.SKIP, started,
                     "no new event was answered 2xx, so no fetch was owed: nothing to judge "
                     "(see valid-delivery)", lines), []
    advice = [] if not late else [
        f"advice: {len(late)} of {len(events)} new events were answered 2xx before the "
        "receiver fetched their transaction. Guarantee 3 allows it (the fetch comes before "
        "the state changes, not before the answer), but a 2xx is the receiver's last chance "
        "of a redelivery: fetch before you answer, or keep the work until it is done"]
    return check("fetch-after-delivery", pass_if(not missing), started, reason,
                 [*advice, *lines]), advice


def _change_line(battery: Battery, change: Change) -> str:
    rests = "no fetch since the kit's first delivery about it that an earlier change had " \
        "not used" if change.fetch is None else f"GET 200 at {battery.at(change.fetch.at_s)}"
    return (f"data.transactionId {change.tx_id}: {_view_text(change.before)} -> "
            f"{_view_text(change.after)}, seen at {battery.at(change.read.answered_s)}; "
            f"{rests}")


def _state_after_fetch(battery: Battery) -> Check:
    started = time.perf_counter()
    observer = battery.observer
    if observer is None:
        return check("state-after-fetch", Verdict.SKIP, started, _NO_PROBE.format(
            what="whether its state changed only after a fetch"))
    if observer.broken:
        bad = observer.unusable[0]
        return check("state-after-fetch", Verdict.FAIL, started, (
            f"the probe answered {bad.exchange.summary()}: not a JSON view with "
            "lifecycleStatus, parked and terminal, nor a 404 (the probe contract, "
            "docs/conformance.md); the receiver's state could not be followed"),
            exchanges=[r.exchange for r in observer.unusable[:3]])
    if not observer.changes:
        return check("state-after-fetch", Verdict.SKIP, started,
                     "the receiver's view of no staged transaction changed during the battery: "
                     "there was no change to time", [f"read the probe {observer.reads} times"])
    early = [c for c in observer.changes if c.fetch is None]
    reason = "" if not early else (
        f"data.transactionId: {len(early)} of {len(observer.changes)} changes of the "
        "receiver's view came without a GET of the transaction before them (its state came "
        f"from the payload, not the resource); the first: {_change_line(battery, early[0])}"
        + (f" (and {len(early) - 1} more below)" if len(early) > 1 else ""))
    return check("state-after-fetch", pass_if(not early), started, reason,
                 [f"read the probe {observer.reads} times",
                  *(_change_line(battery, c) for c in observer.changes)],
                 [c.read.exchange for c in early])


def _views(battery: Battery) -> Check:
    started = time.perf_counter()
    observer = battery.observer
    if observer is None:
        return check("view-matches-service", Verdict.SKIP, started, _NO_PROBE.format(
            what="whether its view ends equal to the service's"))
    wrong: list[str] = []
    exchanges: list[Exchange] = []
    for tx_id in battery.expected:
        wrong += _view_problems(battery, observer, tx_id, exchanges, ",")
    return check("view-matches-service", pass_if(not wrong), started, "; ".join(wrong),
                 [f"read {battery.within_s:g} s after the last answer at the latest"],
                 exchanges)


def _view_problems(battery: Battery, observer: Observer, tx_id: str, exchanges: list[Exchange],
                   when: str) -> list[str]:
    """The receiver's last view of ``tx_id`` against the service's (its probe read joins
    ``exchanges``): one problem naming both, or none."""
    read = observer.last_reads.get(tx_id)
    want = battery.expected[tx_id]
    if read is not None:
        exchanges.append(read.exchange)
    if read is not None and read.view == want:
        return []
    return [f"data.transactionId {tx_id}: its view is "
            f"{_view_text(None if read is None else read.view)}{when} the service's is "
            f"{_view_text(want)}"]


def judge_all(battery: Battery) -> tuple[list[Check], list[str]]:
    checks = [_pending(battery, p) for p in battery.pending]
    fetch_check, advice = _fetch_after_delivery(battery)
    checks += [fetch_check, _state_after_fetch(battery), _views(battery)]
    return checks, advice
