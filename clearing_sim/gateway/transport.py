"""The service's HTTP calls to one issuer gateway: mTLS, bearer or OAuth, bounded, recorded.

Public names: ``Call``, ``GatewayConfig``, ``Transport``, ``TransportProblem``,
``config_from_wire``.

Every call has bounded timeouts and a bounded response size, and is recorded as a ``Call``
(request and response, headers and bodies, elapsed wall time, or the error in plain words).
An answer is read by ``clearing_sim.untrusted.answers.read_bounded``: never inflated, at most
``response_bytes_max`` bytes, whole within ``timeout_s`` of the call's start (a gateway
dripping a byte a second under each read's timeout held an advance for hours). The token
endpoint's answer is read the same way. ``send`` never raises for anything a gateway answers.
OAuth 2.0 client credentials (Authentication 8): the token is fetched on the first call and
again once ``expires_in`` (less 30 s) has passed; a static ``bearer`` is the simpler
alternative (Authlib's httpx client was tried and left: Authlib 1.9 deprecates it).
TLS failures are described by ``clearing_sim.tls.describe_tls_error``.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from attrs import field, frozen

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.tls import TlsProblem, client_context, describe_tls_error
from clearing_sim.untrusted.answers import ASKED, read_bounded

__all__ = ["Call", "GatewayConfig", "Transport", "TransportProblem", "config_from_wire"]

RESPONSE_BYTES_MAX = 65_536
TOKEN_TTL_MAX_S = 86_400  # an access token's expires_in past a day is not believed
ABANDON_GRACE_S = 1.0  # past the call's own deadlines, before a held call is given up
#: what a bearer token may hold to travel in a header: visible ASCII, no spaces (RFC 6750's
#: b64token is a subset)
_TOKEN = re.compile(r"[\x21-\x7e]+")


def _header_token(value: str) -> bool:
    return _TOKEN.fullmatch(value) is not None


class TransportProblem(Exception):
    """The gateway cannot be called at all (bad TLS files, no token): bad set-up."""


#: what a call can raise for what a peer did (an id it named that makes no URL, a broken
#: answer, a closed connection); anything else is a bug and is let through
_PEER_ERRORS = (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError)


@frozen
class GatewayConfig:
    """How the service reaches one issuer's gateway (what onboarding gave it)."""

    api_base_url: str
    refund_url: str | None = None  # default {apiBaseUrl}/treasury/refunds
    ca_file: Path | None = None  # the issuer's CA bundle
    client_cert: Path | None = None  # the service's mTLS client certificate
    client_key: Path | None = None
    bearer: str | None = None
    token_url: str | None = None  # OAuth 2.0 client credentials
    client_id: str | None = None
    client_secret: str | None = None
    timeout_s: float = 5.0
    response_bytes_max: int = RESPONSE_BYTES_MAX
    patience_ms: int = 1_000  # wall time a read waits for an unchanged status to move
    execute_hold_ms: int = 0  # the kit's watch: Mode 2 execute held this long after creation
    provider_states_url: str | None = None
    triggers: dict[Outcome, Decimal] | None = None  # trigger amounts the sandbox honours
    webhook_secret: str = "whsec_conformance"

    @property
    def base(self) -> str:
        return self.api_base_url.rstrip("/")


def config_from_wire(fields: dict[str, Any]) -> GatewayConfig:
    """A ``GatewayConfig`` from the wire names of a world file's ``gateway`` (or the
    operator route's body), already validated by their schema."""
    def path(name: str) -> Path | None:
        value = fields.get(name)
        return None if value is None else Path(str(value))

    def text(name: str) -> str | None:
        value = fields.get(name)
        return None if value is None else str(value)

    return GatewayConfig(
        str(fields["apiBaseUrl"]), text("refundUrl"), path("caFile"), path("clientCert"),
        path("clientKey"), text("bearer"), text("tokenUrl"), text("clientId"),
        text("clientSecret"), float(fields.get("timeoutSeconds", 5)),
        patience_ms=int(fields.get("patienceMs", 1_000)),
        provider_states_url=text("providerStatesUrl"),
        webhook_secret=text("webhookSecret") or "whsec_conformance")


