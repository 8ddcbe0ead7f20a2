"""``GET /openapi.json``: an OpenAPI 3.1 document of every ``/api/v1`` and ``/sim/v1`` route,
and of ``POST /issuer-webhooks/{issuerId}`` (where a real issuer's status webhooks arrive).

Public names: ``API_OPERATIONS``, ``INBOUND_OPERATIONS``, ``OPERATOR_OPERATIONS``,
``Operation``, ``document``.

The paths come from the two route tables (``clearing_sim.service.routes.ROUTES`` and
``clearing_sim.http.operator.OPERATOR_ROUTES``), so a route cannot be served without being
documented: each row must have its ``Operation`` here (request body, success statuses and
their data, query parameters, and OpenAPI links from a created resource to the operations
on it, so a stateful client such as Schemathesis reaches deep paths), and a test checks the
document's paths against the tables.
Security comes from the rows (a sandbox API key and/or a tenant-admin JWT, none for public
routes, the operator token for ``/sim/v1`` but none for ``GET /sim/v1/health``); error
responses from what each route can refuse: 400 always, 401 and 403 unless public, 404 with a
path parameter (or a looked-up id), 409 when it changes state, 413 with a body (and 415
on ``/api/v1``: a body not declared as JSON), 503 when sandbox-only; any other status is the
error envelope too (``default``). Schemas: ``clearing_sim.http.schemas``.
The inbound issuer-webhook route (``clearing_sim.http.gateways.INBOUND_ROUTES``) answers in
its own small shapes, not the envelope: 202 ``{accepted}`` for a verified prompt, 401
``{error}`` for an unsigned, wrongly signed or stale one, 404 ``{error}`` for a bad path; its
security is the ``Service-Signature`` header (the spec's webhook signature scheme).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from attrs import frozen

from clearing_sim import __version__
from clearing_sim.domain.lifecycle import LifecycleStatus
from clearing_sim.domain.parties import CredentialKind
from clearing_sim.domain.transaction import UseCase
from clearing_sim.http.gateways import INBOUND_ROUTES
from clearing_sim.http.operation_ids import operation_id
from clearing_sim.http.operator import OPERATOR_ROUTES
from clearing_sim.http.schemas import SCHEMAS, SERVICE_VERSIONS, Schema, array, enum, ref
from clearing_sim.service.routes import ROUTES

__all__ = ["API_OPERATIONS", "INBOUND_OPERATIONS", "OPERATOR_OPERATIONS", "Operation",
           "document"]


@frozen
class Operation:
    """What the document says of one route besides its table row."""

    success: tuple[tuple[int, Schema | None], ...]  # (status, data schema; None: no body)
    request: str | None = None  # the body's schema name
    body_required: bool = True
    query: tuple[tuple[str, Schema, bool], ...] = ()  # (name, schema, required)
    lookup_404: bool = False  # 404 for an id in the body or the query
    listing: bool = False  # meta.nextCursor
    #: OpenAPI links from the first success: (name, target (method, template), parameters)
    links: tuple[tuple[str, tuple[str, str], tuple[tuple[str, str], ...]], ...] = ()


def _op(status: int, data: str | Schema | None, request: str | None = None,
        **more: Any) -> Operation:
    schema = ref(data) if isinstance(data, str) else data
    return Operation(((status, schema),), request, **more)


_OPTIONAL = {"body_required": False}
_TX = "Transaction"
_DATA_ID = "$response.body#/data/id"


def _links_to(name: str, templates: tuple[tuple[str, str], ...], param: str,
              source: str) -> tuple[tuple[str, tuple[str, str], tuple[tuple[str, str], ...]],
                                    ...]:
    return tuple((f"{name}{i}", target, ((param, source),))
                 for i, target in enumerate(templates))


_TX_LINKS = _links_to("transaction", (("GET", "/api/v1/transactions/{id}"),
                                      ("POST", "/api/v1/transactions/{id}/cancel"),
                                      ("GET", "/api/v1/transactions/{id}/recovery-status")),
                      "id", _DATA_ID)
_HOOK_LINKS = _links_to("webhook", (("GET", "/api/v1/webhooks/{id}"),
                                    ("DELETE", "/api/v1/webhooks/{id}")), "id", _DATA_ID)
_AGENT_LINKS = _links_to("agent", (("GET", "/api/v1/sandbox/agents/{agentId}"),
                                   ("POST", "/api/v1/sandbox/agents/{agentId}/revoke")),
                         "agentId", "$response.body#/data/agentId")
_PAGE_LINKS = (("nextPage", ("GET", "/api/v1/transactions"),
                (("query.cursor", "$response.body#/meta/nextCursor"),)),)

API_OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/api/v1/system/status"): _op(200, "SystemStatus"),
    ("POST", "/api/v1/tools/integration-path"): _op(200, "IntegrationPath",
                                                    "IntegrationPathRequest"),
    ("POST", "/api/v1/onboarding/applications"): Operation(
        ((201, ref("OnboardingApplication")), (200, ref("OnboardingDryRun"))),
        "OnboardingRequest"),
    ("POST", "/api/v1/transactions"): _op(201, _TX, "InitiateRequest", links=_TX_LINKS),
    ("GET", "/api/v1/transactions"): _op(
        200, array(ref("TransactionItem")), listing=True, links=_PAGE_LINKS,
        query=(("limit", {"type": "integer", "minimum": 1, "maximum": 100}, False),
               ("cursor", {"type": "string", "minLength": 1, "maxLength": 64}, False))),
    ("GET", "/api/v1/transactions/{id}"): _op(200, _TX),
    ("POST", "/api/v1/transactions/{id}/cancel"): _op(200, _TX, "CancelRequest", **_OPTIONAL),
    ("GET", "/api/v1/transactions/{id}/recovery-status"): _op(200, "RecoveryStatus"),
    ("POST", "/api/v1/reserves/{issuerId}/proof/generate"): _op(201, "ReserveArtifact",
                                                                "Empty", **_OPTIONAL),
    ("GET", "/api/v1/reserves/{issuerId}/proof"): _op(200, "ReserveArtifact"),
    ("POST", "/api/v1/reserves/proof/verify"): _op(200, "VerifyResult", "VerifyRequest"),
    ("POST", "/api/v1/sandbox/agents"): _op(201, "Agent", "AgentCreate", links=_AGENT_LINKS),
    ("GET", "/api/v1/sandbox/agents"): _op(200, "AgentList", listing=True),
    ("GET", "/api/v1/sandbox/agents/{agentId}"): _op(200, "Agent"),
    ("POST", "/api/v1/sandbox/agents/{agentId}/revoke"): _op(200, "Agent", "Empty",
                                                             **_OPTIONAL),
    ("POST", "/api/v1/webhooks"): _op(201, "WebhookSubscription", "WebhookCreate",
                                      links=_HOOK_LINKS),
    ("GET", "/api/v1/webhooks"): _op(200, array(ref("WebhookSubscription")), listing=True),
    ("GET", "/api/v1/webhooks/{id}"): _op(200, "WebhookSubscription"),
    ("DELETE", "/api/v1/webhooks/{id}"): _op(204, None, "Empty", **_OPTIONAL),
    ("PUT", "/api/v1/issuers/{issuerId}/capabilities"): _op(200, "SavedProfile",
                                                            "IssuerProfile"),
    ("POST", "/api/v1/issuers/{issuerId}/custody/verify-delegation"): _op(
        200, "DelegationResult", "DelegationRequest"),
    ("POST", "/api/v1/issuers/{issuerId}/conformance/run"): _op(202, "IssuerConformanceRun",
                                                                "Empty", **_OPTIONAL),
    ("GET", "/api/v1/issuers/{issuerId}/conformance/results"): _op(200,
                                                                   "IssuerConformanceRun"),
    ("POST", "/api/v1/conformance/run"): _op(200, "ArmResult", "ArmRequest", lookup_404=True),
    ("POST", "/api/v1/team/invitations"): _op(201, "Invitation", "InvitationRequest"),
}

_BOOL_QUERY: Schema = {"type": "string", "enum": ["true", "false"]}
_PAGE_QUERY = (("cursor", {"type": "string", "pattern": "^[0-9]{1,12}$"}, False),
               ("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, False))
#: the console's quiet reads (``http/stories.py``)
CONSOLE_OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/sim/v1/transactions"): _op(
        200, array(ref("TransactionRow")), listing=True, lookup_404=True,
        query=(("lifecycleStatus", enum(*[s.value for s in LifecycleStatus]), False),
               ("parked", _BOOL_QUERY, False), ("terminal", _BOOL_QUERY, False),
               ("useCase", enum(*[u.value for u in UseCase]), False),
               ("participantId", {"type": "string", "format": "uuid"}, False),
               *_PAGE_QUERY)),
    ("GET", "/sim/v1/transactions/{id}/story"): _op(200, "Story",
                                                    query=(("polls", _BOOL_QUERY, False),)),
    ("GET", "/sim/v1/overview"): _op(200, "Overview"),
    ("GET", "/sim/v1/tail"): _op(
        200, array(ref("LogRecord")), listing=True,
        query=(("kind", {"type": "string"}, False), ("transactionId", {"type": "string"}, False),
               ("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, False))),
}

_PARTICIPANT_QUERY = (("participantId", {"type": "string", "format": "uuid"}, True),)
OPERATOR_OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/sim/v1/health"): _op(200, "Health"),
    ("GET", "/sim/v1/clock"): _op(200, "Clock"),
    ("POST", "/sim/v1/clock/advance"): _op(200, "AdvanceResult", "AdvanceRequest",
                                           lookup_404=True),
    ("POST", "/sim/v1/reset"): _op(200, "ResetResult", "ResetRequest", **_OPTIONAL),
    ("POST", "/sim/v1/operator/transactions/{id}/resolve"): _op(200, _TX, "Empty",
                                                                **_OPTIONAL),
    ("GET", "/sim/v1/operator/issuers/{issuerId}/behaviour"): _op(200,
                                                                  "IssuerBehaviourResult"),
    ("PUT", "/sim/v1/operator/issuers/{issuerId}/behaviour"): _op(
        200, "IssuerBehaviourResult", "IssuerBehaviour"),
    ("PUT", "/sim/v1/operator/issuers/{issuerId}/gateway"): _op(
        200, "IssuerGatewayResult", "IssuerGatewayRequest"),
    ("PUT", "/sim/v1/receivers"): _op(200, "Receiver", "ReceiverRequest"),
    ("POST", "/sim/v1/participants"): _op(201, "ParticipantCreated", "ParticipantCreate"),
    ("GET", "/sim/v1/participants"): _op(200, array(ref("Participant")), listing=True),
    ("POST", "/sim/v1/sessions"): _op(201, "Session", "ParticipantRef", lookup_404=True),
    ("POST", "/sim/v1/api-keys"): _op(201, "ApiKey", "ParticipantRef", lookup_404=True),
    ("GET", "/sim/v1/deliveries"): _op(
        200, array(ref("DeliveryAttempt")), listing=True,
        query=(("transactionId", {"type": "string"}, False),
               ("subscriptionId", {"type": "string"}, False),
               ("cursor", {"type": "string", "pattern": "^[0-9]{1,12}$"}, False),
               ("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, False))),
    ("GET", "/sim/v1/balances"): _op(200, "Balances", query=_PARTICIPANT_QUERY,
                                     lookup_404=True),
    ("GET", "/sim/v1/log"): _op(
        200, array(ref("LogRecord")), listing=True,
        query=(("kind", {"type": "string"}, False),
               ("cursor", {"type": "string", "pattern": "^[0-9]{1,12}$"}, False),
               ("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, False))),
    ("GET", "/sim/v1/digest"): _op(200, "Digest"),
    ("POST", "/sim/v1/checkpoints"): _op(201, "Checkpoint", "CheckpointRequest", **_OPTIONAL),
    ("GET", "/sim/v1/checkpoints"): _op(200, array(ref("Checkpoint"))),
    ("POST", "/sim/v1/rewind"): _op(200, "Rewound", "RewindRequest"),
    ("GET", "/sim/v1/rtgs/calendar"): _op(200, "RtgsCalendarState"),
    ("PUT", "/sim/v1/rtgs/calendar"): _op(200, "RtgsCalendarState", "RtgsCalendarRequest"),
    ("GET", "/sim/v1/webhooks"): _op(
        200, array(ref("OperatorSubscription")), listing=True,
        query=(("participantId", {"type": "string", "format": "uuid"}, False),),
        lookup_404=True),
    ("POST", "/sim/v1/conformance/receivers"): _op(200, "ConformanceReport",
                                                   "ReceiverConformanceRequest"),
    **CONSOLE_OPERATIONS,
}

#: the inbound routes: (request schema, the answers' statuses with their schema names)
INBOUND_OPERATIONS: dict[tuple[str, str], tuple[str, tuple[tuple[int, str, str], ...]]] = {
    ("POST", "/issuer-webhooks/{issuerId}"): ("IssuerStatusWebhook", (
        (202, "IssuerWebhookAccepted", "verified: a prompt to read the instruction"),
        (401, "IssuerWebhookRefused", "unsigned, wrongly signed or stale (outside 300 s), or "
                                      "no such issuer on a gateway: dropped, logged, and "
                                      "not to be retried"),
        (404, "IssuerWebhookRefused", "no issuer id in the path"))),
}

_UUID_PARAMS = ("issuerId",)
_STATE_CHANGES = ("POST", "PUT", "PATCH", "DELETE")
_ERRORS = {400: "the request is malformed or breaks a rule (invalid_request_error)",
           401: "no credential, or one that does not authenticate (authentication_error)",
           403: "the credential lacks what the route needs (permission_error)",
           404: "no such resource in the caller's scope (not_found_error)",
           409: "the current state does not allow it, or an Idempotency-Key was reused "
                "(conflict_error)",
           413: "the body is over 1 MiB (invalid_request_error)",
           415: "the body is not declared as JSON by Content-Type (invalid_request_error)",
           503: "a sandbox-only route called in production (sandbox_unavailable)"}
_SECURITY = {CredentialKind.API_KEY: "apiKey", CredentialKind.TENANT_ADMIN: "adminSession"}


def _parameters(template: str, op: Operation, api: bool, mutating: bool) -> list[Schema]:
    params: list[Schema] = []
    for name in re.findall(r"{([^}]+)}", template):
        uuid = name in _UUID_PARAMS or (name == "id" and "/transactions/" in template)
        params.append({"name": name, "in": "path", "required": True,
                       "schema": {"type": "string", "format": "uuid"} if uuid
                       else {"type": "string"}})
    for name, schema, required in op.query:
        params.append({"name": name, "in": "query", "required": required, "schema": schema})
    if api:
        params.append({"name": "Service-Version", "in": "header", "required": False,
                       "description": "pin a supported date version",
                       "schema": {"type": "string", "enum": list(SERVICE_VERSIONS)}})
        if mutating:
            params.append({"name": "Idempotency-Key", "in": "header", "required": False,
                           "description": "replays the first answer for the same request",
                           "schema": {"type": "string", "minLength": 1, "maxLength": 256,
                                      "description": "any characters; 256 at most, counted "
                                                     "in characters"}})
    return params


def _responses(template: str, method: str, op: Operation, *, api: bool, public: bool,
               sandbox_only: bool) -> dict[str, Any]:
    family = "Api" if api else "Operator"
    headers = {"Service-Version": {"$ref": "#/components/headers/ServiceVersion"}} if api \
        else {}
    responses: dict[str, Any] = {}
    for index, (status, data) in enumerate(op.success):
        answer: dict[str, Any] = {"description": "success"}
        if headers:
            answer["headers"] = headers
        if op.links and index == 0:
            answer["links"] = {name: {"operationId": operation_id(*target),
                                      "parameters": dict(parameters)}
                               for name, target, parameters in op.links}
        if data is not None:
            meta = ref("ListMeta") if op.listing else ref("Meta")
            answer["content"] = {"application/json": {"schema": {
                "type": "object", "required": ["data", "meta"],
                "properties": {"data": data, "meta": meta}}}}
        responses[str(status)] = answer
    codes = [400]
    if not public:
        codes += [401, 403]
    if "{" in template or op.lookup_404:
        codes.append(404)
    if method in _STATE_CHANGES:
        codes.append(409)
    if op.request is not None:
        codes += [413, 415] if api else [413]
    if sandbox_only:
        codes.append(503)
    for code in codes:
        responses[str(code)] = {"$ref": f"#/components/responses/{family}Error{code}"}
    responses["default"] = {"$ref": f"#/components/responses/{family}Error"}
    return responses


def _path_item(method: str, template: str, summary: str, op: Operation, *, api: bool,
               security: list[dict[str, list[str]]], public: bool = False,
               sandbox_only: bool = False) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": operation_id(method, template), "summary": summary,
        "tags": ["api" if api else "operator"], "security": security,
        "parameters": _parameters(template, op, api, method in _STATE_CHANGES),
        "responses": _responses(template, method, op, api=api, public=public,
                                sandbox_only=sandbox_only)}
    if op.request is not None:
        operation["requestBody"] = {"required": op.body_required, "content": {
            "application/json": {"schema": ref(op.request)}}}
    return operation


def _inbound_item(method: str, template: str, summary: str) -> dict[str, Any]:
    request, answers = INBOUND_OPERATIONS[(method, template)]
    return {
        "operationId": operation_id(method, template), "summary": summary,
        "tags": ["issuer"], "security": [{"issuerSignature": []}],
        "parameters": [{"name": "issuerId", "in": "path", "required": True,
                        "schema": {"type": "string", "format": "uuid"}}],
        "requestBody": {"required": True, "content": {
            "application/json": {"schema": ref(request)}}},
        "responses": {str(status): {"description": description, "content": {
            "application/json": {"schema": ref(schema)}}}
            for status, schema, description in answers}}


def _error_responses(family: str, headers: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for code, description in [(None, "an error envelope"), *_ERRORS.items()]:
        answer: dict[str, Any] = {"description": description, "content": {
            "application/json": {"schema": ref("ErrorEnvelope")}}}
        if headers:
            answer["headers"] = headers
        out[f"{family}Error{'' if code is None else code}"] = answer
    return out


@functools.cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (built once; callers must not change it)."""
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        op = API_OPERATIONS[(route.method, route.template)]
        security: list[dict[str, list[str]]] = [] if route.public else [
            {_SECURITY[kind]: []} for kind in route.credentials]
        paths.setdefault(route.template, {})[route.method.lower()] = _path_item(
            route.method, route.template, route.summary, op, api=True, security=security,
            public=route.public, sandbox_only=route.sandbox_only)
    for row in OPERATOR_ROUTES:
        op = OPERATOR_OPERATIONS[(row.method, row.template)]
        paths.setdefault(row.template, {})[row.method.lower()] = _path_item(
            row.method, row.template, row.summary, op, api=False, public=row.public,
            security=[] if row.public else [{"operatorToken": []}])
    for inbound in INBOUND_ROUTES:
        paths.setdefault(inbound.template, {})[inbound.method.lower()] = _inbound_item(
            inbound.method, inbound.template, inbound.summary)
    version_header = {"Service-Version": {"$ref": "#/components/headers/ServiceVersion"}}
    return {
        "openapi": "3.1.0",
        # a short title: generators name the client package after it (clearing_sim_client)
        "info": {"title": "clearing-sim",
                 "version": __version__,
                 "description": "The clearing service API and the simulator's operator "
                                "surface. "
                                "/api/v1 is the service's public API (the spec), served on a "
                                "simulated world at its virtual time; /sim/v1 is the "
                                "simulator's operator surface: the virtual clock, the cast, "
                                "behaviours, deliveries and the event log."},
        "tags": [{"name": "api", "description": "the service's public API"},
                 {"name": "operator", "description": "the simulator's controls"},
                 {"name": "issuer", "description": "where a real issuer's gateway calls the "
                                                   "shim"}],
        "paths": paths,
        "components": {
            "schemas": {**SCHEMAS,
                        "ListMeta": {"type": "object", "required": ["commandId", "nextCursor"],
                                     "properties": {"commandId": {"type": "string",
                                                                  "format": "uuid"},
                                                    "nextCursor": {"type": ["string",
                                                                            "null"]}}}},
            "headers": {"ServiceVersion": {"required": True,
                                           "description": "the API version that answered",
                                           "schema": {"type": "string"}}},
            "responses": {**_error_responses("Api", version_header),
                          **_error_responses("Operator", {})},
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer",
                           "description": "a sandbox machine API key (sk_sandbox_…)"},
                "adminSession": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                                 "description": "a tenant-admin portal session"},
                "operatorToken": {"type": "http", "scheme": "bearer",
                                  "description": "the token clearing-sim serve was started "
                                                 "with (--operator-token)"},
                "issuerSignature": {
                    "type": "apiKey", "in": "header", "name": "Service-Signature",
                    "description": "t=<unix seconds>,v1=<hex HMAC-SHA256 of t.body> with the "
                                   "webhook signing secret issued to the issuer (PUT "
                                   "/sim/v1/operator/issuers/{issuerId}/gateway)"}},
        },
    }
