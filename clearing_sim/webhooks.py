"""Webhooks for integrators: sign and verify the header, and two receivers to compare.

Public names: ``REPLAY_WINDOW_S``, ``NaiveReceiver``, ``ReferenceReceiver``,
``TransactionSource``, ``TransactionView``, ``header``, ``sign``, ``signature_header``,
``transaction_id``, ``verify``.

``sign`` / ``signature_header`` / ``verify`` implement the spec's ``Service-Signature``
scheme (``t=<unix seconds>,v1=<hex>``, HMAC-SHA256 over ``<t>.<raw body>``) with the clock
passed in, so a test or a simulation decides what "now" is.

``ReferenceReceiver`` does what the spec tells integrators to do (Events, guarantees 1–3):
verify the signature in constant time within the 300-second window of its injected clock,
deduplicate on ``Service-Webhook-Id``, and fetch ``GET /api/v1/transactions/{id}`` with its
participant's API key before changing its own view, which it drives from the fetched
``lifecycleStatus``, ``parked`` and ``terminal``. ``NaiveReceiver`` deduplicates on type +
transactionId and trusts the payload: under reordering, and when a transaction re-enters
``in-flight`` after an operator fix, its view ends wrong. Both answer like an HTTP endpoint
(``handle(headers, body) -> status``) and can be attached to a simulated URL
(``attach(world, url)``). This module sits above ``service``: the reference receiver calls
the API, in-process (a ``ServiceAPI``) or any ``TransactionSource`` (``clearing-sim receiver
serve`` gives it one that calls a shim over HTTP). ``replay_window_s`` is the window a
receiver checks (``None``: none, as a naive receiver that never looks at ``t``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol
from urllib.parse import quote

from attrs import frozen

from clearing_sim.domain import signing
from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.domain.signing import REPLAY_WINDOW_S
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request, Response
from clearing_sim.sim.receivers import Arrival
from clearing_sim.sim.world import World

__all__ = ["REPLAY_WINDOW_S", "NaiveReceiver", "ReferenceReceiver", "TransactionSource",
           "TransactionView", "header", "sign", "signature_header", "transaction_id", "verify"]

Headers = Mapping[str, str] | tuple[tuple[str, str], ...]
Clock = Callable[[], int]  # unix seconds
_NO_WINDOW_S = 10**15  # a t this far away is no t at all


class TransactionSource(Protocol):
    """Where the reference receiver fetches a transaction: the API's one door."""

    def handle(self, request: Request) -> Response: ...


def sign(secret: str, body: bytes, t: int) -> str:
    """``v1``: lowercase hex HMAC-SHA256 with ``secret`` over ``<t>.<body>``."""
    return signing.sign(secret, t, body)


def signature_header(secret: str, body: bytes, t: int) -> str:
    """The ``Service-Signature`` value: ``t=<t>,v1=<hex>``."""
    return signing.signature_header(secret, t, body)


def verify(secret: str, header: str | None, body: bytes, now_s: int,
           tolerance_s: int = REPLAY_WINDOW_S) -> bool:
    """True when ``header`` signs ``body`` with ``secret`` and ``|now_s - t| <= tolerance_s``.

    The comparison is constant-time (``hmac.compare_digest``); a malformed header is False."""
    t = _timestamp(header)
    if t is None or abs(now_s - t) > tolerance_s:
        return False
    return signing.verify(secret, header, body, t)  # format and MAC, at the header's own time


def _timestamp(header: str | None) -> int | None:
    """``t`` as ``signing.verify`` reads it (the first ``t=``), or None."""
    for item in (header or "").split(","):
        key, sep, value = item.strip().partition("=")
        if sep and key == "t":
            return int(value) if value.isascii() and value.isdigit() else None
    return None


