"""The operator surface /sim/v1: every route, its refusals, and its effect on the world."""

from __future__ import annotations

from typing import Any

import pytest

from clearing_sim.http.operator import OPERATOR_ROUTES
from clearing_sim.webhooks import verify
from tests.http.conftest import OP, TOKEN, Client, Shim, add, issuer_body, member_body

MODE_1_PROFILE = {"commitPoint": "ON_OBSERVATION", "custodyModel": "POOLED_ISSUER_WALLET",
                  "feedbackChannel": ["POLLABLE_RESOURCE"], "fiatLeg": "NUVANTE_SETTLES_RTGS",
                  "ledger": "stellar"}


def _error(response: Any) -> tuple[int, str, str | None]:
    error = response.json()["errors"][0]
    return response.status_code, error["code"], error.get("param")


def _path(template: str) -> str:
    return template.replace("{id}", "00000000-0000-4000-8000-000000000000").replace(
        "{issuerId}", "00000000-0000-4000-8000-000000000000")


@pytest.mark.parametrize("route", [r for r in OPERATOR_ROUTES if not r.public],
                         ids=lambda r: f"{r.method} {r.template}")
@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", f"Basic {TOKEN}",
                                           "sk_sandbox_x"])
def test_every_operator_route_needs_the_operator_token(client: Client, route: Any,
                                                       authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = client.request(route.method, _path(route.template), headers=headers, json={})
    assert response.status_code == 401
    code = "authentication_required" if authorization is None else "invalid_credential"
    assert response.json()["errors"][0] == {
        "type": "authentication_error", "code": code,
        "message": response.json()["errors"][0]["message"]}
    assert "commandId" in response.json()["meta"]


_NOT_CANONICAL = ["A%CC%8A", "%ED%A0%80", "%FF", "x%C3"]  # NFD Å, a surrogate, not UTF-8 (2)


@pytest.mark.parametrize("route", [r for r in OPERATOR_ROUTES if not r.public],
                         ids=lambda r: f"{r.method} {r.template}")
@pytest.mark.parametrize("text", _NOT_CANONICAL)
def test_without_the_token_a_non_canonical_query_is_401_not_400(client: Client, route: Any,
                                                                 text: str) -> None:
    """Issue 31 §6 (an unauthenticated ``/sim/v1/log?kind=A%CC%8A`` answered 400 before 401):
    docs/http.md's precedence puts the token before the request's text, on every route, for
    the query's names and values alike."""
    for query in (f"kind={text}", f"{text}=1"):
        response = client.request(route.method, f"{_path(route.template)}?{query}", json={})
        assert _error(response)[:2] == (401, "authentication_required"), query
        with_token = client.request(route.method, f"{_path(route.template)}?{query}",
                                    headers=OP, json={})
        assert _error(with_token)[0] == 400, query  # invalid_string (invalid_query: not UTF-8)


def test_health_is_the_one_public_operator_route() -> None:
    """Issue 27 §2: docs/http.md's one exception to 'every /sim/v1 route needs the token'."""
    assert [(r.method, r.template) for r in OPERATOR_ROUTES if r.public] == [
        ("GET", "/sim/v1/health")]


def test_an_api_key_is_not_the_operator_token(shim: Shim) -> None:
    response = shim.client.get("/sim/v1/clock", headers=shim.member.auth)
    assert _error(response) == (401, "invalid_credential", None)


def test_unknown_operator_paths_and_methods(client: Client) -> None:
    assert _error(client.op("GET", "/sim/v1/nothing")) == (404, "route_not_found", None)
    assert _error(client.op("POST", "/sim/v1/clock")) == (405, "method_not_allowed", None)


# participants -------------------------------------------------------------------------------
def test_participants_are_created_with_credentials_that_work(client: Client) -> None:
    response = client.op("POST", "/sim/v1/participants", issuer_body())
    assert response.status_code == 201
    issuer = response.json()["data"]
    assert list(issuer) == ["participantId", "participantKind", "participantName", "apiKey",
                            "apiKeyId", "adminToken", "assets"]
    assert issuer["participantKind"] == "stablecoin_issuer"
    assert issuer["apiKey"].startswith("sk_sandbox_")
    assert [a["code"] for a in issuer["assets"]] == ["GBPE"]
    member = add(client, member_body())
    status = client.get("/api/v1/system/status", headers=member.auth)
    assert status.status_code == 200
    admin = client.get("/api/v1/sandbox/agents", headers=member.admin_auth)
    assert admin.status_code == 200  # the adminToken is a tenant-admin JWT
    balances = client.op("GET", f"/sim/v1/balances?participantId={member.id}").json()["data"]
    assert balances == {"participantId": member.id, "wallets": {"GBPE": "1000.00"},
                        "rtgsBalanceGbp": "0.00", "rtgsEarmarkedGbp": "0.00"}
    listed = client.op("GET", "/sim/v1/participants").json()["data"]
    assert [p["participantName"] for p in listed] == ["Ether Pound", "Northbank"]


def test_an_issuer_with_its_own_profile_and_behaviour(client: Client) -> None:
    body = issuer_body("Stellar Sterling", "GBPS", "stellar", profile=MODE_1_PROFILE,
                       behaviour={"latency": {"request": "50ms",
                                              "approval": {"uniform": ["1s", "2s"]}},
                                  "outcomes": {"rejected": 0.25}, "holdAt": "APPROVED"})
    created = client.op("POST", "/sim/v1/participants", body)
    assert created.status_code == 201, created.text
    issuer_id = created.json()["data"]["participantId"]
    behaviour = client.op("GET", f"/sim/v1/operator/issuers/{issuer_id}/behaviour").json()[
        "data"]
    assert behaviour["latency"]["request"] == {"fixed": 50}
    assert behaviour["latency"]["approval"] == {"uniform": [1000, 2000]}
    assert behaviour["outcomes"] == {"rejected": 0.25, "failed": 0.0, "silence": 0.0}
    assert behaviour["holdAt"] == "APPROVED"  # votes first; the default is PENDING_APPROVAL
    profile = client.sim.world.participants[issuer_id].profile
    assert profile.mode.value == "MODE_1_DELEGATED_SIGNING"


@pytest.mark.parametrize(("body", "status", "code", "param"), [
    ({"kind": "bank", "name": "X"}, 400, "invalid_value", "kind"),
    ({"kind": "clearing_member"}, 400, "required", "name"),
    ({"kind": "clearing_member", "name": "X", "colour": "red"}, 400, "unknown_field", "colour"),
    ({"kind": "clearing_member", "name": "X", "assets": []}, 400, "field_not_applicable",
     "assets"),
    ({"kind": "stablecoin_issuer", "name": "X", "wallets": {}}, 400, "field_not_applicable",
     "wallets"),
    ({"kind": "clearing_member", "name": "X", "wallets": {"NOPE": "1.00"}}, 400,
     "unknown_asset", "wallets.NOPE"),
    ({"kind": "clearing_member", "name": "X", "wallets": {"GBPE": "1.001"}}, 400,
     "invalid_amount", "wallets.GBPE"),
    ({"kind": "clearing_member", "name": "X", "rtgsBalanceGbp": "-5"}, 400, "invalid_amount",
     "rtgsBalanceGbp"),
    ({"kind": "stablecoin_issuer", "name": "X", "assets": [{"code": "A$", "ledger": "evm"}]},
     400, "invalid_value", "assets[0].code"),
    ({"kind": "stablecoin_issuer", "name": "X", "assets": [{"code": "AB", "ledger": "evm"}],
      "profile": MODE_1_PROFILE}, 400, "invalid_value", "assets[0].ledger"),
    ({"kind": "stablecoin_issuer", "name": "X", "profile": {"commitPoint": "SOMETIME"}}, 400,
     "invalid_value", "profile.commitPoint"),
    ({"kind": "stablecoin_issuer", "name": "X", "behaviour": {"outcomes": {"failed": 2}}},
     400, "invalid_value", "behaviour.outcomes.failed"),
    ({"kind": "stablecoin_issuer", "name": "X",
      "behaviour": {"outcomes": {"failed": 0.6, "rejected": 0.6}}}, 400, "invalid_value",
     "behaviour.outcomes"),
    ({"kind": "stablecoin_issuer", "name": "X", "behaviour": {"latency": {"ack": "soon"}}},
     400, "invalid_value", "behaviour.latency.ack"),
    ({"kind": "stablecoin_issuer", "name": "X", "behaviour": {"holdAt": "EXECUTING"}},
     400, "invalid_value", "behaviour.holdAt"),
    ({"kind": "stablecoin_issuer", "name": "X", "behaviour": {"holdAt": 2}},
     400, "invalid_type", "behaviour.holdAt"),
    ({"kind": "clearing_member", "name": " northbank "}, 409, "organisation_name_taken", "name"),
])
def test_a_bad_participant_is_refused_and_changes_nothing(shim: Shim, body: dict[str, Any],
                                                         status: int, code: str,
                                                         param: str | None) -> None:
    before = shim.client.op("GET", "/sim/v1/digest").json()["data"]
    response = shim.client.op("POST", "/sim/v1/participants", body)
    assert _error(response) == (status, code, param), response.text
    assert shim.client.op("GET", "/sim/v1/digest").json()["data"] == before


def test_sessions_and_api_keys(shim: Shim) -> None:
    response = shim.client.op("POST", "/sim/v1/sessions", {"participantId": shim.member.id})
    assert response.status_code == 201
    session = response.json()["data"]
    assert session["expiresAt"] == "2026-01-01T08:00:00.000Z"
    headers = {"Authorization": f"Bearer {session['token']}"}
    assert shim.client.get("/api/v1/sandbox/agents", headers=headers).status_code == 200
    response = shim.client.op("POST", "/sim/v1/api-keys", {"participantId": shim.issuer.id})
    key = response.json()["data"]["apiKey"]
    assert response.status_code == 201
    headers = {"Authorization": f"Bearer {key}"}
    assert shim.client.get("/api/v1/system/status", headers=headers).status_code == 200
    missing = shim.client.op("POST", "/sim/v1/sessions", {"participantId": "nobody"})
    assert _error(missing) == (404, "participant_not_found", "participantId")
    assert _error(shim.client.op("POST", "/sim/v1/sessions", {})) == (400, "required",
                                                                      "participantId")


# operator fixes and behaviours ------------------------------------------------------------
def _park(shim: Shim) -> str:
    tx = shim.initiate()
    armed = shim.client.post("/api/v1/conformance/run", headers=shim.member.admin_auth,
                             json={"scenario": "failed", "transactionId": tx})
    assert armed.status_code == 200, armed.text
    shim.client.advance(3600)
    return tx


def test_resolve_a_parked_transaction(shim: Shim) -> None:
    tx = _park(shim)
    data = shim.client.get(f"/api/v1/transactions/{tx}", headers=shim.member.auth).json()["data"]
    assert (data["lifecycleStatus"], data["parked"]) == ("failed", True)
    response = shim.client.op("POST", f"/sim/v1/operator/transactions/{tx}/resolve")
    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["id"], data["lifecycleStatus"], data["parked"]) == (tx, "in-flight", False)
    again = shim.client.op("POST", f"/sim/v1/operator/transactions/{tx}/resolve")
    assert _error(again) == (409, "not_parked", None)
    shim.client.advance(3600)
    data = shim.client.get(f"/api/v1/transactions/{tx}", headers=shim.member.auth).json()["data"]
    assert data["lifecycleStatus"] == "settled"


