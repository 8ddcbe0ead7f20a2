"""The receiver kit's I/O: POSTs to the receiver, GETs of its probe, and the wait for it to
finish processing, all timed (``receiver_evidence``).

Public names: ``KitOptions``, ``NewEvent``, ``Pending``, ``TargetUnreachable``, ``Battery``,
``http_url_problem``, ``probe_target``.

A ``Battery`` keeps what the checks need to judge: every new valid event and its attempts
(``new_events``), the service's view of each transaction as of the kit's last delivery about
it (``expected``), the judgements a check leaves until the receiver has had its time
(``pending``), and the ``Observer`` of its view when there is a probe. ``settle()`` waits
until every acknowledged new event's transaction was fetched and every view is the
service's, or until
``KitOptions.process_within_s`` after the last answer, whichever comes first: a receiver
that processes at once costs no wait, one that never does costs the limit once per run.

The probe contract (docs/conformance.md): ``GET`` the probe URL with ``{id}`` replaced by the
transaction id (``/{id}`` is appended when the URL has no ``{id}``) answers 200 with a JSON
object holding ``lifecycleStatus``, ``parked`` and ``terminal`` (at the top level or under
``data``), or 404 when the receiver has no view of that transaction.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
from attrs import define, field, frozen

from clearing_sim.conformance.forge import Delivery, valid
from clearing_sim.conformance.receiver_evidence import (
    PROBE_EVERY_S,
    PROCESS_WITHIN_S,
    Attempt,
    Observer,
    ProbeRead,
    fetches_between,
)
from clearing_sim.conformance.receiver_stage import Stage
from clearing_sim.conformance.report import Exchange
from clearing_sim.domain.delivery import DELIVERY_TIMEOUT_MS, WebhookEvent
from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.untrusted.answers import Answer, read_bounded_async
from clearing_sim.webhooks import TransactionView

__all__ = ["Battery", "KitOptions", "NewEvent", "Pending", "TargetUnreachable",
           "http_url_problem", "probe_target"]

DELIVERY_TIMEOUT_S = DELIVERY_TIMEOUT_MS / 1000
ANSWER_BYTES_MAX = 65_536  # of a receiver's answer, read raw; the rest is not read
#: what a request can raise for what a receiver did; anything else is the kit's bug
_PEER_ERRORS = (httpx.HTTPError, httpx.InvalidURL, TimeoutError, OSError, ValueError)


class TargetUnreachable(Exception):
    """The receiver gave no HTTP answer to the first valid delivery."""


@frozen
class KitOptions:
    url: str
    secret: str
    probe_url: str | None = None
    timeout_s: float = DELIVERY_TIMEOUT_S
    wall_s: Callable[[], float] = time.time  # what a signature's t is taken from
    #: how long after its answer the receiver has to fetch and show the right view
    process_within_s: float = PROCESS_WITHIN_S


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


@define
class NewEvent:
    """A new valid event and every attempt of it (a retry after a non-2xx is the same)."""

    event: WebhookEvent
    attempts: list[Attempt] = field(factory=list)

    @property
    def tx_id(self) -> str:
        return self.event.transaction_id

    @property
    def acknowledged(self) -> bool:
        """Answered 2xx at last: the receiver took it, so it owes it a fetch (a refused
        event is the service's to retry, the receiver's to process only then)."""
        return self.attempts[-1].ok

    @property
    def window(self) -> tuple[float, float]:
        """From its first sending to its last answer (the time limit is added by callers)."""
        return self.attempts[0].sent_s, self.attempts[-1].answered_s


@frozen
class Pending:
    """A check whose verdict waits for ``settle``: processed means a 200 fetch of
    ``tx_id`` after ``since_s`` (or after the kit's 503, ``after_fault``) and, with a
    probe, the service's view."""

    check_id: str
    tx_id: str
    since_s: float
    started: float
    attempts: tuple[Attempt, ...]
    notes: tuple[str, ...] = ()
    failure: str = ""  # already failed on its answers
    after_fault: bool = False


@define
class Battery:
    stage: Stage
    options: KitOptions
    client: httpx.AsyncClient
    new_events: dict[str, NewEvent] = field(factory=dict)  # by event id, in sending order
    expected: dict[str, TransactionView] = field(factory=dict)
    pending: list[Pending] = field(factory=list)
    observer: Observer | None = None
    started_s: float = field(factory=time.monotonic)

    def __attrs_post_init__(self) -> None:
        if self.options.probe_url is not None:
            self.observer = Observer(self.probe, self.stage.fetches)

    @property
    def within_s(self) -> float:
        return self.options.process_within_s

    def at(self, instant_s: float) -> str:
        """An instant as the evidence shows it: ms since the battery's deliveries began."""
        return f"+{(instant_s - self.started_s) * 1000:.0f} ms"

    def now_s(self) -> int:
        return int(self.options.wall_s())

    async def post(self, delivery: Delivery, tx_id: str) -> Attempt:
        headers = list(delivery.headers)
        self.expected[tx_id] = self.stage.view(tx_id)
        sent = time.monotonic()
        try:
            answer = await self._exchange("POST", self.options.url, delivery.body, headers)
        except _PEER_ERRORS as error:
            done = time.monotonic()
            exchange = Exchange("POST", self.options.url, headers, delivery.body,
                                elapsed_ms=(done - sent) * 1000, error=self._reason(error))
            return Attempt(delivery.event_id, tx_id, exchange, None, sent, done)
        done = time.monotonic()
        exchange = Exchange("POST", self.options.url, headers, delivery.body, answer.status,
                            answer.headers, answer.body, elapsed_ms=(done - sent) * 1000,
                            error=answer.problem)
        return Attempt(delivery.event_id, tx_id, exchange, answer.status, sent, done)

    async def deliver_new(self, event: WebhookEvent) -> Attempt:
        """A valid delivery of ``event`` (again, when it was sent before: a retry), then a
        read of the receiver's view when there is a working probe."""
        attempt = await self.post(valid(event, self.options.secret, self.now_s()),
                                  event.transaction_id)
        self.new_events.setdefault(event.id, NewEvent(event)).attempts.append(attempt)
        if self.observer is not None:
            self.observer.delivered(attempt)
            if not self.observer.broken:
                await self.observer.read(event.transaction_id)
        return attempt

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

    async def probe(self, tx_id: str) -> ProbeRead:
        assert self.options.probe_url is not None
        url = probe_target(self.options.probe_url, tx_id)
        sent = time.monotonic()
        try:
            answer = await self._exchange("GET", url, b"", [])
        except _PEER_ERRORS as error:
            return ProbeRead(tx_id, None, False, Exchange("GET", url, error=self._reason(
                error)), time.monotonic())
        done = time.monotonic()
        exchange = Exchange("GET", url, (), b"", answer.status, answer.headers, answer.body,
                            elapsed_ms=(done - sent) * 1000, error=answer.problem)
        if answer.status == 404 and answer.problem is None:
            return ProbeRead(tx_id, None, True, exchange, done)
        view = _view_of(answer)
        return ProbeRead(tx_id, view, view is not None, exchange, done)

    # waiting for the receiver -------------------------------------------------------------
    def fetched(self, event: NewEvent) -> bool:
        since, answered = event.window
        return bool(fetches_between(self.stage.fetches, event.tx_id, since,
                                    answered + self.within_s))

    def views_right(self) -> bool:
        observer = self.observer
        return observer is None or all(
            tx_id in observer.last_reads and observer.last_reads[tx_id].view == want
            for tx_id, want in self.expected.items())

    async def settle(self) -> None:
        """Wait until each new event's transaction was fetched and each view is right, or
        until ``within_s`` after the last answer; then read each view once more."""
        last = max((e.window[1] for e in self.new_events.values()), default=time.monotonic())
        deadline = last + self.within_s
        observer = self.observer
        while True:
            if observer is not None and not observer.broken:
                wrong = [tx for tx, want in self.expected.items()
                         if tx not in observer.last_reads
                         or observer.last_reads[tx].view != want]
                await asyncio.gather(*(observer.read(tx) for tx in wrong))
            if (self.views_right() and all(self.fetched(e) for e in self.new_events.values()
                                           if e.acknowledged)) \
                    or time.monotonic() >= deadline:
                break
            await asyncio.sleep(PROBE_EVERY_S)
        if observer is not None and observer.broken:  # one read each, for the verdict
            await asyncio.gather(*(observer.read(tx) for tx in self.expected))


def _view_of(answer: Answer) -> TransactionView | None:
    if answer.status != 200 or answer.problem is not None:
        return None
    try:
        data: Any = parse_untrusted(answer.body)
        data = data.get("data", data) if isinstance(data, dict) else data
        return TransactionView.of(data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
