"""``ServiceAPI``: every route of the spec on one ``World``, at the world's virtual time.

Public names: ``ServiceAPI``, ``RefusalRecord``, ``refusal_record``, ``CODES_LOGGED_MAX``.

``handle(request) -> response`` is the one way into the service for every door. It answers
in a fixed order, the precedence of ``clearing_sim.domain.errors.PRECEDENCE``: the request's
text (path, query and headers must be canonical strings), route, ``Service-Version``,
environment, authentication, capability, ``Idempotency-Key``, body size and syntax (the one
decoder, ``clearing_sim.service.body``, for every mutating route), the query's parameters
(each one the route's ``query`` names, once), idempotent replay, then the
handler (body fields, scope, agent mandate, state). Nothing is changed before the body has
been decoded, so a refused request changes nothing but its own ``api.request`` record. Every answer
carries ``Service-Version`` and, except a 204, a JSON envelope whose ``meta.commandId`` comes
from the world's id factory. Each request is one ``api.request`` record in the log.

The API layer's own records (API keys and sessions, idempotency entries, agents,
invitations, applications, reserve proofs, conformance runs) live here, one store per kind,
beside the world they describe; two APIs on two worlds share nothing.
"""

from __future__ import annotations

from typing import Any, TypeVar

from attrs import frozen

from clearing_sim.domain.errors import (
    DomainError,
    Forbidden,
    InvalidRequest,
    SandboxUnavailable,
)
from clearing_sim.service import envelope
from clearing_sim.service.auth import Credentials, Principal
from clearing_sim.service.body import (
    BODY_BYTES_MAX,
    check_text,
    is_empty,
    parse_json_object,
    read_query,
)
from clearing_sim.service.context import Context, Reply, Route
from clearing_sim.service.idempotency import ANONYMOUS, IdempotencyStore, check_key
from clearing_sim.service.messages import Request, Response, encode_json
from clearing_sim.service.routes import match
from clearing_sim.service.versions import CURRENT_VERSION, negotiate
from clearing_sim.sim.world import Environment, World

__all__ = ["CODES_LOGGED_MAX", "RefusalRecord", "ServiceAPI", "check_request_text",
           "refusal_record"]

T = TypeVar("T")


def check_request_text(request: Request) -> None:
    """400 ``invalid_string`` unless the path, every query name and value and every header
    name and value is a canonical string: nothing later can fail to encode what it echoes;
    400 ``invalid_value`` for a second ``Authorization``, ``Idempotency-Key`` or
    ``Service-Version``."""
    check_text("method", request.method)
    check_text("path", request.path)
    for name, value in request.query:
        check_text("query", name)
        check_text(f"query {name}", value)
    seen: set[str] = set()
    for name, value in request.headers:
        check_text("header", name)
        check_text(f"header {name}", value)
        lowered = name.lower()
        if lowered in _SINGLETONS and lowered in seen:
            raise InvalidRequest.one(f"header {name}", "invalid_value",
                                     f"the {name} header is sent more than once: it takes one "
                                     "value (RFC 9110 §5.3), and which one counts is ambiguous")
        seen.add(lowered)


#: how much of a request its ``api.request`` record keeps: its method and path escaped
#: (ASCII is itself) then cut, and at most ``CODES_LOGGED_MAX`` codes, then how many more;
#: so a refusal's record, and its journal entry, is bounded whatever was sent (issue 31 §5)
METHOD_LOGGED_MAX = 20
PATH_LOGGED_MAX = 300
CODES_LOGGED_MAX = 16


@frozen
class RefusalRecord:
    """The fields of a request's ``api.request`` record but its command id and ``replayed``."""

    method: str
    path: str
    status: int
    participant_id: str | None
    codes: tuple[str, ...] | None


def _shown(text: str, length_max: int) -> str:
    escaped = text if text.isascii() else text.encode("utf-8", "backslashreplace").decode()
    return escaped[:length_max]


def refusal_record(method: str, path: str, status: int, participant_id: str | None,
                   codes: list[str] | None) -> RefusalRecord:
    if codes is not None and len(codes) > CODES_LOGGED_MAX:
        codes = [*codes[:CODES_LOGGED_MAX], f"+{len(codes) - CODES_LOGGED_MAX} more"]
    return RefusalRecord(_shown(method, METHOD_LOGGED_MAX), _shown(path, PATH_LOGGED_MAX),
                         status, participant_id, None if codes is None else tuple(codes))


#: headers the API reads one value of; two are refused rather than one picked (a proxy in
#: front may pick the other: the caller it authenticated is not the one the service sees)
_SINGLETONS = frozenset({"authorization", "idempotency-key", "service-version"})