def test_resolve_an_unknown_or_unparked_transaction(shim: Shim) -> None:
    unknown = shim.client.op("POST", "/sim/v1/operator/transactions/nope/resolve")
    assert _error(unknown) == (404, "transaction_not_found", None)
    tx = shim.initiate()
    assert _error(shim.client.op("POST", f"/sim/v1/operator/transactions/{tx}/resolve")) == (
        409, "not_parked", None)


def test_issuer_behaviour_sets_outcomes(shim: Shim) -> None:
    path = f"/sim/v1/operator/issuers/{shim.issuer.id}/behaviour"
    response = shim.client.op("PUT", path, {"outcomes": {"rejected": 1}})
    assert response.status_code == 200
    assert response.json()["data"]["outcomes"]["rejected"] == 1.0
    assert response.json()["data"]["latency"]["refund"] == {"fixed": 2000}  # defaults again
    tx = shim.initiate()
    shim.client.advance(3600)
    data = shim.client.get(f"/api/v1/transactions/{tx}", headers=shim.member.auth).json()["data"]
    assert (data["lifecycleStatus"], data["parked"]) == ("failed", False)
    assert shim.client.op("GET", path).json()["data"] == response.json()["data"]


def test_issuer_behaviour_refusals(shim: Shim) -> None:
    member = f"/sim/v1/operator/issuers/{shim.member.id}/behaviour"
    assert _error(shim.client.op("PUT", member, {})) == (404, "participant_not_found", None)
    unknown = "/sim/v1/operator/issuers/nobody/behaviour"
    assert _error(shim.client.op("GET", unknown)) == (404, "participant_not_found", None)
    bare = shim.client.op("POST", "/sim/v1/participants",
                          {"kind": "stablecoin_issuer", "name": "No Profile Yet"})
    bare_id = bare.json()["data"]["participantId"]
    path = f"/sim/v1/operator/issuers/{bare_id}/behaviour"
    assert _error(shim.client.op("PUT", path, {})) == (409, "profile_required", None)
    issuer = f"/sim/v1/operator/issuers/{shim.issuer.id}/behaviour"
    bad = shim.client.op("PUT", issuer, {"latency": {"ack": {"lognormal": {"median": "1s",
                                                                            "sigma": 99}}}})
    assert _error(bad) == (400, "invalid_value", "latency.ack")
    assert _error(shim.client.op("PUT", issuer, {"mood": "grumpy"})) == (400, "unknown_field",
                                                                          "mood")