@frozen
class Call:
    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...] = ()
    request_body: str = ""
    status: int | None = None
    response_headers: tuple[tuple[str, str], ...] = ()
    response_body: str = ""
    elapsed_ms: float = 0.0
    error: str | None = None
    tag: str | None = field(default=None, eq=False)  # the transaction it belongs to

    def parsed(self) -> Any:
        """The parsed body (``parse_untrusted``: bounded), or None when it is not one."""
        try:
            return parse_untrusted(self.response_body)
        except ValueError:
            return None


class _Token:
    """OAuth 2.0 client credentials (RFC 6749 §4.4, client_secret_post): one access token,
    reused until ``expires_in`` minus a leeway has passed, then fetched again."""

    LEEWAY_S = 30.0

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.value: str | None = None
        self.expires_at = 0.0

    def header(self, client: httpx.Client) -> str | None:
        """The Authorization value; raises ``httpx.HTTPError`` or ``ValueError``."""
        if self.value is None or time.monotonic() >= self.expires_at:
            self.fetch(client)
        return f"Bearer {self.value}"

    def fetch(self, client: httpx.Client) -> None:
        assert self.config.token_url is not None
        deadline = time.monotonic() + self.config.timeout_s
        with client.stream("POST", self.config.token_url, data={
                "grant_type": "client_credentials", "client_id": self.config.client_id or "",
                "client_secret": self.config.client_secret or ""}, headers=ASKED) as response:
            answer = read_bounded(response, self.config.response_bytes_max, deadline)
        body = None
        if answer.status == 200 and answer.problem is None:
            try:
                body = parse_untrusted(answer.body)
            except ValueError:
                body = None
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not _header_token(token):
            said = answer.problem or answer.body[:200].decode("utf-8", "replace")
            raise ValueError(f"the token endpoint answered HTTP {answer.status} "
                             f"without a usable access_token: {said}")
        ttl = body.get("expires_in") if isinstance(body, dict) else None
        ttl_s = float(ttl) if isinstance(ttl, int) and not isinstance(ttl, bool) \
            and 0 < ttl <= TOKEN_TTL_MAX_S else 300.0  # an absurd lifetime: the default
        self.value = token
        self.expires_at = time.monotonic() + max(ttl_s - self.LEEWAY_S, ttl_s / 2)


def _close_after(worker: threading.Thread, client: httpx.Client) -> None:
    worker.join()
    client.close()


