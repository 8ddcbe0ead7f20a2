"""GET /openapi.json: a valid OpenAPI 3.1 document of exactly the two route tables, and
Schemathesis against it (bounded): no 5xx and no answer outside the document."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from openapi_spec_validator import validate
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from clearing_sim.domain.initiation import AssetRef, InitiateRequest, LegRequest
from clearing_sim.domain.transaction import UseCase
from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.gateways import INBOUND_ROUTES
from clearing_sim.http.openapi import (
    API_OPERATIONS,
    INBOUND_OPERATIONS,
    OPERATOR_OPERATIONS,
    document,
)
from clearing_sim.http.operation_ids import operation_id
from clearing_sim.http.operator import OPERATOR_ROUTES
from clearing_sim.service.routes import ROUTES
from clearing_sim.sim.examples import issuer_profile
from tests.http.conftest import TOKEN

EXAMPLES_PER_OPERATION = 5
EXAMPLES_PER_OPERATION_SLOW = 60


def test_the_document_is_valid_openapi_3_1() -> None:
    validate(document())
    assert document()["openapi"] == "3.1.0"


def test_its_paths_are_exactly_the_route_tables() -> None:
    documented = {(method.upper(), path) for path, item in document()["paths"].items()
                  for method in item}
    tables = {(r.method, r.template) for r in (*ROUTES, *OPERATOR_ROUTES, *INBOUND_ROUTES)}
    assert documented == tables
    assert set(API_OPERATIONS) == {(r.method, r.template) for r in ROUTES}
    assert set(OPERATOR_OPERATIONS) == {(r.method, r.template) for r in OPERATOR_ROUTES}
    assert set(INBOUND_OPERATIONS) == {(r.method, r.template) for r in INBOUND_ROUTES}


def test_the_issuer_webhook_route_is_documented_with_its_signature_and_answers() -> None:
    """Spec, Issuer-side contract: the status webhook (instructionId, status, onchain,
    finalizedAt) is signed like outgoing webhooks; unsigned or wrongly signed is dropped."""
    item = document()["paths"]["/issuer-webhooks/{issuerId}"]
    assert set(item) == {"post"}
    post = item["post"]
    assert post["operationId"] == "receiveIssuerStatusWebhook"
    assert post["security"] == [{"issuerSignature": []}]
    scheme = document()["components"]["securitySchemes"]["issuerSignature"]
    assert (scheme["in"], scheme["name"]) == ("header", "Service-Signature")
    assert set(post["responses"]) == {"202", "401", "404"}
    body = document()["components"]["schemas"]["IssuerStatusWebhook"]
    assert body["required"] == ["instructionId", "status"]
    assert "COMPLETED" in body["properties"]["status"]["enum"]


def test_security_follows_the_route_table() -> None:
    paths = document()["paths"]
    for route in ROUTES:
        security = paths[route.template][route.method.lower()]["security"]
        assert (security == []) == route.public, route.template
        if route.sandbox_only:
            assert "503" in paths[route.template][route.method.lower()]["responses"]
    for row in OPERATOR_ROUTES:
        security = paths[row.template][row.method.lower()]["security"]
        assert security == ([] if row.public else [{"operatorToken": []}]), row.template
    assert [row.template for row in OPERATOR_ROUTES if row.public] == ["/sim/v1/health"]


def test_every_error_code_is_in_the_error_schema() -> None:
    codes = document()["components"]["schemas"]["Error"]["properties"]["code"]["enum"]
    assert "route_not_found" in codes and "sandbox_unavailable" in codes


# Schemathesis -----------------------------------------------------------------------------
CONFIG = schemathesis.Config.from_dict({
    "phases": {"examples": {"enabled": False}, "coverage": {"enabled": False},
               "stateful": {"enabled": False}},
})
schema = schemathesis.openapi.from_asgi(
    "/openapi.json", create_app(ServeOptions(operator_token=TOKEN)), config=CONFIG)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


def _fresh() -> tuple[Any, dict[str, Any]]:
    """A new world per case, so cases cannot disturb each other: an issuer, a member, a
    transaction; credentials of every kind."""
    app = create_app(ServeOptions(operator_token=TOKEN, seed=0))
    sim = app.state.sim
    world, credentials = sim.world, sim.api.credentials
    issuer = world.add_issuer("Ether Pound", issuer_profile(2), (), Decimal("1000000.00"))
    asset = world.issue_asset(issuer.id, "GBPE")
    member = world.add_member("Northbank", Decimal("0.00"), {asset: Decimal("1000.00")})
    tx = world.initiate(member.id, InitiateRequest(
        UseCase.REDEEM, "INV-1", LegRequest("10.00", AssetRef(asset.code, asset.issuer)),
        LegRequest("10.00", AssetRef("GBP"))))
    return app, {"issuer": issuer.id, "member": member.id, "tx": tx.id,
                 "asset": {"code": asset.code, "issuer": asset.issuer},
                 "issuer_admin": credentials.issue_session(issuer.id),
                 "member_key": credentials.issue_api_key(member.id)[1],
                 "member_admin": credentials.issue_session(member.id)}


def _token(case: Any, cast: dict[str, Any]) -> str:
    path = case.operation.path
    if path.startswith("/sim/v1"):
        return TOKEN
    kinds = {next(iter(s)) for s in case.operation.definition.raw.get("security", [])}
    if "{issuerId}" in path or "/reserves/" in path:
        return str(cast["issuer_admin"])
    return str(cast["member_key"] if "apiKey" in kinds else cast["member_admin"])


def _check(case: Any) -> None:
    app, cast = _fresh()
    params = case.path_parameters or {}
    if "issuerId" in params:
        params["issuerId"] = cast["issuer"]
    if "id" in params and "/transactions/" in case.operation.path:
        params["id"] = cast["tx"]
    if case.operation.path == "/sim/v1/balances" and case.query:
        case.query["participantId"] = cast["member"]
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {_token(case, cast)}"}
    case.call_and_validate(app=app, checks=CHECKS)


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_schemathesis_finds_no_5xx_and_no_answer_outside_the_document(case: Any) -> None:
    """A bounded run for every CI build: the same examples every time."""
    _check(case)


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION_SLOW, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_schemathesis_deeper(case: Any) -> None:
    """The same checks, more examples, new ones each run (python -m pytest -m slow)."""
    _check(case)


@pytest.mark.parametrize("path", ["/api/v1/transactions", "/sim/v1/clock",
                                  "/issuer-webhooks/{issuerId}"])
def test_schemathesis_loaded_both_surfaces(path: str) -> None:
    assert path in document()["paths"]


# Schemathesis, stateful: the document's links chain created resources to their operations --
STATEFUL_STEPS = 6
STATEFUL_EXAMPLES = 8
STATEFUL_EXAMPLES_SLOW = 150


def test_the_document_links_created_resources_to_their_operations() -> None:
    paths = document()["paths"]
    created = paths["/api/v1/transactions"]["post"]["responses"]["201"]["links"]
    assert {link["operationId"] for link in created.values()} == {
        operation_id("GET", "/api/v1/transactions/{id}"),
        operation_id("POST", "/api/v1/transactions/{id}/cancel"),
        operation_id("GET", "/api/v1/transactions/{id}/recovery-status")}
    page = paths["/api/v1/transactions"]["get"]["responses"]["200"]["links"]["nextPage"]
    assert page["parameters"] == {"query.cursor": "$response.body#/meta/nextCursor"}


def _workflow() -> Any:
    api_only = schemathesis.openapi.from_asgi(
        "/openapi.json", create_app(ServeOptions(operator_token=TOKEN))).include(
        path_regex="^/api/v1/(transactions|webhooks|sandbox/agents)")

    class Workflow(api_only.as_state_machine()):  # type: ignore[misc]
        """A fresh world per run; each call with the credential its route takes."""

        def setup(self) -> None:
            self.app, self.cast = _fresh()

        def before_call(self, case: Any) -> None:
            """Creations get a valid body (the rest stays generated), so links have
            something to follow."""
            made = _VALID.get((case.method.upper(), case.path))
            if made is not None:
                case.body = made(self.cast)

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            token = self.cast["member_admin"] if "/sandbox/agents" in case.path \
                else self.cast["member_key"]
            return {"app": self.app, "headers": {"Authorization": f"Bearer {token}"}}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            STATEFUL_SEEN.append((case.operation.label, response.status_code))
            case.validate_response(response, checks=CHECKS)

    return Workflow


STATEFUL_SEEN: list[tuple[str, int]] = []
_VALID = {
    ("POST", "/api/v1/transactions"): lambda cast: {
        "useCase": "redeem", "paymentReference": "ST-1",
        "source": {"amount": "1.00", "asset": cast["asset"]},
        "target": {"amount": "1.00", "asset": {"code": "GBP"}}},
    ("POST", "/api/v1/webhooks"): lambda cast: {
        "url": "https://hooks.example.com/in", "events": ["transaction.settled"]},
    ("POST", "/api/v1/sandbox/agents"): lambda cast: {
        "capabilities": {"initiateTransaction": True, "cancelOwnTransaction": True},
        "expiresAt": "2026-01-02T00:00:00Z"},
}


def test_schemathesis_stateful_follows_the_links_without_a_5xx() -> None:
    """Issue 14, Proof: stateful Schemathesis through the document's links (bounded)."""
    STATEFUL_SEEN.clear()
    _workflow().run(settings=settings(max_examples=STATEFUL_EXAMPLES, deadline=None,
                                      stateful_step_count=STATEFUL_STEPS, derandomize=True,
                                      suppress_health_check=list(HealthCheck)))
    deep = {label for label, status in STATEFUL_SEEN if status < 300 and "{" in label}
    assert deep, STATEFUL_SEEN  # a linked operation on a created resource answered 2xx