# receivers and deliveries -------------------------------------------------------------------
def _subscribe(shim: Shim, url: str = "https://hooks.example.com/n",
               events: tuple[str, ...] = ("transaction.settled",)) -> dict[str, Any]:
    response = shim.client.post("/api/v1/webhooks", headers=shim.member.auth,
                                json={"url": url, "events": list(events)})
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


def test_a_failing_receiver_then_recovery_shows_in_deliveries(shim: Shim) -> None:
    hook = _subscribe(shim)
    response = shim.client.op("PUT", "/sim/v1/receivers", {
        "url": hook["url"], "status": 503, "until": "2026-01-01T00:03:00Z", "latencyMs": 40})
    assert response.status_code == 200
    assert response.json()["data"] == {"url": hook["url"], "status": 503,
                                       "until": "2026-01-01T00:03:00.000Z", "latencyMs": 40,
                                       "lossRate": 0.0, "duplicateRate": 0.0}
    tx = shim.initiate()
    shim.client.advance(3600)
    attempts = shim.client.op("GET", f"/sim/v1/deliveries?transactionId={tx}").json()["data"]
    assert [a["outcome"] for a in attempts] == ["failed", "failed", "delivered"]
    assert [a["response"] for a in attempts] == [{"status": 503}, {"status": 503},
                                                 {"status": 200}]
    first = attempts[0]
    assert (first["eventType"], first["subscriptionId"], first["attempt"]) == (
        "transaction.settled", hook["id"], 1)
    assert first["nextAttemptAt"] == attempts[1]["at"]
    body = first["request"]["body"].encode()
    t = int(first["request"]["headers"]["Service-Signature"].split(",")[0][2:])
    assert verify(hook["signingSecret"], first["request"]["headers"]["Service-Signature"], body,
                  t)
    only = shim.client.op("GET", f"/sim/v1/deliveries?subscriptionId={hook['id']}")
    assert len(only.json()["data"]) == 3
    assert shim.client.op("GET", "/sim/v1/deliveries?subscriptionId=wh_x").json()["data"] == []


