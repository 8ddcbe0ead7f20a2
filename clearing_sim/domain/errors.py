"""The error catalogue: every refusal the service gives, with its status, type and code.

Public names: ``Problem``, ``DomainError``, ``InvalidRequest``, ``Unauthenticated``,
``Forbidden``, ``NotFound``, ``MethodNotAllowed``, ``NotAllowed``, ``PayloadTooLarge``,
``UnsupportedMediaType``, ``SandboxUnavailable``, ``InternalError``, ``ErrorCode``,
``CATALOGUE``, ``PRECEDENCE``, ``error_class``.

    DomainError               a refusal; changes nothing         status  type
    ├── InvalidRequest        malformed or rule-breaking input      400  invalid_request_error
    ├── Unauthenticated       no credential, or one that fails      401  authentication_error
    ├── Forbidden             lacks what the route needs            403  permission_error
    ├── NotFound              no such route/resource, or unscoped   404  not_found_error
    ├── MethodNotAllowed      the path exists, the method not       405  invalid_request_error
    ├── NotAllowed            valid input the state forbids         409  conflict_error
    ├── PayloadTooLarge       a body over the size limit            413  invalid_request_error
    ├── UnsupportedMediaType  a body not declared as JSON (HTTP)    415  invalid_request_error
    ├── SandboxUnavailable    sandbox-only route in production      503  sandbox_unavailable
    └── InternalError         a defect of ours, never bad input     500  api_error

Each class declares its HTTP ``status`` and error ``type``; each problem carries a stable
``code`` from ``CATALOGUE`` (documented in docs/errors.md, checked by a test). The API layer
maps a refusal to its envelope in exactly one place (``clearing_sim.service.envelope``).
Where several refusals apply to one request, the first in ``PRECEDENCE`` is answered. A
business outcome (an issuer rejection, a parked transaction) is not an error: it is data.
"""

from __future__ import annotations

from typing import ClassVar, Self

from attrs import frozen

__all__ = ["CATALOGUE", "PRECEDENCE", "DomainError", "ErrorCode", "Forbidden",
           "InternalError", "InvalidRequest", "MethodNotAllowed", "NotAllowed", "NotFound",
           "PayloadTooLarge", "Problem", "SandboxUnavailable", "Unauthenticated",
           "UnsupportedMediaType", "error_class"]


@frozen
class Problem:
    """One thing wrong: the field path (``param``), a stable ``code`` and a human message."""

    param: str | None
    code: str
    message: str


class DomainError(Exception):
    """A refusal carrying one or more problems, first the one that decides the answer."""

    status: ClassVar[int] = 400
    type: ClassVar[str] = "invalid_request_error"

    def __init__(self, *problems: Problem) -> None:
        assert problems, "a refusal names at least one problem"
        super().__init__("; ".join(p.message for p in problems))
        self.problems: tuple[Problem, ...] = problems

    @classmethod
    def one(cls, param: str | None, code: str, message: str) -> Self:
        return cls(Problem(param, code, message))


class InvalidRequest(DomainError):
    """Malformed or rule-breaking input."""

    status = 400
    type = "invalid_request_error"


class Unauthenticated(DomainError):
    status = 401
    type = "authentication_error"


class Forbidden(DomainError):
    status = 403
    type = "permission_error"


class NotFound(DomainError):
    status = 404
    type = "not_found_error"


class MethodNotAllowed(DomainError):
    status = 405
    type = "invalid_request_error"


class NotAllowed(DomainError):
    """Valid input the current state does not allow (cancel after settlement, …)."""

    status = 409
    type = "conflict_error"


class PayloadTooLarge(DomainError):
    status = 413
    type = "invalid_request_error"


class UnsupportedMediaType(DomainError):
    """A body whose ``Content-Type`` is not JSON: the HTTP shim's refusal (a request made in
    process, by a scenario or a journal's replay, declares no media type)."""

    status = 415
    type = "invalid_request_error"


class SandboxUnavailable(DomainError):
    status = 503
    type = "sandbox_unavailable"


class InternalError(DomainError):
    """Never bad input: a defect of the simulator, answered in the envelope (the HTTP door
    logs the traceback). Listed so a client's generated types know the shape."""

    status = 500
    type = "api_error"


@frozen
class ErrorCode:
    code: str
    error: type[DomainError]
    meaning: str