@pytest.mark.slow
def test_schemathesis_stateful_deeper() -> None:
    _workflow().run(settings=settings(max_examples=STATEFUL_EXAMPLES_SLOW, deadline=None,
                                      stateful_step_count=12,
                                      suppress_health_check=list(HealthCheck)))


# request strings carry the API's own bounds (issue 14, finding 11) -------------------------
@pytest.mark.parametrize(("schema", "field", "length_max"), [
    ("AgentCreate", "expiresAt", 64), ("ArmRequest", "transactionId", 64),
    ("RewindRequest", "checkpoint", 64), ("ReceiverConformanceRequest", "url", 2048),
    ("ReceiverConformanceRequest", "secret", 1000), ("ReceiverConformanceRequest", "apiKey", 200),
    ("ParticipantCreate", "name", 200), ("ParticipantRef", "participantId", 64),
    ("ReceiverRequest", "url", 2048), ("ReserveArtifact", "keyId", 200),
    ("ReserveArtifact", "proof", 200)])
def test_a_request_string_the_api_refuses_empty_has_its_bounds(schema: str, field: str,
                                                               length_max: int) -> None:
    """Finding 11: no minLength where the API refuses empty strings (Schemathesis's
    positive-data check sent "" and the API answered 400)."""
    found = document()["components"]["schemas"][schema]["properties"][field]
    assert (found["minLength"], found["maxLength"]) == (1, length_max), found


@pytest.mark.parametrize("email", ["a@example.com", "a.b+c@mail.example.co", "@x.com",
                                   "a@b", "a b@example.com", "a..b@example.com",
                                   "é@example.com", "a@-x.com", "a@x.com@y.com"])
def test_the_email_pattern_is_the_apis_rule(email: str) -> None:
    from clearing_sim.service.team import _email_fault

    pattern = document()["components"]["schemas"]["InvitationRequest"]["properties"][
        "email"]["pattern"]
    assert (re.fullmatch(pattern, email) is not None) == (_email_fault(email) is None)


def test_the_title_is_short_and_the_long_words_are_the_description() -> None:
    """Issue 27: generators name a client after ``info.title`` (openapi-python-client made
    ``clearing_sim_the_clearing_service_api_and_the_simulators_operator_surface_client``)."""
    info = document()["info"]
    assert info["title"] == "clearing-sim"
    assert info["description"].startswith("The clearing service API and the simulator's "
                                          "operator surface.")