def test_a_lossy_network_shows_lost_attempts(shim: Shim) -> None:
    hook = _subscribe(shim)
    shim.client.op("PUT", "/sim/v1/receivers", {"url": hook["url"], "status": 200,
                                                "lossRate": 1})
    shim.initiate()
    shim.client.advance(600)
    attempts = shim.client.op("GET", "/sim/v1/deliveries").json()["data"]
    assert attempts and all(a["outcome"] == "lost" and a["response"] is None
                            for a in attempts)


@pytest.mark.parametrize(("body", "code", "param"), [
    ({"status": 503}, "required", "url"),
    ({"url": "https://h.example.com", "status": 42}, "invalid_value", "status"),
    ({"url": "https://h.example.com", "status": 503, "until": "noon"}, "invalid_timestamp",
     "until"),
    ({"url": "https://h.example.com", "status": 503, "lossRate": 1.5}, "invalid_value",
     "lossRate"),
    ({"url": "https://h.example.com", "status": 503, "latencyMs": -1}, "invalid_value",
     "latencyMs"),
])
def test_a_bad_receiver_is_400(client: Client, body: dict[str, Any], code: str,
                               param: str) -> None:
    assert _error(client.op("PUT", "/sim/v1/receivers", body)) == (400, code, param)


def test_deliveries_and_balances_refuse_unknown_queries(shim: Shim) -> None:
    assert _error(shim.client.op("GET", "/sim/v1/deliveries?tx=1")) == (400, "invalid_query",
                                                                        "tx")
    assert _error(shim.client.op("GET", "/sim/v1/balances")) == (400, "invalid_query",
                                                                 "participantId")
    assert _error(shim.client.op("GET", "/sim/v1/balances?participantId=x")) == (
        404, "participant_not_found", "participantId")


