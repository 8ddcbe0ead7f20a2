"""The ASGI application: HTTP in, the API layer or the operator surface, HTTP out.

Public names: ``create_app``, ``Shim``, ``READ_LIMIT_BYTES``.

A thin door (STYLE.md): decode the HTTP request into the API's ``Request`` (method, the
path exactly as sent, the query, the headers, the raw body), call one function, encode its
``Response`` (status, headers, the exact body bytes) back. ``/api/v1/…`` is
``ServiceAPI.handle`` under the world lock, so the bytes equal the in-process answer for
the same world and the same requests; ``/sim/v1/…`` is the operator surface (with
``--journal``, each change is appended to the journal as it is applied and its answer waits
until the entry is on disk: ``clearing_sim.http.recorder``);
``GET /sim/v1/health`` answers without a credential and touches nothing (``http/health.py``);
``GET /openapi.json`` the OpenAPI document; ``/sim/console`` the console's static files
(``http/console_files.py``: no token, nothing touched). Any other path is 404 ``route_not_found``
without touching the world (a browser's ``/favicon.ico`` must not change a run's log). A 405
also carries ``Allow`` (RFC 9110); ``HEAD`` on a ``GET`` route is that ``GET`` without its
body.

Hostile input is answered before it costs memory (docs/semantics.md): a request whose
answer cannot depend on its body (a route that needs a credential it does not present
validly, the operator surface without its token, any path outside the two surfaces) is
answered without reading the body at all (a real issuer's webhook, signed over its body,
is read); any other body is read to at most ``READ_LIMIT_BYTES`` (the API's 1 MiB and one
byte more, so the API answers its own 413). A body that ends before its declared length or
last chunk (the peer closed, half closed or reset) is never handed on: no answer, nothing
journaled. A non-empty body on ``/api/v1`` not declared as JSON (``Content-Type``) is 415
``unsupported_media_type``, answered here: the API itself, called in process by scenarios
and replays, reads no media type.
Header values are read as UTF-8 (latin-1 when they are not), so a limit in characters
counts characters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from clearing_sim.domain.errors import (
    DomainError,
    InternalError,
    MethodNotAllowed,
    NotAllowed,
    NotFound,
    UnsupportedMediaType,
)
from clearing_sim.http.clock import Clock, ClockAdvancing
from clearing_sim.http.console_files import console_response, is_console
from clearing_sim.http.delivery import RealDeliveries, RealOutcome
from clearing_sim.http.gateways import INBOUND_ROUTES, WEBHOOK_PREFIX, receive_issuer_webhook
from clearing_sim.http.health import is_health
from clearing_sim.http.openapi import document
from clearing_sim.http.operator import OPERATOR_ROUTES, OperatorSurface
from clearing_sim.http.options import ClockMode, ServeOptions
from clearing_sim.http.recorder import journaled_operator, unjournaled
from clearing_sim.http.simulation import Simulation
from clearing_sim.http.surface import Rebuild
from clearing_sim.scenario.model import Scenario
from clearing_sim.service import envelope
from clearing_sim.service.body import BODY_BYTES_MAX
from clearing_sim.service.messages import Request, Response, encode_json
from clearing_sim.service.routes import ROUTES, match
from clearing_sim.sim.receivers import Arrival
from clearing_sim.tls.contexts import client_context

__all__ = ["READ_LIMIT_BYTES", "Shim", "create_app"]

READ_LIMIT_BYTES = BODY_BYTES_MAX + 1
_JSON = (("Content-Type", "application/json"),)
_log = logging.getLogger("clearing_sim.http")


def _prefixed(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _allowed(path: str) -> list[str]:
    if path == "/openapi.json":
        return ["GET"]
    rows: list[Any] = [*ROUTES, *OPERATOR_ROUTES]
    methods = [row.method for row in rows if row.match(path) is not None]
    if _prefixed(path, WEBHOOK_PREFIX):
        methods += [row.method for row in INBOUND_ROUTES]
    return methods


class Shim:
    """The ASGI endpoint behind every path."""

    def __init__(self, sim: Simulation, clock: Clock, operator: OperatorSurface) -> None:
        self.sim = sim
        self.clock = clock
        self.operator = operator
        self.openapi = encode_json(document())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        head = _head(scope)
        try:
            request = head if self._body_unread(head) else await _read(head, receive)
            if request is None:  # its body was cut off: never handed on, nobody to answer
                return
            response = await self.respond(request)
        except Exception:  # a bug, not bad input: say so in the envelope, log the traceback
            _log.exception("unexpected failure answering %s %s", scope["method"],
                           scope["path"])
            response = self._refusal(InternalError.one(
                None, "internal_error", "the simulator failed; see the server log"))
        await _write(send, response, head=scope["method"] == "HEAD")

    def _body_unread(self, request: Request) -> bool:
        """Whether the answer is known without the body (then it is never read)."""
        path = request.path
        if is_health(request):
            return True
        if _prefixed(path, "/sim/v1"):
            try:
                self.operator.authenticate(request.header("Authorization"))
            except DomainError:
                return True
            return False
        if _prefixed(path, WEBHOOK_PREFIX):  # signed over its body: the body is the check,
            issuer_id = path[len(WEBHOOK_PREFIX) + 1:]  # for an issuer this world has
            return request.method != "POST" or issuer_id not in self.sim.world.issuers
        if not _prefixed(path, "/api/v1"):
            return True
        try:
            route, _ = match(request.method, path)
        except DomainError:
            return True
        if route.public:
            return False
        try:
            self.sim.api.credentials.authenticate(request.header("Authorization"))
        except DomainError:
            return True
        return False

    async def respond(self, request: Request) -> Response:
        if request.method == "HEAD":  # a GET without its body (_write leaves it out)
            request = Request("GET", request.path, request.query, request.headers,
                              request.body)
        path = request.path
        if is_console(path):  # the console's static files: touch nothing, need no token
            return console_response(request)
        if is_health(request):  # touches nothing: no catch-up, no lock, no journal
            response = await self.operator.handle(request)
        elif _prefixed(path, "/api/v1") and 0 < len(request.body) <= BODY_BYTES_MAX \
                and not _declares_json(request):  # a body past the limit: the API's 413
            response = self._refusal(UnsupportedMediaType.one(
                None, "unsupported_media_type", "the body must be declared as JSON: "
                "Content-Type: application/json"))
        elif _prefixed(path, "/api/v1"):
            await self.clock.catch_up()
            response = await self._api(request)
        elif _prefixed(path, "/sim/v1"):
            await self.clock.catch_up()
            response = await self._operator(request)
        elif _prefixed(path, WEBHOOK_PREFIX):  # a real issuer's status webhook
            response = await self._issuer(request)
        elif path == "/openapi.json" and request.method in ("GET", "HEAD"):
            response = Response(200, _JSON, self.openapi)
        elif path == "/openapi.json":
            response = self._refusal(MethodNotAllowed.one(
                None, "method_not_allowed", f"{request.method} is not allowed on "
                                            "/openapi.json; allowed: GET"))
        else:
            response = self._refusal(NotFound.one(None, "route_not_found",
                                                  f"no route {path[:200]}"))
        if response.status == 405:
            methods = _allowed(path)
            allow = ", ".join(dict.fromkeys(methods + (["HEAD"] if "GET" in methods else [])))
            response = Response(405, (*response.headers, ("Allow", allow)), response.body)
        return response

    async def _api(self, request: Request) -> Response:
        """A read under the world lock (between an advance's slices); a write through the
        clock, which holds it until no advance is running events. Either is journaled in
        the same hold (a read is logged too), and answered once it is on disk."""
        journal = self.sim.journal
        for fault in tuple(self.sim.api_faults):  # the receiver kit's: the world never sees it
            answer = fault(request)
            if answer is not None:
                return answer

        async def apply() -> Response:
            world, api = self.sim.world, self.sim.api
            at_ms, records, draws = world.now_ms, len(world.log), world.ids.draws
            response = api.handle(request)
            if journal is None:
                return response
            if response.status >= 400 and len(world.log) == records + 1 \
                    and world.ids.draws == draws + 1 and api.last_record is not None:
                journal.refusal(request, response, at_ms, api.last_record)  # bounded
            else:
                journal.api(request, response, at_ms)
            return response

        if request.method in ("GET", "HEAD"):
            async with self.sim.world_lock:
                response = await apply()
        else:
            try:
                response = await self.clock.write(apply)
            except ClockAdvancing as refusal:  # not applied: nothing to journal
                return self._refusal(refusal, refusal.headers())
        if journal is not None:
            await journal.durable()  # the answer is sent only once its request is on disk
        return response

    async def _operator(self, request: Request) -> Response:
        journal = self.sim.journal
        if journal is not None and unjournaled(request):
            return self._refusal(NotAllowed.one(None, "not_journaled", (
                f"{request.path[:200]} would make the world depend on a real receiver or "
                "issuer that a journal cannot replay; serve without --journal to use it")))
        response = await self.operator.handle(request)
        if journal is not None:
            # No await between the handler's change and this append: the order holds.
            if journaled_operator(request, response) and not _deferred(response):
                journal.operator(request, response, self.sim.world.now_ms)
            await journal.durable()  # its own entry, or the clock's, or a checkpoint's
        return response

    async def _issuer(self, request: Request) -> Response:
        """A real issuer's status webhook: a write (it waits for an advance's events, like
        any other), journaled in the same hold."""
        journal = self.sim.journal

        async def apply() -> Response:
            inbox = self.sim.world.issuer_inbox
            inbox.take_drop()
            response = receive_issuer_webhook(self.sim, request)
            drop = inbox.take_drop()
            if journal is None or request.method != "POST":
                return response
            if response.status == 401 and drop is not None:  # all it did: its record
                journal.dropped(*drop, self.sim.world.now_ms)
            elif response.status in (202, 401):
                journal.issuer(request, response, self.sim.world.now_ms)
            return response

        try:
            response = await self.clock.write(apply)
        except ClockAdvancing as refusal:  # not applied: nothing to journal
            return self._refusal(refusal, refusal.headers())
        if journal is not None:
            await journal.durable()
        return response

    def _refusal(self, error: DomainError,
                 headers: tuple[tuple[str, str], ...] = ()) -> Response:
        return Response(error.status, (*_JSON, *headers),
                        encode_json(envelope.failure(error, self.sim.command_id())))


def _deferred(response: Response) -> bool:
    """A write refused because an advance ran past its wait (``ClockAdvancing``): it was
    not applied, so it is not journaled (replay, with no advance running, would apply it)."""
    return response.status == 409 and any(name == "Retry-After" for name, _ in response.headers)


class _Everything:
    """Every HTTP request goes to the shim, whatever its path: a router's path patterns
    would answer some paths (one with an encoded newline) themselves, in plain text."""

    def __init__(self, app: ASGIApp, shim: Shim) -> None:
        self.app = app
        self.shim = shim

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.shim(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def _declares_json(request: Request) -> bool:
    """``Content-Type`` is ``application/json`` or a ``+json`` type, any parameters after."""
    declared = (request.header("Content-Type") or "").split(";", 1)[0].strip().lower()
    kind, _, subtype = declared.partition("/")
    return kind == "application" and (subtype == "json" or (
        subtype.endswith("+json") and len(subtype) > len("+json")))


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


#: a percent-escape that is not UTF-8 becomes a lone surrogate, which ``check_request_text``
#: refuses (400 ``invalid_string``), not U+FFFD, which would be read as if it had been sent
_NOT_UTF8 = "surrogateescape"


def _head(scope: Scope) -> Request:
    """The request without its body (not read yet)."""
    raw_path = scope.get("raw_path") or str(scope["path"]).encode()
    path = bytes(raw_path).split(b"?", 1)[0].decode("latin-1")
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    headers = tuple((bytes(k).decode("latin-1"), _text(bytes(v)))
                    for k, v in scope.get("headers", ()))
    return Request(str(scope["method"]).upper(), path,
                   tuple(parse_qsl(query, keep_blank_values=True, errors=_NOT_UTF8)), headers)


async def _read(head: Request, receive: Receive) -> Request | None:
    """The request with its body, read to at most ``READ_LIMIT_BYTES``; None when the body
    was cut off (the peer closed, half closed or reset before its declared length or its
    last chunk: uvicorn says ``http.disconnect`` before ``more_body`` is false)."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more and size < READ_LIMIT_BYTES:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")[:READ_LIMIT_BYTES - size]
        size += len(chunk)
        chunks.append(chunk)
        more = bool(message.get("more_body", False))
    return Request(head.method, head.path, head.query, head.headers, b"".join(chunks))


