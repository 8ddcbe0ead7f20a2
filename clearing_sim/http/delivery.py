"""Real webhook deliveries: the simulated channel's requests POSTed to real receivers (httpx).

Public names: ``Outgoing``, ``RealDeliveries``, ``RealOutcome``, ``USER_AGENT``.

With ``--deliver-webhooks`` the application behind every subscribed URL is the real one.
The simulated channel still decides everything it decides in-process: when each attempt is
due, the signature (``t`` = the attempt's *virtual* send time, unix seconds), the network in
front of the endpoint and the endpoint's own status (``PUT /sim/v1/receivers``). When a
request reaches an endpoint that is up, the real receiver is asked (``Receivers.attach``;
docs/semantics.md): the arrival waits on a SimPy event, which the clock
(``clearing_sim.http.clock``) answers after POSTing the exact headers and raw body with httpx.
The receiver's status is the attempt's status; one that cannot be reached answers as a
gateway in front of it would: 502 (connection refused, no such host, TLS failure, or an
address that is not public while private URLs are not allowed), 504 when it gives no answer
within the 10-second delivery timeout of wall time. Each real POST is one ``http.delivery``
log record (URL, event, attempt, copy, status, error): no wall-clock latency is logged, so a
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
from collections.abc import Callable
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import httpx
import simpy
from attrs import frozen

from clearing_sim.domain.delivery import DELIVERY_TIMEOUT_MS
from clearing_sim.domain.webhook_url import address_class
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


@frozen
class Outgoing:
    """One request that reached an endpoint that is up, waiting for the real receiver."""

    arrival: Arrival
    answer: simpy.Event


@frozen
class RealOutcome:
    status: int
    error: str | None = None  # why no real answer was received, or None


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
        self.outbox: list[Outgoing] = []
        self._world: World | None = None
        self._attached: set[str] = set()

    def watch(self, world: World) -> None:
        """Deliver this world's webhooks from now on (a reset brings a new world)."""
        self._world = world
        self._attached = set()
        self.outbox = []
        world.log.listen(self._on_record)

    def _on_record(self, record: Record) -> None:
        # Fan-out names the subscriptions before their deliveries exist: attach the real
        # receiver behind each URL then, whatever URL the subscription was created with.
        if record.kind != "webhook.event" or self._world is None:
            return
        world = self._world
        wanted = record["subscriptionIds"]
        assert isinstance(wanted, list)
        for subscription_id in wanted:
            subscription = world.subscriptions.get(str(subscription_id))
            if subscription is not None and subscription.url not in self._attached:
                self._attached.add(subscription.url)
                world.webhooks.receivers.attach(subscription.url, self._arrived)

    def _arrived(self, arrival: Arrival) -> simpy.Event:
        assert self._world is not None
        answer = self._world.env.event()
        self.outbox.append(Outgoing(arrival, answer))
        return answer

    def take(self) -> list[Outgoing]:
        batch, self.outbox = self.outbox, []
        return batch

    # the network ----------------------------------------------------------------------------
    async def send(self, batch: list[Outgoing]) -> list[RealOutcome]:
        """POST every request of the batch at once; the outcomes in the batch's order."""
        timeout = httpx.Timeout(DELIVERY_TIMEOUT_MS / 1000)
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False,
                                     verify=True if self.trust is None else self.trust) as client:
            return list(await asyncio.gather(*(self._post(client, item.arrival.request.url,
                                                          item.arrival.request.headers,
                                                          item.arrival.request.body)
                                               for item in batch)))

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

    def answer(self, batch: list[Outgoing], outcomes: list[RealOutcome]) -> None:
        """Feed the real outcomes back into the simulation, in the batch's order."""
        assert self._world is not None
        for item, outcome in zip(batch, outcomes, strict=True):
            a = item.arrival
            self._world.log.append("http.delivery", url=a.request.url, eventId=a.event_id,
                                   subscriptionId=a.subscription_id, attempt=a.attempt,
                                   copy=a.copy, status=outcome.status, error=outcome.error)
            item.answer.succeed(outcome.status)
            if self.echo is not None:
                self.echo(a, outcome)


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