# the log, the digest, reset -----------------------------------------------------------------
def test_the_log_pages_and_filters(shim: Shim) -> None:
    shim.initiate()
    shim.client.advance(60)
    response = shim.client.op("GET", "/sim/v1/log?limit=5")
    page = response.json()
    assert [r["seq"] for r in page["data"]] == [0, 1, 2, 3, 4]
    assert page["data"][0]["kind"] == "world.created"
    assert page["meta"]["nextCursor"] == "5"
    states = shim.client.op("GET", "/sim/v1/log?kind=transaction.state").json()["data"]
    assert [r["fields"]["event"] for r in states] == ["transaction.received",
                                                      "transaction.in_flight",
                                                      "transaction.settled"]
    family = shim.client.op("GET", "/sim/v1/log?kind=saga.&limit=1000").json()
    assert family["data"] and all(r["kind"].startswith("saga.") for r in family["data"])
    assert family["meta"]["nextCursor"] is None
    tail = shim.client.op("GET", f"/sim/v1/log?cursor={states[-1]['seq']}&limit=1").json()
    assert tail["data"][0]["seq"] == states[-1]["seq"]
    for query, code in (("cursor=x", "invalid_cursor"), ("limit=0", "invalid_query"),
                        ("limit=1001", "invalid_query"), ("since=1", "invalid_query")):
        assert _error(shim.client.op("GET", f"/sim/v1/log?{query}"))[1] == code


