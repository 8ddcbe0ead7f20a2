"""The receiver conformance battery: real deliveries to a member's webhook receiver, judged
by what it answers and by what it does.

Public names: ``CHECKS``, ``DELIVERY_TIMEOUT_S``, ``PROCESS_WITHIN_S``, ``REFERENCES``,
``KitOptions``, ``TargetUnreachable``, ``http_url_problem``, ``probe_target``,
``run_battery``.

``run_battery(stage, options, client)`` stages four redeems in the served world
(``Stage``): A settles, B parks (its issuer answers FAILED), C and D settle. A's
``paymentReference`` is ASCII; B's, C's and D's (``REFERENCES``) hold non-ASCII characters
and ``& < >``, which the service sends as raw UTF-8 (compact JSON, ``ensure_ascii`` off):
bytes that ``json.dumps(json.loads(body))`` does not give back. It then POSTs signed events
about them to ``options.url`` over HTTP (httpx) and returns one ``Report`` whose checks are,
in order (``CHECKS``; spec, Events):

1. ``valid-delivery``: A's ``transaction.received``, validly signed, is answered 2xx within
   ``DELIVERY_TIMEOUT_S``. No answer at all (refused connection, unknown host, TLS failure)
   raises ``TargetUnreachable``: the door exits 2.
2. ``raw-body-signature``: C's ``transaction.received`` (raw UTF-8 in its body), validly
   signed, is answered 2xx: the HMAC is over the raw bytes, not a re-serialisation.
3. ``signature-wrong`` … ``timestamp-future``: each forgery of ``forge`` is refused (an
   answer that is not 2xx). A fetch of the transaction while refusing is noted, not failed.
4. ``duplicate-acknowledged``: A's received again, same id and body, signed anew, 2xx.
5. ``refusal-not-remembered``: A's ``settled`` under its real id, first with a stale ``t``,
   then with a wrong ``v1`` (both refused), then validly signed: 2xx and processed.
6. ``fetch-failure-retried``: the shim answers the receiver's next fetch of D with 503 once
   (``Stage.fail_next_fetch``); D's ``transaction.received`` is delivered, and delivered
   again at once if it was answered non-2xx (the service's immediate retry): D is still
   processed (a receiver that answered 2xx must retry the fetch itself).
7. ``reentry-not-duplicate``: B's ``in_flight``, ``parked``, the operator's fix, B's second
   ``in_flight`` (a new id): all 2xx and the last one processed (guarantee 1).
8. ``reordered-pair``: C's ``settled`` then its older ``in_flight``: both 2xx, and the
   receiver drove its state from the resource (guarantee 2).
9. ``fetch-after-delivery``: every new valid event is followed by a GET of its transaction
   answered 200, sent after the delivery and at most ``process_within_s`` after its answer.
   Answering before fetching passes, with advice (a 2xx is the last chance of a redelivery).
10. ``state-after-fetch``: through the probe, the receiver's view never changed more often
    than it had fetched the transaction since the kit's first delivery about it; skipped
    without ``--probe-url``.
11. ``view-matches-service``: through the probe, the receiver's view of A, B, C and D equals
    the service's as of the kit's last delivery about each; skipped without a probe.

"Processed" (checks 5 to 8): with a probe, the view of the transaction is the service's
within ``process_within_s`` (``PROCESS_WITHIN_S``, 10 s) of the last answer; without one, a
200 fetch of it came after the delivery within that time. The verdicts of 5 to 11 wait for
that time once per run (``Battery.settle``), not per check.
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx

from clearing_sim.conformance.forge import FORGED_KINDS, forged, valid
from clearing_sim.conformance.receiver_battery import (
    DELIVERY_TIMEOUT_S,
    Battery,
    KitOptions,
    Pending,
    TargetUnreachable,
    http_url_problem,
    probe_target,
)
from clearing_sim.conformance.receiver_evidence import (
    PROCESS_WITHIN_S,
    Attempt,
    fetches_between,
    folded,
)
from clearing_sim.conformance.receiver_judge import judge_all
from clearing_sim.conformance.receiver_rules import CHECKS, check, pass_if
from clearing_sim.conformance.receiver_stage import Stage
from clearing_sim.conformance.report import Check, Report, Verdict
from clearing_sim.domain.delivery import WebhookEvent
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.domain.lifecycle import EventType

__all__ = ["CHECKS", "DELIVERY_TIMEOUT_S", "PROCESS_WITHIN_S", "REFERENCES", "KitOptions",
           "TargetUnreachable", "http_url_problem", "probe_target", "run_battery"]

_RAW = "\u00dcberweisung f\u00fcr Zo\u00eb & S\u00f8n <\u2116 7> \u20ac"  # NFC
#: A's reference is ASCII (``valid-delivery`` judges the secret alone); the others' bytes do
#: not survive a JSON round trip with escapes (Python's ensure_ascii, Go's HTML escaping)
REFERENCES = {"A": "CONFORMANCE-A", "B": f"CONFORMANCE-B {_RAW}",
              "C": f"CONFORMANCE-C {_RAW}", "D": f"CONFORMANCE-D {_RAW}"}


def _refused_reason(refused: list[Attempt]) -> str:
    """``Service-Webhook-Id evt_1, evt_2: answered 401 (×2), not 2xx …``: each answer once."""
    by_answer: dict[str, list[str]] = {}
    for attempt in refused:
        by_answer.setdefault(attempt.answer(), []).append(attempt.event_id)
    return "; ".join(
        f"Service-Webhook-Id {', '.join(ids)}: answered {answer}"
        + (f" (×{len(ids)})" if len(ids) > 1 else "") + ", not 2xx (a non-2xx is retried)"
        for answer, ids in by_answer.items())


async def _valid_delivery(battery: Battery, event: WebhookEvent) -> Check:
    started = time.perf_counter()
    attempt = await battery.deliver_new(event)
    if attempt.status is None and "no answer within" not in str(attempt.exchange.error):
        raise TargetUnreachable(f"{battery.options.url}: {attempt.exchange.error}")
    ok = attempt.ok and attempt.elapsed_s <= battery.options.timeout_s
    refused = sorted({f.status for f in fetches_between(
        battery.stage.fetches, attempt.tx_id, attempt.sent_s, attempt.answered_s, None)
        if f.status in (401, 403, 404)})
    hint = "" if not refused else (
        f"; it fetched the transaction and the shim answered {', '.join(map(str, refused))}: "
        "check the API key it uses (--show-shim)")
    return check("valid-delivery", pass_if(ok), started, "" if ok else (
        f"Service-Webhook-Id {attempt.event_id}, a validly signed delivery: answered "
        f"{attempt.answer()}, not 2xx within {battery.options.timeout_s:g} s{hint}"),
        exchanges=[attempt.exchange])


def _round_trip(body: bytes) -> str:
    again = json.dumps(parse_untrusted(body), separators=(",", ":")).encode()
    at = next((i for i, (a, b) in enumerate(zip(body, again, strict=False)) if a != b),
              min(len(body), len(again)))
    return (f"json.dumps(json.loads(body)) gives other bytes from byte {at}: "
            f"{again[at:at + 24]!r} where the service sent {body[at:at + 12]!r}")


async def _raw_body(battery: Battery, event: WebhookEvent, ascii_ok: bool) -> Check:
    started = time.perf_counter()
    attempt = await battery.deliver_new(event)
    note = _round_trip(event.body())
    reason = "" if attempt.ok else (
        f"Service-Signature of {attempt.event_id}: a valid signature over a body whose "
        f"data.paymentReference {event.payment_reference!r} is raw UTF-8 was answered "
        f"{attempt.answer()}: verify the HMAC over the raw bytes received, never over a "
        f"re-serialisation ({note})" + ("" if ascii_ok else
                                        "; the ASCII delivery of valid-delivery was refused "
                                        "too: check the secret first"))
    return check("raw-body-signature", pass_if(attempt.ok), started, reason, [note],
                 [attempt.exchange])


async def _refusals(battery: Battery, event: WebhookEvent) -> list[Check]:
    out = []
    for kind in FORGED_KINDS:
        started = time.perf_counter()
        deliveries = forged(kind, event, battery.options.secret, battery.now_s())
        attempts = [await battery.post(d, event.transaction_id) for d in deliveries]
        accepted = [(d, a) for d, a in zip(deliveries, attempts, strict=True)
                    if a.status is None or a.ok]
        fetched = [a for a in attempts if not a.ok and fetches_between(
            battery.stage.fetches, event.transaction_id, a.sent_s, a.answered_s, None)]
        notes = folded("fetched the transaction for a delivery it should refuse unread"
                       for _ in fetched)
        reason = "; ".join(folded(f"Service-Signature {d.header('Service-Signature')!s} "
                                  f"answered {a.answer()}" for d, a in accepted))
        out.append(check(kind, pass_if(not accepted), started,
                         reason and f"not refused: {reason}", notes,
                         [a.exchange for a in attempts]))
    return out


async def _duplicate(battery: Battery, event: WebhookEvent) -> Check:
    started = time.perf_counter()
    attempt = await battery.post(valid(event, battery.options.secret, battery.now_s()),
                                 event.transaction_id)
    return check("duplicate-acknowledged", pass_if(attempt.ok), started, "" if attempt.ok else
                 f"Service-Webhook-Id {attempt.event_id}, a duplicate: answered "
                 f"{attempt.answer()}, not 2xx (guarantee 1: acknowledge it)",
                 exchanges=[attempt.exchange])


async def _refusal_not_remembered(battery: Battery, event: WebhookEvent) -> None:
    started = time.perf_counter()
    secret, now = battery.options.secret, battery.now_s()
    tries = [("a stale t", forged("timestamp-stale", event, secret, now, real_id=True)[0]),
             ("a wrong v1", forged("signature-wrong", event, secret, now, real_id=True)[0])]
    refused = [(what, await battery.post(d, event.transaction_id)) for what, d in tries]
    attempt = await battery.deliver_new(event)
    failure = "; ".join(
        f"Service-Webhook-Id {a.event_id} with {what}: answered {a.answer()}, not refused"
        + (" (see timestamp-stale)" if not i else "")
        + (" (an earlier refused attempt of this id made it a duplicate: record the id only "
           "once the event is verified and processed)" if i else "")
        for i, (what, a) in enumerate(refused) if a.ok)
    if not attempt.ok:
        failure = "; ".join(filter(None, [failure, _refused_reason([attempt])]))
    battery.pending.append(Pending(
        "refusal-not-remembered", event.transaction_id, attempt.sent_s, started,
        (*(a for _, a in refused), attempt),
        (f"{event.id} was sent with a stale t, then a wrong v1, then validly signed",),
        failure))


async def _fetch_failure(battery: Battery, event: WebhookEvent) -> None:
    started = time.perf_counter()
    battery.stage.fail_next_fetch(event.transaction_id)
    attempts = [await battery.deliver_new(event)]
    notes = [f"the shim answers the receiver's next GET of {event.transaction_id} with 503, "
             "once"]
    if not attempts[0].ok:  # the service retries a non-2xx at once (guarantee 4)
        attempts.append(await battery.deliver_new(event))
        notes.append(f"answered {attempts[0].answer()}: redelivered at once, as the service "
                     "retries")
    failure = "" if attempts[-1].ok else (
        f"Service-Webhook-Id {event.id}: its retry was answered {attempts[-1].answer()}, "
        "not 2xx, although the shim answered the receiver's next fetch 200")
    battery.pending.append(Pending("fetch-failure-retried", event.transaction_id,
                                   attempts[0].sent_s, started, tuple(attempts),
                                   tuple(notes), failure, after_fault=True))


async def _reentry(battery: Battery, tx_id: str) -> None:
    stage = battery.stage
    started = time.perf_counter()
    attempts = [await battery.deliver_new(stage.event(tx_id, EventType.IN_FLIGHT)),
                await battery.deliver_new(stage.event(tx_id, EventType.PARKED))]
    await stage.resolve(tx_id)
    again = stage.event(tx_id, EventType.IN_FLIGHT, nth=1)
    attempts.append(await battery.deliver_new(again))
    battery.pending.append(Pending(
        "reentry-not-duplicate", tx_id, attempts[-1].sent_s, started, tuple(attempts),
        (f"the operator fixed {tx_id}: it re-entered in-flight as a new event {again.id}",),
        _refused_reason([a for a in attempts if not a.ok])))


async def _reordered(battery: Battery, tx_id: str) -> None:
    stage = battery.stage
    started = time.perf_counter()
    attempts = [await battery.deliver_new(stage.event(tx_id, EventType.SETTLED)),
                await battery.deliver_new(stage.event(tx_id, EventType.IN_FLIGHT))]
    battery.pending.append(Pending(
        "reordered-pair", tx_id, attempts[-1].sent_s, started, tuple(attempts),
        ("settled was delivered first, then the older in_flight",),
        _refused_reason([a for a in attempts if not a.ok])))


async def _stage_all(stage: Stage) -> dict[str, str]:
    outcomes = {"A": Outcome.COMPLETE, "B": Outcome.FAILED, "C": Outcome.COMPLETE,
                "D": Outcome.COMPLETE}
    ids = {name: await stage.initiate(REFERENCES[name], outcome)
           for name, outcome in outcomes.items()}
    await stage.run_until(lambda: all(stage.transaction(t).terminal for t in ids.values()))
    return ids


async def run_battery(stage: Stage, options: KitOptions, client: httpx.AsyncClient) -> Report:
    """Stage A, B, C and D, run every check in ``CHECKS`` order, and report."""
    ids = await _stage_all(stage)
    a, b, c, d = ids["A"], ids["B"], ids["C"], ids["D"]
    battery = Battery(stage, options, client)
    if battery.observer is not None:  # each view before the kit's first delivery
        await asyncio.gather(*(battery.observer.read(tx_id) for tx_id in ids.values()))
    checks = [await _valid_delivery(battery, stage.event(a, EventType.RECEIVED))]
    checks.append(await _raw_body(battery, stage.event(c, EventType.RECEIVED),
                                  checks[0].verdict is Verdict.PASS))
    checks += await _refusals(battery, stage.event(a, EventType.IN_FLIGHT))
    checks.append(await _duplicate(battery, stage.event(a, EventType.RECEIVED)))
    await _refusal_not_remembered(battery, stage.event(a, EventType.SETTLED))  # in_flight lost
    await _fetch_failure(battery, stage.event(d, EventType.RECEIVED))
    await _reentry(battery, b)
    await _reordered(battery, c)
    await battery.settle()
    judged, advice = judge_all(battery)
    checks += judged
    notes = [f"transactions: A {a} (settled; its in_flight lost), B {b} (parked, fixed, "
             f"in-flight again), C {c} (settled; delivered out of order), D {d} (settled; "
             "its first fetch failed)",
             f"receiver's API: {stage.member.name} ({stage.member.id})",
             f"time limit: {options.process_within_s:g} s after an answer to fetch and show "
             "the service's view", *advice]
    assert [ch.id for ch in checks] == list(CHECKS)
    return Report("receiver", options.url, checks, notes)
