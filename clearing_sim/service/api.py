"""``ServiceAPI``: every route of the spec on one ``World``, at the world's virtual time.

Public names: ``ServiceAPI``.

``handle(request) -> response`` is the one way into the service for every door. It answers
in a fixed order, the precedence of ``clearing_sim.domain.errors.PRECEDENCE``: the request's
text (path, query and headers must be canonical strings), route, ``Service-Version``,
environment, authentication, capability, ``Idempotency-Key``, body size and syntax (the one
decoder, ``clearing_sim.service.body``, for every mutating route), idempotent replay, then the
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

from clearing_sim.domain.errors import (
    DomainError,
    Forbidden,
    InvalidRequest,
    SandboxUnavailable,
)
from clearing_sim.service import envelope
from clearing_sim.service.auth import Credentials, Principal
from clearing_sim.service.body import BODY_BYTES_MAX, check_text, parse_json_object
from clearing_sim.service.context import Context, Reply, Route
from clearing_sim.service.idempotency import ANONYMOUS, IdempotencyStore, check_key
from clearing_sim.service.messages import Request, Response, encode_json
from clearing_sim.service.routes import match
from clearing_sim.service.versions import CURRENT_VERSION, negotiate
from clearing_sim.sim.world import Environment, World

__all__ = ["ServiceAPI", "check_request_text"]

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


#: headers the API reads one value of; two are refused rather than one picked (a proxy in
#: front may pick the other: the caller it authenticated is not the one the service sees)
_SINGLETONS = frozenset({"authorization", "idempotency-key", "service-version"})


class ServiceAPI:
    def __init__(self, world: World, *, private_webhook_urls: bool = False) -> None:
        self.world = world
        world.keep_read_indexes()  # status and lists cost their answer (issue 30)
        # the HTTP shim's --allow-private-webhook-urls: http and non-public addresses accepted
        self.private_webhook_urls = private_webhook_urls
        self.credentials = Credentials(world)
        self.idempotency = IdempotencyStore()
        self._stores: dict[type, Any] = {}

    def store(self, kind: type[T]) -> T:
        """The store of this kind for this API, made on first use (``kind(api)``)."""
        found: T | None = self._stores.get(kind)
        if found is None:
            found = self._stores[kind] = kind(self)  # type: ignore[call-arg]
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
            if route.mutating and request.body.strip():
                context.decoded(parse_json_object(request.body))
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
        def shown(text: str) -> str:  # a refused text is logged escaped (ASCII is itself)
            return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode()

        fields: dict[str, Any] = {"method": shown(request.method[:20]),
                                  "path": shown(request.path[:300]),
                                  "status": response.status, "commandId": command_id,
                                  "participantId": principal.participant_id if principal
                                  else None, "replayed": replayed}
        if response.status >= 400:
            body = response.payload if response.payload is not None else response.json()
            fields["codes"] = [e["code"] for e in body["errors"]]
        self.world.log.append("api.request", **fields)