def _codes(error: type[DomainError], *rows: tuple[str, str]) -> list[ErrorCode]:
    return [ErrorCode(code, error, meaning) for code, meaning in rows]


#: Every error code the service answers, in catalogue order (the order of docs/errors.md).
CATALOGUE: dict[str, ErrorCode] = {row.code: row for row in [
    *_codes(InvalidRequest,
            ("malformed_json", "the body is not a JSON document"),
            ("receiver_unreachable", "the receiver under test gave no HTTP answer"),
            ("invalid_body", "the body is not a JSON object"),
            ("malformed_http_request", "the request is not valid HTTP/1.1 (answered by the "
                                       "HTTP server before any route)"),
            ("invalid_string", "a string in the request is not canonical: a lone surrogate "
                               "or text not in Unicode Normalization Form C"),
            ("required", "a required field is missing"),
            ("invalid_type", "a field has the wrong JSON type"),
            ("invalid_value", "a field's value is not one of those allowed, or out of bounds"),
            ("unknown_field", "a field the route does not accept"),
            ("invalid_amount", "an amount is not a positive decimal string within the asset's "
                               "precision"),
            ("invalid_timestamp", "a timestamp is not ISO 8601 with a time zone"),
            ("invalid_url", "a URL is malformed or not HTTPS"),
            ("url_not_public", "a webhook URL is or resolves to an address that is not public "
                               "(loopback, private, link-local, unspecified, shared, "
                               "multicast, reserved, or an IPv6 form of one)"),
            ("invalid_email", "an email address is malformed"),
            ("invalid_query", "a query parameter is malformed or out of bounds"),
            ("invalid_cursor", "a list cursor was not issued by this service"),
            ("idempotency_key_too_long", "the Idempotency-Key header exceeds 256 characters"),
            ("idempotency_key_empty", "the Idempotency-Key header is empty"),
            ("unsupported_version", "the Service-Version header names no supported version"),
            ("unknown_asset", "no asset with this code and issuer"),
            ("issued_asset_required", "the side must be an issued asset with its issuer"),
            ("fiat_required", "a redeem's target must be fiat"),
            ("currency_mismatch", "the two sides are in different currencies"),
            ("same_asset", "a swap needs two different assets"),
            ("amount_mismatch", "source and target amounts differ"),
            ("not_a_clearing_member", "only clearing members start transactions"),
            ("ledger_change", "an issuer cannot move its profile to another ledger"),
            ("expires_in_past", "an expiry time is not in the future"),
            ("empty_mandate", "an agent mandate grants no capability"),
            ("unknown_key_id", "a reserve artifact's keyId is not reserve-policy-v1-sandbox"),
            ("field_not_applicable", "a field that does not apply to this role")),
    *_codes(Unauthenticated,
            ("authentication_required", "the route needs a bearer credential"),
            ("invalid_credential", "the bearer credential is unknown, malformed or forged"),
            ("credential_expired", "the portal session has expired")),
    *_codes(Forbidden,
            ("missing_capability", "the credential lacks the capability the route needs"),
            ("not_own_participant", "the route acts only on the caller's own participant"),
            ("capability_not_held", "an agent mandate asks for a capability the admin lacks"),
            ("agent_unknown", "the submitting agent does not exist for this participant"),
            ("agent_mandate_invalid", "the mandateProof does not verify for this agent"),
            ("agent_expired", "the submitting agent's mandate has expired"),
            ("agent_revoked", "the submitting agent has been revoked"),
            ("agent_outside_mandate", "the agent's mandate does not cover this action"),
            ("agent_amount_cap_exceeded", "the amount is above the agent's GBP cap")),
    *_codes(NotFound,
            ("route_not_found", "no route has this path"),
            ("transaction_not_found", "no transaction with this id in the caller's scope"),
            ("webhook_not_found", "no webhook subscription with this id for the caller"),
            ("agent_not_found", "no agent with this id for the caller"),
            ("reserve_proof_not_found", "no reserve proof has been generated yet"),
            ("conformance_run_not_found", "no issuer conformance run has been started"),
            ("participant_not_found", "no participant with this id"),
            ("checkpoint_not_found", "no checkpoint of the journal has this name")),
    *_codes(MethodNotAllowed,
            ("method_not_allowed", "the path exists but not with this method")),
    *_codes(NotAllowed,
            ("idempotency_key_reused", "the Idempotency-Key was used with a different request"),
            ("already_settled", "a settled transaction cannot be cancelled"),
            ("already_cancelled", "the transaction is already cancelled"),
            ("transaction_failed", "a failed transaction cannot be cancelled"),
            ("settlement_in_progress", "the irrevocable settlement step has started"),
            ("transaction_terminal", "a terminal transaction has no issuer event left to arm"),
            ("no_issuer_instruction", "Mode 1 transactions have no issuer instruction to arm"),
            ("issuer_decided", "every issuer has already decided (APPROVED or later): a "
             "rejection can no longer come"),
            ("already_member", "the email already belongs to an active member"),
            ("organisation_name_taken", "an organisation with this name is already registered "
                                        "or applying"),
            ("invitation_pending", "the email already has a pending invitation"),
            ("agent_already_revoked", "the agent is already revoked"),
            ("profile_required", "the issuer has no capability profile yet"),
            ("conformance_unsupported", "the issuer's profile has no instruction API to test"),
            ("real_gateway", "the issuer is on its real gateway: it has no simulated behaviour"),
            ("not_parked", "an operator fix needs a parked transaction"),
            ("no_issued_asset", "the issuer issues no asset to run synthetic transactions with"),
            ("conformance_run_in_progress", "a conformance run for this issuer is still running"),
            ("conformance_suite_transaction", "the transaction belongs to an issuer conformance "
                                              "run, which arms it itself"),
            ("kit_api_key_unknown", "the receiver kit was given an API key this world did not "
                                    "issue"),
            ("kit_not_a_member", "the receiver kit's API key is not a clearing member's"),
            ("kit_nothing_to_redeem", "the receiver kit's member holds too little of an asset "
                                      "whose issuer takes instructions"),
            ("kit_initiation_refused", "the receiver kit's staged redeem was refused"),
            ("kit_stage_stuck", "a receiver kit's staged transaction did not reach its state"),
            ("kit_world_replaced", "the served world was reset or rewound while the receiver "
                                   "battery ran"),
            ("journal_required", "checkpoints and rewind need the shim started with --journal"),
            ("rewind_unavailable", "a rewind on an app assembled in process without the "
                                   "journal's replay (clearing_sim.http.app.create_app)"),
            ("checkpoint_exists", "a checkpoint of the journal already has this name"),
            ("clock_awaiting_receivers", "a checkpoint is refused while an advance waits for "
                                         "real webhook receivers' answers"),
            ("not_journaled", "the route cannot be journaled, so it is refused while "
                              "journaling"),
            ("clock_advancing", "a write waited its bound for an advance that is still "
                                "running events: nothing was done; retry after Retry-After")),
    *_codes(PayloadTooLarge,
            ("payload_too_large", "the body exceeds 1 MiB")),
    *_codes(UnsupportedMediaType,
            ("unsupported_media_type", "a request with a body does not declare it as JSON "
                                       "(Content-Type application/json, or a +json type); "
                                       "answered by the HTTP shim")),
    *_codes(SandboxUnavailable,
            ("sandbox_unavailable", "a sandbox-only route called in production")),
    *_codes(InternalError,
            ("internal_error", "the simulator failed (a defect, never bad input): the server "
                               "log holds the traceback; please report it")),
]}

#: When several refusals apply to one request, the first of these decides the answer.
PRECEDENCE: tuple[str, ...] = (
    "request text: path, query and headers canonical strings (400 invalid_string)",
    "route (404 route_not_found, 405 method_not_allowed)",
    "Service-Version (400 unsupported_version)",
    "environment (503 sandbox_unavailable)",
    "authentication (401)",
    "over HTTP, Content-Type of a body within the size limit (415 unsupported_media_type): "
    "the shim checks it once the route is known and the credential authenticates, before "
    "the API's own checks",
    "capability (403 missing_capability)",
    "Idempotency-Key (400 idempotency_key_empty, idempotency_key_too_long)",
    "body size (413) and syntax (400 malformed_json, invalid_string), on mutating routes",
    "query parameters: each one the route takes, given once (400 invalid_query)",
    "idempotency replay or conflict (409 idempotency_key_reused)",
    "body fields (400), every problem listed, the first deciding",
    "scope (404 for transactions and conformance targets, 403 for own-participant routes)",
    "agent mandate (403 agent_*)",
    "state (409)",
)


def error_class(code: str) -> type[DomainError]:
    return CATALOGUE[code].error
