"""The receiver conformance battery: real deliveries to a member's webhook receiver, judged
by what it answers and by what it does.

Public names: ``CHECKS``, ``DELIVERY_TIMEOUT_S``, ``KitOptions``, ``TargetUnreachable``,
``probe_target``, ``run_battery``.

``run_battery(stage, options, client)`` stages three redeems in the served world
(``Stage``): A settles, B parks (its issuer answers FAILED), C settles. It then POSTs signed
events about them to ``options.url`` over HTTP (httpx) and returns one ``Report`` whose
checks are, in order (``CHECKS``; spec, Events):

1. ``valid-delivery``: A's ``transaction.received``, validly signed, is answered 2xx within
   ``DELIVERY_TIMEOUT_S`` (the service's delivery timeout). No answer at all (refused
   connection, unknown host, TLS failure) raises ``TargetUnreachable``: the door exits 2.
2. ``signature-wrong`` … ``timestamp-future``: each forgery of ``forge`` is refused (an
   answer that is not 2xx). A fetch of the transaction while refusing is noted, not failed.
3. ``duplicate-acknowledged``: A's received event again, same id and body, signed anew (a
   retry), answered 2xx (guarantee 1).
4. ``fetch-before-answer``: for every new valid event the receiver fetched
   ``GET /api/v1/transactions/{id}`` from the shim (answered 200) before it answered the
   delivery (guarantee 3). A's ``in_flight`` is never delivered (a loss) and its ``settled``
   is; C's pair and B's changes below count too.
5. ``reentry-not-duplicate``: B's ``in_flight``, ``parked``, the operator's fix, B's second
   ``in_flight`` (same type, same transaction, a new id): answered 2xx and handled as new:
   fetched (or, with a probe, the receiver's view is B's true state) (guarantee 1).
6. ``reordered-pair``: C's ``settled`` then its older ``in_flight``: both 2xx, and the
   receiver drove its state from the resource: it fetched C for the late event (or, with a
   probe, its view of C is ``settled``) (guarantee 2).
7. ``view-matches-service``: with ``--probe-url``, the receiver's view of A, B and C equals
   the service's as of the kit's last delivery about each (after a duplicate, a loss, a
   reordering and a re-entry); skipped without a probe.

The probe contract (docs/conformance.md): ``GET`` the probe URL with ``{id}`` replaced by the
transaction id (``/{id}`` is appended when the URL has no ``{id}``) answers 200 with a JSON
object holding ``lifecycleStatus``, ``parked`` and ``terminal`` (at the top level or under
``data``), or 404 when the receiver has no view of that transaction.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
from attrs import define, field, frozen

from clearing_sim.conformance.forge import FORGED_KINDS, Delivery, forged, valid
from clearing_sim.conformance.receiver_stage import Fetch, Stage
from clearing_sim.conformance.report import Check, Evidence, Exchange, Report, Verdict
from clearing_sim.domain.delivery import DELIVERY_TIMEOUT_MS, WebhookEvent
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.peer_answers import Answer, read_bounded_async
from clearing_sim.webhooks import TransactionView

__all__ = ["CHECKS", "DELIVERY_TIMEOUT_S", "KitOptions", "TargetUnreachable", "http_url_problem",
           "probe_target", "run_battery"]

DELIVERY_TIMEOUT_S = DELIVERY_TIMEOUT_MS / 1000
ANSWER_BYTES_MAX = 65_536  # of a receiver's answer, read raw; the rest is not read
#: what a request can raise for what a receiver did; anything else is the kit's bug
_PEER_ERRORS = (httpx.HTTPError, httpx.InvalidURL, TimeoutError, OSError, ValueError)
_G1 = "Events, guarantee 1: at least once; deduplicate on Service-Webhook-Id, not on type " \
      "plus transactionId (a transaction can re-enter in_flight)"
_G2 = "Events, guarantee 2: arrival order is not ordering; drive state from the resource"
_G3 = "Events, guarantee 3: fetch GET /api/v1/transactions/{id} after each delivery before " \
      "changing state"
_SIG = "Events, Signature: HMAC-SHA256 over <t>.<raw body>, compared in constant time"
_WINDOW = "Events, Signature: reject when |now - t| exceeds 300 seconds (replay window)"
_TITLES: dict[str, tuple[str, str]] = {
    "valid-delivery": ("a validly signed delivery is answered 2xx within 10 s",
                       "Events, Delivery; guarantee 4: a non-2xx answer is a failure"),
    "signature-wrong": ("a wrong v1 is refused", _SIG),
    "secret-wrong": ("a signature made with another secret is refused", _SIG),
    "body-tampered": ("a body changed after signing is refused", _SIG),
    "signature-missing": ("a delivery without Service-Signature is refused", _SIG),
    "signature-malformed": ("malformed Service-Signature values are refused", _SIG),
    "timestamp-stale": ("a t more than 300 s old is refused", _WINDOW),
    "timestamp-future": ("a t more than 300 s ahead is refused", _WINDOW),
    "duplicate-acknowledged": ("a duplicate of a delivered event is answered 2xx", _G1),
    "fetch-before-answer": ("each new event is followed by a GET of its transaction "
                            "before the answer", _G3),
    "reentry-not-duplicate": ("a transaction re-entering in_flight after an operator fix is "
                              "not taken for a duplicate", _G1),
    "reordered-pair": ("a reordered pair (settled, then the older in_flight) ends settled",
                       _G2),
    "view-matches-service": ("the receiver's view equals the service's after duplicates, a "
                             "loss and reordering (probe)", f"{_G2}; {_G3}"),
}
CHECKS = tuple(_TITLES)


class TargetUnreachable(Exception):
    """The receiver gave no HTTP answer to the first valid delivery."""


@frozen
class KitOptions:
    url: str
    secret: str
    probe_url: str | None = None
    timeout_s: float = DELIVERY_TIMEOUT_S
    wall_s: Callable[[], float] = time.time  # what a signature's t is taken from


@frozen
class Attempt:
    event_id: str
    exchange: Exchange
    status: int | None
    fetched: tuple[Fetch, ...]
    elapsed_s: float

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def line(self) -> str:
        fetched = ", ".join(f"GET {f.transaction_id} -> {f.status}" for f in self.fetched)
        return f"{self.event_id}: fetched before answering: {fetched or 'nothing'}"


def http_url_problem(value: str) -> str | None:
    """Why ``value`` is not an http:// or https:// URL the kit can send to, or None: one
    ``urlsplit`` takes (an unclosed IPv6 bracket it refuses), with a host, a port from 1 to
    65535 when one is given (99999 reached httpx and failed inside it), and no whitespace or
    control characters."""
    try:
        parts = urlsplit(value)
        host, port = parts.hostname, parts.port
    except ValueError:
        return f"{value[:200]!r} is not an http:// or https:// URL"
    if host is None or parts.scheme not in ("http", "https") \
            or any(c.isspace() or not c.isprintable() for c in value):
        return f"{value[:200]!r} is not an http:// or https:// URL"
    if port == 0:
        return f"{value[:200]!r}: port 0 is not a port to send to"
    return None


def probe_target(probe_url: str, tx_id: str) -> str:
    if "{id}" in probe_url:
        return probe_url.replace("{id}", tx_id)
    return probe_url.rstrip("/") + "/" + tx_id


def _check(check_id: str, verdict: Verdict, attempts: list[Attempt], started: float,
           reason: str = "", notes: list[str] | None = None,
           extra: tuple[Exchange, ...] = ()) -> Check:
    title, rule = _TITLES[check_id]
    lines = [a.line() for a in attempts]
    return Check(check_id, title, rule, verdict,
                 Evidence((*(a.exchange for a in attempts), *extra), (*(notes or ()), *lines)),
                 reason, (time.perf_counter() - started) * 1000)


def _pass_if(ok: bool) -> Verdict:
    return Verdict.PASS if ok else Verdict.FAIL


@define
class _Battery:
    stage: Stage
    options: KitOptions
    client: httpx.AsyncClient
    checks: list[Check] = field(factory=list)
    new_events: list[tuple[str, Attempt]] = field(factory=list)  # (tx id, attempt)
    expected: dict[str, TransactionView] = field(factory=dict)

    async def post(self, delivery: Delivery, tx_id: str) -> Attempt:
        before = self.stage.seq
        headers = list(delivery.headers)
        self.expected[tx_id] = self.stage.view(tx_id)
        started = time.perf_counter()
        try:
            answer = await self._exchange("POST", self.options.url, delivery.body, headers)
        except _PEER_ERRORS as error:
            elapsed = time.perf_counter() - started
            exchange = Exchange("POST", self.options.url, headers, delivery.body,
                                elapsed_ms=elapsed * 1000, error=self._reason(error))
            return Attempt(delivery.event_id, exchange, None,
                           tuple(self.stage.fetched(tx_id, before)), elapsed)
        elapsed = time.perf_counter() - started
        exchange = Exchange("POST", self.options.url, headers, delivery.body,
                            answer.status, answer.headers, answer.body,
                            elapsed_ms=elapsed * 1000, error=answer.problem)
        return Attempt(delivery.event_id, exchange, answer.status,
                       tuple(self.stage.fetched(tx_id, before)), elapsed)

    async def _exchange(self, method: str, url: str, body: bytes,
                        headers: list[tuple[str, str]]) -> Answer:
        """One request, its answer read raw (never inflated), at most ``ANSWER_BYTES_MAX``
        bytes, the whole exchange within the timeout: a receiver that drips its answer, or
        answers a gzip bomb or an endless body, costs the kit 10 s and 64 KiB."""
        async def exchange() -> Answer:
            request = self.client.build_request(
                method, url, content=body or None,
                headers=[*headers, ("Accept-Encoding", "identity")])
            response = await self.client.send(request, stream=True)
            try:
                return await read_bounded_async(response, ANSWER_BYTES_MAX)
            finally:
                await response.aclose()

        return await asyncio.wait_for(exchange(), self.options.timeout_s)

    def _reason(self, error: BaseException) -> str:
        if isinstance(error, TimeoutError | httpx.TimeoutException):
            return f"no answer within {self.options.timeout_s:g} s"
        return f"{type(error).__name__}: {str(error)[:300]}"

    def now_s(self) -> int:
        return int(self.options.wall_s())

    async def deliver_new(self, event: WebhookEvent) -> Attempt:
        attempt = await self.post(valid(event, self.options.secret, self.now_s()),
                                  event.transaction_id)
        self.new_events.append((event.transaction_id, attempt))
        return attempt

    # the checks ---------------------------------------------------------------------------
    async def valid_delivery(self, event: WebhookEvent) -> None:
        started = time.perf_counter()
        attempt = await self.deliver_new(event)
        if attempt.status is None and "no answer within" not in str(attempt.exchange.error):
            raise TargetUnreachable(f"{self.options.url}: {attempt.exchange.error}")
        ok = attempt.ok and attempt.elapsed_s <= self.options.timeout_s
        self.checks.append(_check("valid-delivery", _pass_if(ok), [attempt], started,
                                  "" if ok else f"answered {_answer(attempt)}, not 2xx"))

    async def refusals(self, event: WebhookEvent) -> None:
        for kind in FORGED_KINDS:
            started = time.perf_counter()
            deliveries = forged(kind, event, self.options.secret, self.now_s())
            attempts = [await self.post(d, event.transaction_id) for d in deliveries]
            accepted = [(d, a) for d, a in zip(deliveries, attempts, strict=True)
                        if a.status is None or a.ok]
            notes = ["fetched the transaction for a delivery it should refuse unread"
                     for a in attempts if a.fetched and not a.ok]
            reason = "; ".join(f"Service-Signature {d.header('Service-Signature')!s} answered "
                               f"{_answer(a)}" for d, a in accepted)
            self.checks.append(_check(kind, _pass_if(not accepted), attempts, started,
                                      reason and f"not refused: {reason}", notes))

    async def duplicate(self, event: WebhookEvent) -> None:
        started = time.perf_counter()
        attempt = await self.post(valid(event, self.options.secret, self.now_s()),
                                  event.transaction_id)
        notes = ["fetched again for a duplicate (harmless)"] if attempt.fetched else []
        self.checks.append(_check("duplicate-acknowledged", _pass_if(attempt.ok), [attempt],
                                  started, "" if attempt.ok else
                                  f"the duplicate was answered {_answer(attempt)}", notes))

    def fetch_before_answer(self, started: float) -> None:
        missing = [a for _, a in self.new_events if not any(f.status == 200 for f in a.fetched)]
        attempts = [a for _, a in self.new_events]
        refused = sorted({f.status for a in missing for f in a.fetched})
        hint = (f"; it did fetch, but the shim answered {', '.join(map(str, refused))}: check "
                "the API key it uses" if refused else "; configure the receiver with the "
                "shim's base URL and API key (--show-shim)")
        reason = "" if not missing else (
            f"{len(missing)} of {len(attempts)} new events were answered without a GET of "
            f"their transaction (200) first{hint}")
        self.checks.append(_check("fetch-before-answer", _pass_if(not missing), attempts,
                                  started, reason))

    async def probe(self, tx_id: str) -> tuple[TransactionView | None, Exchange]:
        assert self.options.probe_url is not None
        url = probe_target(self.options.probe_url, tx_id)
        started = time.perf_counter()
        try:
            answer = await self._exchange("GET", url, b"", [])
        except _PEER_ERRORS as error:
            return None, Exchange("GET", url, error=self._reason(error))
        exchange = Exchange("GET", url, (), b"", answer.status, answer.headers, answer.body,
                            elapsed_ms=(time.perf_counter() - started) * 1000,
                            error=answer.problem)
        return _view_of(answer), exchange

    async def judged(self, tx_id: str, last: Attempt) -> tuple[bool, str, tuple[Exchange, ...]]:
        """Whether the receiver ended with the transaction's true state: by its probe when
        there is one, else by whether it fetched the resource for the last event."""
        want = self.expected[tx_id]
        if self.options.probe_url is None:
            fetched = any(f.status == 200 for f in last.fetched)
            return fetched, "" if fetched else (
                "the last event was answered without a GET of the transaction: its state "
                "came from the payload or from nowhere (give --probe-url to judge its view)"), ()
        view, exchange = await self.probe(tx_id)
        if view == want:
            return True, "", (exchange,)
        return False, f"its view is {_view_text(view)}; the service's is {_view_text(want)}", \
            (exchange,)


def _answer(attempt: Attempt) -> str:
    return str(attempt.status) if attempt.status is not None else str(attempt.exchange.error)


def _view_of(answer: Answer) -> TransactionView | None:
    if answer.status != 200 or answer.problem is not None:
        return None
    try:
        data: Any = parse_untrusted(answer.body)
        data = data.get("data", data) if isinstance(data, dict) else data
        return TransactionView.of(data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _view_text(view: TransactionView | None) -> str:
    if view is None:
        return "missing (no 200 JSON view)"
    return json.dumps({"lifecycleStatus": view.lifecycle_status, "parked": view.parked,
                       "terminal": view.terminal})


async def _reentry(battery: _Battery, tx_id: str) -> None:
    stage = battery.stage
    started = time.perf_counter()
    attempts = [await battery.deliver_new(stage.event(tx_id, EventType.IN_FLIGHT)),
                await battery.deliver_new(stage.event(tx_id, EventType.PARKED))]
    await stage.resolve(tx_id)
    again = stage.event(tx_id, EventType.IN_FLIGHT, nth=1)
    attempts.append(await battery.deliver_new(again))
    notes = [f"the operator fixed {tx_id}: it re-entered in-flight as a new event {again.id}"]
    refused = [a for a in attempts if not a.ok]
    ok, reason, extra = await battery.judged(tx_id, attempts[-1])
    if refused:
        ok, reason = False, f"answered {', '.join(_answer(a) for a in refused)}, not 2xx"
    battery.checks.append(_check("reentry-not-duplicate", _pass_if(ok), attempts, started,
                                 reason, notes, extra))


async def _reordered(battery: _Battery, tx_id: str) -> None:
    stage = battery.stage
    started = time.perf_counter()
    attempts = [await battery.deliver_new(stage.event(tx_id, EventType.SETTLED)),
                await battery.deliver_new(stage.event(tx_id, EventType.IN_FLIGHT))]
    refused = [a for a in attempts if not a.ok]
    ok, reason, extra = await battery.judged(tx_id, attempts[-1])
    if refused:
        ok, reason = False, f"answered {', '.join(_answer(a) for a in refused)}, not 2xx"
    battery.checks.append(_check("reordered-pair", _pass_if(ok), attempts, started, reason,
                                 ["settled was delivered first, then the older in_flight"],
                                 extra))


async def _views(battery: _Battery, tx_ids: list[str]) -> None:
    started = time.perf_counter()
    if battery.options.probe_url is None:
        battery.checks.append(_check("view-matches-service", Verdict.SKIP, [], started,
                                     "no --probe-url: the receiver's view was not read"))
        return
    exchanges, wrong = [], []
    for tx_id in tx_ids:
        view, exchange = await battery.probe(tx_id)
        exchanges.append(exchange)
        if view != battery.expected[tx_id]:
            wrong.append(f"{tx_id}: {_view_text(view)}, the service's is "
                         f"{_view_text(battery.expected[tx_id])}")
    battery.checks.append(_check("view-matches-service", _pass_if(not wrong), [], started,
                                 "; ".join(wrong), extra=tuple(exchanges)))


async def run_battery(stage: Stage, options: KitOptions, client: httpx.AsyncClient) -> Report:
    """Stage A, B, C, run every check in ``CHECKS`` order, and report."""
    a = await stage.initiate("CONFORMANCE-A", Outcome.COMPLETE)
    b = await stage.initiate("CONFORMANCE-B", Outcome.FAILED)
    c = await stage.initiate("CONFORMANCE-C", Outcome.COMPLETE)
    await stage.run_until(lambda: stage.transaction(a).terminal and stage.transaction(
        b).terminal and stage.transaction(c).terminal)
    battery = _Battery(stage, options, client)
    await battery.valid_delivery(stage.event(a, EventType.RECEIVED))
    await battery.refusals(stage.event(a, EventType.IN_FLIGHT))
    await battery.duplicate(stage.event(a, EventType.RECEIVED))
    await battery.deliver_new(stage.event(a, EventType.SETTLED))  # A's in_flight is lost
    started = time.perf_counter()
    checks_before = len(battery.checks)
    await _reentry(battery, b)
    await _reordered(battery, c)
    battery.fetch_before_answer(started)
    battery.checks.insert(checks_before, battery.checks.pop())  # in CHECKS order
    await _views(battery, [a, b, c])
    notes = (f"transactions: A {a} (settled; its in_flight lost), B {b} (parked, fixed, "
             f"in-flight again), C {c} (settled; delivered out of order)",
             f"receiver's API: {stage.member.name} ({stage.member.id})")
    return Report("receiver", options.url, battery.checks, notes)