async def _write(send: Send, response: Response, *, head: bool) -> None:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1"))
               for name, value in response.headers]
    headers.append((b"content-length", str(len(response.body)).encode()))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else response.body})


def create_app(options: ServeOptions, *, scenario: Scenario | None = None,
               echo: Callable[[Arrival, RealOutcome], None] | None = None,
               owns_heap: bool = False, journal_pending: bool = False,
               rebuild: Rebuild | None = None) -> Starlette:
    """The shim for these options (and world file); ``app.state`` holds ``sim`` and ``clock``.

    ``echo`` is told of every real webhook delivery (``clearing-sim serve`` prints them).
    ``owns_heap``: the process serves this app alone (``clearing-sim serve``), so the clock
    may freeze the grown world out of full garbage collections (``http/heap.py``).
    ``journal_pending``: a journal is still to be opened (and replayed) on this app, so
    ``GET /sim/v1/health`` says ``ready: false`` until ``open_journal`` has done it.
    ``rebuild``: the journal's replay for ``POST /sim/v1/rewind`` (``http.wired.create_app``,
    the package's ``create_app``, hands in ``http.replay.rebuild``; this module does not
    import the replay, which builds apps)."""
    trust = None if options.webhook_ca is None else client_context(options.webhook_ca)
    deliveries = (RealDeliveries(options.allow_private_webhook_urls, echo, trust=trust)
                  if options.deliver_webhooks else None)
    sim = Simulation(options, scenario, deliveries)
    sim.owns_heap = owns_heap
    sim.ready = not journal_pending
    clock = Clock(sim, options.clock, options.speed)
    shim = Shim(sim, clock, OperatorSurface(sim, clock, options.operator_token,
                                            rebuild=rebuild))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        ticker = None
        if clock.mode is ClockMode.REALTIME:
            clock.rebase()
            ticker = asyncio.create_task(clock.run_realtime())
        try:
            yield
        finally:
            if ticker is not None:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await ticker

    app = Starlette(middleware=[Middleware(_Everything, shim=shim)], lifespan=lifespan)
    app.state.sim = sim
    app.state.clock = clock
    app.state.operator = shim.operator
    return app