class Transport:
    """One HTTP client per gateway; ``request`` never raises for what the gateway does."""

    def __init__(self, config: GatewayConfig,
                 on_call: Callable[[Call], None] | None = None) -> None:
        self.config = config
        self.calls: list[Call] = []
        self.on_call = on_call
        https = config.base.startswith("https://")
        if config.bearer is not None and not _header_token(config.bearer):
            raise TransportProblem("the bearer token must be visible ASCII characters without "
                                   "spaces (RFC 6750)")
        try:
            verify: Any = client_context(config.ca_file, config.client_cert,
                                         config.client_key) if https else True
        except TlsProblem as problem:
            raise TransportProblem(str(problem)) from None
        self._verify = verify
        self.token = _Token(config) if config.token_url is not None else None
        self.client = self._client()
        self.abandoned = 0  # calls given up at their deadline, their threads left to the peer

    def _client(self) -> httpx.Client:
        config = self.config
        timeout = httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 5.0))
        headers = {} if config.bearer is None else {"Authorization": f"Bearer {config.bearer}"}
        # TCP_NODELAY: a request sent as two small writes must not wait for a delayed ACK
        transport = httpx.HTTPTransport(verify=self._verify, socket_options=[
            (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        return httpx.Client(transport=transport, timeout=timeout, headers=headers)

    def close(self) -> None:
        self.client.close()

    def _describe(self, error: BaseException, url: str) -> str:
        plain = describe_tls_error(error, client_cert_presented=self.config.client_cert
                                   is not None, https=url.startswith("https://"))
        if plain is not None:
            return plain
        if isinstance(error, httpx.TimeoutException):
            return f"no answer within {self.config.timeout_s:g} s ({type(error).__name__})"
        return f"{type(error).__name__}: {error}"

    def _authorization(self, headers: dict[str, str]) -> str | None:
        """Add the OAuth bearer token to ``headers``; a problem sentence if none comes."""
        if self.token is None:
            return None
        try:
            headers["Authorization"] = self.token.header(self.client) or ""
        except _PEER_ERRORS as error:
            reason = self._describe(error, self.config.token_url or "") \
                if isinstance(error, httpx.HTTPError) else str(error)
            return f"OAuth token request to {self.config.token_url} failed: {reason}"
        return None

    def request(self, method: str, url: str, body: dict[str, Any] | None = None,
                tag: str | None = None) -> Call:
        """``send`` and ``record``: the call made and recorded here and now."""
        return self.record(self.send(method, url, body, tag))

    def record(self, call: Call) -> Call:
        """Keep the call and tell ``on_call`` (in the engine's thread, under its lock)."""
        self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)
        return call

    def send(self, method: str, url: str, body: dict[str, Any] | None = None,
             tag: str | None = None, delay_s: float = 0.0) -> Call:
        """Make the call (after ``delay_s`` of wall time) without recording it: safe off the
        engine's thread, one call at a time per transport."""
        if delay_s > 0:
            time.sleep(delay_s)
        raw = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = dict(ASKED)
        if body is not None:
            headers["Content-Type"] = "application/json"
        started = time.perf_counter()
        made: list[Call] = []

        def make() -> None:
            problem = self._authorization(headers)
            if problem is not None:
                made.append(Call(method, url, tuple(headers.items()), raw.decode(),
                                 error=problem, tag=tag))
            else:
                made.append(self._send(method, url, raw, headers, started, tag))

        # The deadlines inside bound a body; a gateway dripping its status line and headers
        # a byte at a time stays under every read's timeout, so the call runs in a thread
        # of its own and is given up once the token and the call could both have timed out.
        worker = threading.Thread(target=make, daemon=True, name="gateway-call")
        worker.start()
        worker.join(2 * self.config.timeout_s + ABANDON_GRACE_S)
        if made:
            return made[0]
        self.abandoned += 1  # its connection is the old client's: never reused, and the
        held, self.client = self.client, self._client()  # old client closed once it ends
        threading.Thread(target=_close_after, args=(worker, held), daemon=True,
                         name="gateway-call-closer").start()
        return Call(method, url, tuple(headers.items()), raw.decode(),
                    error=f"no whole answer within {self.config.timeout_s:g} s (the gateway "
                          "held its status line and headers; the call was given up)",
                    elapsed_ms=(time.perf_counter() - started) * 1000, tag=tag)

    def _send(self, method: str, url: str, raw: bytes, headers: dict[str, str],
              started: float, tag: str | None) -> Call:
        deadline = time.monotonic() + self.config.timeout_s
        try:
            with self.client.stream(method, url, content=raw or None,
                                    headers=headers) as response:
                sent = tuple(response.request.headers.items())
                answer = read_bounded(response, self.config.response_bytes_max, deadline)
        except _PEER_ERRORS as error:  # whatever the gateway does is a Call
            reason = self._describe(error, url) if isinstance(error, httpx.HTTPError) \
                else f"{type(error).__name__}: {str(error)[:200]}"
            return Call(method, url, tuple(headers.items()), raw.decode(), error=reason,
                        elapsed_ms=(time.perf_counter() - started) * 1000, tag=tag)
        elapsed = (time.perf_counter() - started) * 1000
        return Call(method, url, sent, raw.decode(), answer.status, answer.headers,
                    answer.body.decode("utf-8", "replace"), elapsed, answer.problem, tag)