def test_digest_and_reset(shim: Shim) -> None:
    shim.initiate()
    shim.client.advance(60)
    digest = shim.client.op("GET", "/sim/v1/digest").json()["data"]
    assert len(digest["digest"]) == 64 and digest["seed"] == 3
    reset = shim.client.op("POST", "/sim/v1/reset", {"seed": 9})
    assert reset.status_code == 200
    data = reset.json()["data"]
    assert (data["seed"], data["clock"]["nowMs"], data["participants"]) == (9, 0, [])
    assert shim.client.op("GET", "/sim/v1/participants").json()["data"] == []
    assert shim.client.get("/api/v1/system/status", headers=shim.member.auth).status_code == 401
    again = shim.client.op("POST", "/sim/v1/reset")
    assert again.json()["data"]["seed"] == 9  # no seed: the current one
    assert _error(shim.client.op("POST", "/sim/v1/reset", {"seed": "9"})) == (
        400, "invalid_type", "seed")


def test_same_requests_after_reset_give_the_same_digest(client: Client) -> None:
    def run() -> str:
        add(client, issuer_body())
        member = add(client, member_body())
        client.post("/api/v1/transactions", headers=member.auth, json={
            "useCase": "redeem", "paymentReference": "R", "source": {
                "amount": "1.00", "asset": client.op("GET", "/sim/v1/participants").json()[
                    "data"][0]["assets"][0]},
            "target": {"amount": "1.00", "asset": {"code": "GBP"}}})
        client.advance(120)
        return str(client.op("GET", "/sim/v1/digest").json()["data"]["digest"])

    first = run()
    client.op("POST", "/sim/v1/reset", {"seed": 3})
    assert run() == first


def test_operator_answers_use_the_api_envelope(client: Client) -> None:
    response = client.get("/sim/v1/clock", headers=OP)
    body = response.json()
    assert set(body) == {"data", "meta"} and set(body["meta"]) == {"commandId"}
    assert response.headers["content-type"] == "application/json"


@pytest.mark.parametrize("raw", [b"\x0c", b"\x0b", b" \x0c\n", b"\x1c"])
def test_a_reset_whose_body_is_not_json_is_refused_and_resets_nothing(shim: Shim,
                                                                      raw: bytes) -> None:
    """Issue 31 §6: ``POST /sim/v1/reset`` with the body ``\\x0c`` was read as no body and
    reset the world. Only nothing (or JSON's whitespace) is no body."""
    shim.initiate()
    before = shim.client.op("GET", "/sim/v1/digest").json()["data"]["digest"]
    response = shim.client.post("/sim/v1/reset", headers=OP, content=raw)
    assert _error(response)[:2] == (400, "malformed_json")
    assert shim.client.op("GET", "/sim/v1/digest").json()["data"]["digest"] == before


@pytest.mark.parametrize("route", OPERATOR_ROUTES, ids=lambda r: f"{r.method} {r.template}")
def test_every_operator_route_refuses_a_query_parameter_it_does_not_take(client: Client,
                                                                         route: Any) -> None:
    """Issue 31 §6, the class: the door reads the query against the route's ``query`` (POST
    /sim/v1/reset ignored any query; so did every route that forgot to look)."""
    before = client.op("GET", "/sim/v1/digest").json()["data"]["digest"]
    response = client.request(route.method, f"{_path(route.template)}?unknownThing=1",
                              headers=OP, json={})
    assert _error(response) == (400, "invalid_query", "unknownThing")
    assert client.op("GET", "/sim/v1/digest").json()["data"]["digest"] == before


def test_the_published_query_parameters_are_the_ones_each_operator_route_takes() -> None:
    from clearing_sim.http.openapi import OPERATOR_OPERATIONS
    for route in OPERATOR_ROUTES:
        operation = OPERATOR_OPERATIONS[(route.method, route.template)]
        assert sorted(name for name, _, _ in operation.query) == sorted(route.query), route
