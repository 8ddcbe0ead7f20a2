"""Simulated webhook receivers and the network in front of them, per URL, on virtual time.

Public names: ``Arrival``, ``Handler``, ``ReceiverBehaviour``, ``Receivers``, ``Transmission``,
``WebhookRequest``.

The engine (a scenario, a test, an analyst) sets how the endpoint behind each URL behaves
(``Receivers.set``): the status it answers (one status until a virtual time, then a 2xx, or
one status for ever), how long it takes (a latency distribution; an answer later than the
delivery timeout is a failed attempt) and the network faults on the way, each with a
probability drawn from the URL's own random streams: a lost request (it never arrives, the
sender sees a timeout), a duplicated request (the receiver gets a second copy a little later)
and jitter (the arrival is delayed by a random extra time, so a later delivery can overtake
it). A URL nobody configured answers 200 after a short latency.

Every arrival is one ``webhook.arrival`` log record and is passed to the listeners
(``listen``), so receivers above the simulation (``clearing_sim.webhooks``) can consume
deliveries. An application attached to a URL (``attach``) runs when a request reaches an
endpoint that is up (it answers 2xx) and may answer a status of its own (a receiver that
rejects a bad signature answers 401); an endpoint that is down answers without it. An
application that answers later (a real HTTP receiver behind the HTTP shim) returns a SimPy
event instead, and the arrival waits for it: its value is the status (the shim's real
deliveries trigger it at a virtual instant of their own, ``http/delivery.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import simpy
from attrs import field, frozen, validators

from clearing_sim.domain.delivery import is_success
from clearing_sim.domain.latency import Latency, LogNormal, Uniform

if TYPE_CHECKING:
    import random

    from clearing_sim.sim.seams import Engine

__all__ = ["Arrival", "Handler", "ReceiverBehaviour", "Receivers", "Transmission",
           "WebhookRequest"]

Headers = tuple[tuple[str, str], ...]
_probability = [validators.ge(0.0), validators.le(1.0)]
_status = [validators.instance_of(int), validators.ge(100), validators.le(599)]


@frozen
class ReceiverBehaviour:
    """How the endpoint behind one URL answers, and the network faults on the way to it.

    ``status`` is answered to requests arriving before ``until_ms`` (virtual ms; ``None``:
    for ever), ``recovered_status`` to those arriving at or after it."""

    status: int = field(default=200, validator=_status)
    until_ms: int | None = field(default=None,
                                 validator=validators.optional(validators.ge(0)))
    recovered_status: int = field(default=200, validator=_status)
    latency: Latency = LogNormal(80, 0.4, 2_000)
    p_lost: float = field(default=0.0, validator=_probability)
    p_duplicate: float = field(default=0.0, validator=_probability)
    p_jitter: float = field(default=0.0, validator=_probability)
    jitter: Latency = Uniform(0, 5_000)
    duplicate_delay: Latency = Uniform(0, 1_000)

    @classmethod
    def failing(cls, status: int = 503, until_ms: int | None = None,
                **others: Any) -> ReceiverBehaviour:
        """Answer ``status`` until ``until_ms`` (for ever when ``None``), then 200."""
        return cls(status=status, until_ms=until_ms, **others)

    def status_at(self, at_ms: int) -> int:
        if self.until_ms is None or at_ms < self.until_ms:
            return self.status
        return self.recovered_status


@frozen
class WebhookRequest:
    """The POST as sent: URL, headers in order, raw body."""

    url: str
    headers: Headers
    body: bytes

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)


@frozen
class Arrival:
    """One request reaching an endpoint: which delivery attempt, which copy, what it answered."""

    request: WebhookRequest
    at_ms: int
    event_id: str
    subscription_id: str
    attempt: int
    copy: int  # 0 the request itself, 1 the network's duplicate
    status: int  # what the endpoint answered (the attached application's answer if any)
    sent_at_ms: int  # when the attempt was sent (the arrival is ``at_ms - sent_at_ms`` later)


#: An application behind a URL: a status now, ``None`` (the endpoint's status stands), or a
#: SimPy event whose value is the status, for an application that answers later.
Handler = Callable[[Arrival], int | simpy.Event | None]


@frozen
class Transmission:
    """What the network did with one request.

    ``response`` is the arrival of the original copy, whose value is the status answered;
    ``None`` when the request was lost. ``delay_ms`` is when it arrives after sending."""

    response: simpy.Process | None
    delay_ms: int | None
    jitter_ms: int
    duplicated: bool


class Receivers:
    """The endpoints behind every URL of one world."""

    def __init__(self, world: Engine) -> None:
        self._world = world
        self._behaviours: dict[str, ReceiverBehaviour] = {}
        self._handlers: dict[str, Handler] = {}
        self._listeners: list[Callable[[Arrival], None]] = []
        self.default = ReceiverBehaviour()
        self._streams: dict[str, tuple[random.Random, random.Random]] = {}

    def set(self, url: str, behaviour: ReceiverBehaviour) -> None:
        """From now on, requests to ``url`` meet ``behaviour`` (logged ``webhook.receiver``)."""
        self._behaviours[url] = behaviour
        self._world.log.append("webhook.receiver", url=url, status=behaviour.status,
                               untilMs=behaviour.until_ms,
                               recoveredStatus=behaviour.recovered_status,
                               latency=repr(behaviour.latency), pLost=str(behaviour.p_lost),
                               pDuplicate=str(behaviour.p_duplicate),
                               pJitter=str(behaviour.p_jitter), jitter=repr(behaviour.jitter))

    def behaviour(self, url: str) -> ReceiverBehaviour:
        return self._behaviours.get(url, self.default)

    def attach(self, url: str, handler: Handler) -> None:
        """The application behind ``url``: called for each arrival while the endpoint is up."""
        self._handlers[url] = handler

    def listen(self, listener: Callable[[Arrival], None]) -> None:
        """Called with every arrival at any URL, after it is answered and logged."""
        self._listeners.append(listener)

    # the network --------------------------------------------------------------------------
    def transmit(self, request: WebhookRequest, event_id: str, subscription_id: str,
                 attempt: int) -> Transmission:
        """Send now; the draws come from the URL's own streams, in a fixed order."""
        world, url = self._world, request.url
        b = self.behaviour(url)
        faults, latency = self._streams_of(url)
        lost = faults.random() < b.p_lost
        jittered = faults.random() < b.p_jitter
        duplicated = faults.random() < b.p_duplicate
        if lost:
            return Transmission(None, None, 0, False)
        jitter_ms = b.jitter.sample(faults) if jittered else 0
        delay_ms = b.latency.sample(latency) + jitter_ms
        response = world.env.process(
            self._arrive(delay_ms, request, event_id, subscription_id, attempt, 0))
        if duplicated:
            world.env.process(self._arrive(delay_ms + b.duplicate_delay.sample(faults), request,
                                           event_id, subscription_id, attempt, 1))
        return Transmission(response, delay_ms, jitter_ms, duplicated)

    def _streams_of(self, url: str) -> tuple[random.Random, random.Random]:
        """The URL's ``webhook-receiver:<url>:faults`` and ``:latency`` streams."""
        found = self._streams.get(url)
        if found is None:
            streams = self._world.streams
            found = self._streams[url] = (streams.get(f"webhook-receiver:{url}:faults"),
                                          streams.get(f"webhook-receiver:{url}:latency"))
        return found

    def _arrive(self, delay_ms: int, request: WebhookRequest, event_id: str,
                subscription_id: str, attempt: int,
                copy: int) -> Generator[simpy.Event, Any, int]:
        world = self._world
        sent_at_ms = world.now_ms
        if delay_ms:
            yield world.env.timeout(delay_ms)
        now = world.now_ms
        status = self.behaviour(request.url).status_at(now)
        arrival: Arrival | None = None  # made for an application or a listener only
        handler = self._handlers.get(request.url)
        if handler is not None and is_success(status):
            arrival = Arrival(request, now, event_id, subscription_id, attempt, copy, status,
                              sent_at_ms)
            answered = handler(arrival)
            if isinstance(answered, simpy.Event):
                answered = yield answered
            if answered is not None:
                status = answered
                arrival = Arrival(request, now, event_id, subscription_id, attempt, copy,
                                  status, sent_at_ms)
        world.log.append("webhook.arrival", url=request.url, eventId=event_id,
                         subscriptionId=subscription_id, attempt=attempt, copy=copy,
                         status=status)
        if self._listeners:
            if arrival is None:
                arrival = Arrival(request, now, event_id, subscription_id, attempt, copy,
                                  status, sent_at_ms)
            for listener in self._listeners:
                listener(arrival)
        return status
