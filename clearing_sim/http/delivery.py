"""Real webhook deliveries: the simulated channel's requests POSTed to real receivers (httpx).

Public names: ``Outgoing``, ``RealDeliveries``, ``RealOutcome``, ``USER_AGENT``.

With ``--deliver-webhooks`` the application behind every subscribed URL is the real one.
The simulated channel still decides everything it decides in-process: when each attempt is
due, the signature (``t`` = the attempt's *virtual* send time, unix seconds), the network in
front of the endpoint and the endpoint's own status (``PUT /sim/v1/receivers``). When a
request reaches an endpoint that is up, the real receiver is asked (``Receivers.attach``;
docs/semantics.md): the request joins the world's requests on the wire
(``clearing_sim.http.inflight``), the clock (``clearing_sim.http.clock``) POSTs the exact
headers and raw body with httpx while its advance runs on (``launch``: each POST a task of its
own, at most ``IN_FLIGHT_MAX`` at once), and the arrival waits on a SimPy process that reads
the outcome at the request's learn instant (``domain.delivery.real_outcome_learned_at_ms``:
when its retry would go out, or its last attempt's timeout ends), a virtual instant that
never depends on when the answer came; the clock does not run that instant before the
answer is in (``missing_by``, ``answers``). The receiver's status is the attempt's status;
one that cannot be reached answers as a gateway in front of it would: 502 (connection
refused, no such host, TLS failure, or an address that is not public while private URLs are
not allowed), 504 when it gives no answer within the 10-second delivery timeout of wall
time. Each real POST is one ``http.delivery`` log record at its learn instant (URL, event,
attempt, copy, the instant it arrived, status, error): no wall-clock latency is logged, so a
deterministic receiver leaves a deterministic log.

The spec's public-address rule is checked again here against the real resolver (a name the
simulated DNS calls public may resolve to a private address on this machine), unless
private webhook URLs are allowed; then the request goes to the address that was checked
(the URL's host replaced by it, ``Host`` and the TLS server name kept), so a name that
resolves again differently (DNS rebinding) cannot redirect it. One attempt is bounded by a
total deadline of ``DELIVERY_TIMEOUT_MS`` of wall time (connect, send, answer), not per
read, and at most ``RESPONSE_BYTES_MAX`` of the answer's body are read: only its status
counts (docs/semantics.md). An https receiver's certificate is verified against the system's
roots, and against a CA of the member's own when ``serve --webhook-ca FILE`` gives one (a
receiver under test usually has a private CA's certificate); a certificate neither trusts is a
TLS failure, 502.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable, Generator
from functools import partial
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import simpy
from attrs import define, field

from clearing_sim.domain.delivery import DELIVERY_TIMEOUT_MS, real_outcome_learned_at_ms
from clearing_sim.domain.webhook_url import address_class
from clearing_sim.http.inflight import IN_FLIGHT_MAX, InFlight, Outgoing, RealOutcome
from clearing_sim.sim.receivers import Arrival

if TYPE_CHECKING:
    from clearing_sim.sim.eventlog import Record
    from clearing_sim.sim.world import World

__all__ = ["RESPONSE_BYTES_MAX", "USER_AGENT", "Outgoing", "RealDeliveries", "RealOutcome",
           "pinned"]

USER_AGENT = "clearing-sim-webhooks/1"
RESPONSE_BYTES_MAX = 64 * 1024
BAD_GATEWAY = 502
GATEWAY_TIMEOUT = 504


@define(eq=False)
class _Watched:
    """One world whose webhooks are delivered for real, and its requests on the wire."""

    world: World
    flight: InFlight = field(factory=InFlight)
    attached: set[str] = field(factory=set)  # URLs whose real receiver is attached


class RealDeliveries:
    """``trust``: the TLS context https receivers are verified with (``serve --webhook-ca``:
    the system's roots and a CA of the member's own); None: the system's roots alone."""

    def __init__(self, allow_private: bool,
                 echo: Callable[[Arrival, RealOutcome], None] | None = None,
                 deadline_s: float = DELIVERY_TIMEOUT_MS / 1000,
                 trust: ssl.SSLContext | None = None) -> None:
        self.allow_private = allow_private
        self.deadline_s = deadline_s
        self.trust = trust
        self.echo = echo
        self._watched: _Watched | None = None
        self._before: _Watched | None = None  # the world watched before this one
        self._tls: ssl.SSLContext | None = trust

    def watch(self, world: World) -> None:
        """Deliver this world's webhooks from now on. A reset or rewind brings a new world:
        the old one's requests still on the wire are left to finish, their answers read by
        nobody; a rewind that fails goes back to the world before, requests and all."""
        if self._watched is not None and self._watched.world is world:
            return
        before, self._before = self._before, self._watched
        if before is not None and before.world is world:
            self._watched = before
            return
        watched = self._watched = _Watched(world)
        world.log.listen(partial(self._on_record, watched))

    @property
    def _flight(self) -> InFlight:
        assert self._watched is not None
        return self._watched.flight

    def _on_record(self, watched: _Watched, record: Record) -> None:
        # Fan-out names the subscriptions before their deliveries exist: attach the real
        # receiver behind each URL then, whatever URL the subscription was created with.
        if record.kind != "webhook.event":
            return
        world = watched.world
        wanted = record["subscriptionIds"]
        assert isinstance(wanted, list)
        for subscription_id in wanted:
            subscription = world.subscriptions.get(str(subscription_id))
            if subscription is not None and subscription.url not in watched.attached:
                watched.attached.add(subscription.url)
                world.webhooks.receivers.attach(subscription.url,
                                                partial(self._arrived, watched))

    def _arrived(self, watched: _Watched, arrival: Arrival) -> simpy.Event:
        """A request reached the endpoint: to the outbox; the arrival waits for the process
        that learns its outcome at its learn instant."""
        learn_at_ms = real_outcome_learned_at_ms(arrival.sent_at_ms, arrival.attempt,
                                                 arrival.at_ms)
        item = watched.flight.add(arrival, learn_at_ms)
        return watched.world.env.process(self._learn(watched, item))

    def _learn(self, watched: _Watched, item: Outgoing) -> Generator[simpy.Event, Any, int]:
        world = watched.world
        yield world.env.timeout(item.learn_at_ms - world.now_ms)
        outcome = watched.flight.learn(item)  # the clock saw to it that it is in
        a = item.arrival
        world.log.append("http.delivery", url=a.request.url, eventId=a.event_id,
                         subscriptionId=a.subscription_id, attempt=a.attempt, copy=a.copy,
                         arrivedAtMs=a.at_ms, status=outcome.status, error=outcome.error)
        if self.echo is not None:
            self.echo(a, outcome)
        return outcome.status

    # what the clock asks ----------------------------------------------------------------------
    def missing_by(self, at_ms: float) -> list[Outgoing]:
        """Requests of the watched world to be learned by ``at_ms`` without their outcome."""
        return self._flight.missing_by(at_ms)

    def take_learned(self) -> list[Outgoing]:
        """The requests whose outcome the world read since the last call (to journal)."""
        return self._flight.take_learned()

    def launch(self) -> None:
        """Send every request that arrived since the last call, each in a task of its own
        (at most ``IN_FLIGHT_MAX`` on the wire at once)."""
        flight = self._flight
        loop = asyncio.get_running_loop()
        for item in flight.take_outbox():
            item.task = loop.create_task(self._send(flight, item))

    async def answers(self, items: list[Outgoing]) -> None:
        """Until each of ``items`` has its outcome."""
        self.launch()
        tasks = [item.task for item in items if item.task is not None]
        if tasks:
            await asyncio.wait(tasks)
        for item in items:
            if item.outcome is None:  # its task was cancelled (the loop is closing)
                item.outcome = RealOutcome(BAD_GATEWAY, "the request was cancelled")

    # what replay asks ---------------------------------------------------------------------
    def feed(self, seq: int, outcome: RealOutcome) -> str | None:
        """A journaled outcome for request ``seq``; why it cannot be, or None."""
        return self._flight.feed(seq, outcome)

    def replayed_hold(self) -> None:
        """A hold replayed: the requests that arrived in it are not sent, and the outcomes
        it read are journaled already."""
        self._flight.take_outbox()
        self._flight.take_learned()

    def replayed(self) -> int:
        """A replay is done: nothing it sent went out; the requests without a journaled
        outcome go out with the next advance (the server that sent them is gone); how many."""
        return self._flight.requeue()

    # the network ----------------------------------------------------------------------------
    async def _send(self, flight: InFlight, item: Outgoing) -> None:
        if flight.slots is None:
            flight.slots = asyncio.Semaphore(IN_FLIGHT_MAX)
        request = item.arrival.request
        async with flight.slots:
            try:
                async with httpx.AsyncClient(timeout=httpx.Timeout(DELIVERY_TIMEOUT_MS / 1000),
                                             follow_redirects=False, trust_env=False,
                                             verify=self._context()) as client:
                    outcome = await self._post(client, request.url, request.headers,
                                               request.body)
            except Exception as error:  # closing the client failed: the world still learns
                outcome = RealOutcome(BAD_GATEWAY, f"{type(error).__name__}: {error}"[:300])
            if item.outcome is None:
                item.outcome = outcome

    def _context(self) -> ssl.SSLContext:
        """The TLS context of every POST, made once (the system's roots unless ``trust``)."""
        if self._tls is None:
            self._tls = httpx.create_ssl_context()
        return self._tls

    async def _post(self, client: httpx.AsyncClient, url: str,
                    headers: tuple[tuple[str, str], ...], body: bytes) -> RealOutcome:
        try:
            return await asyncio.wait_for(self._attempt(client, url, headers, body),
                                          self.deadline_s)
        except (TimeoutError, httpx.TimeoutException):
            return RealOutcome(GATEWAY_TIMEOUT, "timeout: no whole answer within "
                                                f"{self.deadline_s:g} s")
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as error:
            return RealOutcome(BAD_GATEWAY, f"{type(error).__name__}: {error}"[:300])

    async def _attempt(self, client: httpx.AsyncClient, url: str,
                       headers: tuple[tuple[str, str], ...], body: bytes) -> RealOutcome:
        sent = [*headers, ("User-Agent", USER_AGENT)]
        extensions: dict[str, str] = {}
        if not self.allow_private:
            checked = await _public_address(url)
            if isinstance(checked, str):
                return RealOutcome(BAD_GATEWAY, checked)
            url, host_header, extensions = pinned(url, checked)
            sent.append(("Host", host_header))
        request = client.build_request("POST", url, content=body, headers=sent,
                                       extensions=extensions)
        response = await client.send(request, stream=True)
        try:
            read = 0
            async for chunk in response.aiter_raw():
                read += len(chunk)
                if read >= RESPONSE_BYTES_MAX:
                    break
        finally:
            await response.aclose()
        return RealOutcome(response.status_code)