def transaction_id(body: bytes) -> str | None:
    """``data.transactionId`` of an event body, or None when it has none a URL can carry:
    a string of Unicode scalar values (a lone surrogate such as ``"\\ud800"`` cannot be
    encoded, so no request could name it; issue 31 §7 found it answered 500)."""
    try:
        value = parse_untrusted(body)["data"]["transactionId"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(value, str) or not value:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def header(headers: Headers, name: str) -> str | None:
    """The value of the header ``name`` (any case), or None."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    wanted = name.lower()
    return next((value for key, value in pairs if key.lower() == wanted), None)


@frozen
class TransactionView:
    """What a receiver believes about one transaction."""

    lifecycle_status: str
    parked: bool
    terminal: bool

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> TransactionView:
        """From a transaction resource or an event's ``data``."""
        return cls(str(data["lifecycleStatus"]), bool(data["parked"]), bool(data["terminal"]))


class _Receiver:
    def __init__(self, signing_secret: str, clock: Clock,
                 replay_window_s: int | None = REPLAY_WINDOW_S) -> None:
        self.signing_secret = signing_secret
        self.clock = clock
        self.replay_window_s = _NO_WINDOW_S if replay_window_s is None else replay_window_s
        self.views: dict[str, TransactionView] = {}
        self.accepted = 0
        self.duplicates = 0
        self.rejected = 0

    def handle(self, headers: Headers, body: bytes) -> int:
        raise NotImplementedError

    def attach(self, world: World, url: str) -> None:
        """Run behind the simulated endpoint at ``url`` (its answer replaces the endpoint's)."""
        def on_arrival(arrival: Arrival) -> int:
            return self.handle(arrival.request.headers, arrival.request.body)
        world.webhooks.receivers.attach(url, on_arrival)

    def _verified(self, headers: Headers, body: bytes) -> bool:
        if verify(self.signing_secret, header(headers, "Service-Signature"), body,
                  self.clock(), self.replay_window_s):
            return True
        self.rejected += 1
        return False


class ReferenceReceiver(_Receiver):
    """An integration that follows the spec's rules; its views match the API's."""

    def __init__(self, api: TransactionSource, api_key: str, signing_secret: str,
                 clock: Clock) -> None:
        super().__init__(signing_secret, clock)
        self.api = api
        self.api_key = api_key
        self.seen: set[str] = set()  # Service-Webhook-Id values processed (membership only)
        self.fetch_failures = 0

    @classmethod
    def on_world(cls, api: ServiceAPI, api_key: str, signing_secret: str) -> ReferenceReceiver:
        """With the world's virtual clock (unix seconds of now)."""
        world = api.world
        return cls(api, api_key, signing_secret,
                   lambda: (world.epoch_ms + world.now_ms) // 1000)

    def handle(self, headers: Headers, body: bytes) -> int:
        """Verify, deduplicate on ``Service-Webhook-Id``, then ``process``."""
        if not self._verified(headers, body):
            return 401
        webhook_id = header(headers, "Service-Webhook-Id")
        if webhook_id is None:
            return 400
        if webhook_id in self.seen:
            self.duplicates += 1
            return 200
        tx_id = transaction_id(body)
        if tx_id is None:
            return 400
        return self.process(webhook_id, tx_id)

    def process(self, webhook_id: str, transaction_id: str) -> int:
        """Fetch the transaction, then change the view and remember the id: an id is
        remembered only once its event is processed, so a retry of one whose fetch failed
        is processed anew (503 asks the service for that retry)."""
        view = self.fetch(transaction_id)
        if view is None:
            return 503  # not processed: let the service retry
        self.views[transaction_id] = view
        self.seen.add(webhook_id)
        self.accepted += 1
        return 200

    def fetch(self, transaction_id: str) -> TransactionView | None:
        """``GET /api/v1/transactions/{id}`` with the API key: the resource's view, or None
        (counted in ``fetch_failures``) when the API did not answer 200."""
        response = self.api.handle(Request.build(  # one path segment, whatever the event said
            "GET", f"/api/v1/transactions/{quote(transaction_id, safe='')}", token=self.api_key))
        if response.status != 200:
            self.fetch_failures += 1
            return None
        return TransactionView.of(response.json()["data"])


class NaiveReceiver(_Receiver):
    """Deduplicates on type + transactionId and trusts the payload: the spec's anti-pattern."""

    def __init__(self, signing_secret: str, clock: Clock,
                 replay_window_s: int | None = REPLAY_WINDOW_S) -> None:
        super().__init__(signing_secret, clock, replay_window_s)
        self.seen_pairs: set[tuple[str, str]] = set()

    @classmethod
    def on_world(cls, world: World, signing_secret: str) -> NaiveReceiver:
        return cls(signing_secret, lambda: (world.epoch_ms + world.now_ms) // 1000)

    def handle(self, headers: Headers, body: bytes) -> int:
        if not self._verified(headers, body):
            return 401
        try:
            event = parse_untrusted(body)
            key = (str(event["type"]), str(event["data"]["transactionId"]))
            view = TransactionView.of(event["data"])
        except (ValueError, KeyError, TypeError):
            return 400
        if key in self.seen_pairs:
            self.duplicates += 1
            return 200
        self.seen_pairs.add(key)
        self.views[key[1]] = view
        self.accepted += 1
        return 200