class ServiceAPI:
    """``read_indexes``: keep the status check's figures and the book's participant index
    from now on (``World.keep_read_indexes``), so that a served world's status and lists
    cost their answer whenever they are first read (issue 30 §2). A scenario file's own run
    (``scenario.runner.play``) passes ``False``: it reads them a few times over a short log,
    so they are made at the first read, from the log and the book so far (the same
    answers), and its other records pay nothing for them (issue 30 §3)."""

    def __init__(self, world: World, *, private_webhook_urls: bool = False,
                 read_indexes: bool = True) -> None:
        self.world = world
        if read_indexes:
            world.keep_read_indexes()  # status and lists cost their answer (issue 30)
        # the HTTP shim's --allow-private-webhook-urls: http and non-public addresses accepted
        self.private_webhook_urls = private_webhook_urls
        self.credentials = Credentials(world)
        self.idempotency = IdempotencyStore()
        self._stores: dict[type, Any] = {}
        self.last_record: RefusalRecord | None = None  # the last request's record (a door's)

    def store(self, kind: type[T]) -> T:
        """The store of this kind for this API, made on first use (``kind(world)``)."""
        found: T | None = self._stores.get(kind)
        if found is None:
            found = self._stores[kind] = kind(self.world)  # type: ignore[call-arg]
        return found

    # the door -----------------------------------------------------------------------------
    def handle(self, request: Request, *, encode: bool = True) -> Response:
        """The answer to ``request``; with ``encode=False`` its bytes are encoded only if
        read (``Response.deferred``: the same bytes), for a caller that reads ``payload``."""
        command_id = self.world.ids.uuid("command")
        version = CURRENT_VERSION
        principal: Principal | None = None
        replayed = False
        try:
            check_request_text(request)
            route, params = match(request.method, request.path)
            version = negotiate(request.header("Service-Version"))
            principal = self._admit(route, request)
            key = request.header("Idempotency-Key") if route.mutating else None
            check_key(key)
            if len(request.body) > BODY_BYTES_MAX:  # on every route, before its syntax
                parse_json_object(request.body)  # raises PayloadTooLarge
            context = Context(self, request, params, principal, command_id)
            if route.mutating and not is_empty(request.body):
                context.decoded(parse_json_object(request.body))
            read_query(request.query, route.query)
            scope = principal.participant_id if principal is not None else ANONYMOUS
            stored = None
            if key is not None:
                stored = self.idempotency.replay(scope, key, request, self.world.now_ms)
            if stored is not None:
                response = Response(stored.status,
                                    (*stored.headers, ("Idempotent-Replayed", "true")),
                                    stored.body)
                replayed = True
            else:
                response = self._success(route.handler(context), command_id, version, encode)
                if key is not None and 200 <= response.status < 300:
                    self.idempotency.store(scope, key, request, response, self.world.now_ms)
        except DomainError as error:
            response = self._respond(error.status, envelope.failure(error, command_id), version,
                                     encode)
        self._log(request, response, principal, command_id, replayed)
        return response

    def _admit(self, route: Route, request: Request) -> Principal | None:
        if route.sandbox_only and self.world.config.environment is Environment.PRODUCTION:
            raise SandboxUnavailable.one(None, "sandbox_unavailable",
                                         f"{route.method} {route.template} is available in the "
                                         "sandbox only")
        if route.public:
            return None
        principal = self.credentials.authenticate(request.header("Authorization"))
        if principal.credential not in route.credentials:
            kinds = " or ".join(kind.value for kind in route.credentials)
            raise Forbidden.one(None, "missing_capability",
                                f"{route.method} {route.template} needs a {kinds} credential")
        if route.capabilities and not any(principal.holds(c) for c in route.capabilities):
            needed = " or ".join(c.value for c in route.capabilities)
            raise Forbidden.one(None, "missing_capability",
                                f"{route.method} {route.template} needs {needed}")
        return principal

    # answers ------------------------------------------------------------------------------
    def _success(self, reply: Reply, command_id: str, version: str,
                 encode: bool = True) -> Response:
        if reply.status == 204:
            return Response(204, (("Service-Version", version),), b"")
        return self._respond(reply.status, envelope.success(reply, command_id), version, encode)

    def _respond(self, status: int, payload: dict[str, Any], version: str,
                 encode: bool = True) -> Response:
        headers = (("Content-Type", "application/json"), ("Service-Version", version))
        if not encode:
            return Response.deferred(status, headers, payload)
        return Response(status, headers, encode_json(payload), payload)

    def _log(self, request: Request, response: Response, principal: Principal | None,
             command_id: str, replayed: bool) -> None:
        codes: list[str] | None = None
        if response.status >= 400:
            body = response.payload if response.payload is not None else response.json()
            codes = [e["code"] for e in body["errors"]]
        self._record(refusal_record(request.method, request.path, response.status,
                                    principal.participant_id if principal else None, codes),
                     command_id, replayed)

    def _record(self, refusal: RefusalRecord, command_id: str, replayed: bool) -> None:
        fields: dict[str, Any] = {"method": refusal.method, "path": refusal.path,
                                  "status": refusal.status, "commandId": command_id,
                                  "participantId": refusal.participant_id, "replayed": replayed}
        if refusal.codes is not None:
            fields["codes"] = list(refusal.codes)
        self.world.log.append("api.request", **fields)
        self.last_record = refusal

    def replay_refusal(self, refusal: RefusalRecord) -> None:
        """What a refused request did to the world, again: its command id drawn and its
        ``api.request`` record written (the journal keeps a refusal as this, not as the
        request: ``clearing_sim.http.recorder``)."""
        self._record(refusal, self.world.ids.uuid("command"), False)