def pinned(url: str, address: IPv4Address | IPv6Address
           ) -> tuple[str, str, dict[str, str]]:
    """The URL with its host replaced by ``address``, the ``Host`` header it had, and the
    request extensions that keep the TLS server name (and certificate check) the host's."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    literal = f"[{address}]" if address.version == 6 else str(address)
    netloc = literal if parts.port is None else f"{literal}:{parts.port}"
    rewritten = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    host_header = parts.netloc.rpartition("@")[2]
    return rewritten, host_header, {"sni_hostname": host} if parts.scheme == "https" else {}


async def _public_address(url: str) -> IPv4Address | IPv6Address | str:
    """The public address the URL's host resolves to on this machine's resolver, or why
    there is none (every address it resolves to must be public)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        infos = await asyncio.get_running_loop().getaddrinfo(host, port,
                                                              type=socket.SOCK_STREAM)
    except (OSError, ValueError) as error:
        return f"cannot resolve {host}: {error}"[:300]
    addresses = [ip_address(str(info[4][0]).partition("%")[0]) for info in infos]
    for address in addresses:
        reason = address_class(address)
        if reason is not None:
            return (f"address_not_public: {host} resolves to {address}, {reason} "
                    "(serve with --allow-private-webhook-urls for a receiver on this machine)")
    if not addresses:
        return f"cannot resolve {host}: no address"
    return addresses[0]
