"""Webhook subscriptions through the API (spec, "Webhooks", "Webhook subscription", "Events",
Limits "Webhook URL: HTTPS and public address only")."""

from __future__ import annotations

import re
from typing import Any

import pytest

from clearing_sim.domain.lifecycle import EventType
from clearing_sim.domain.parties import Capability
from clearing_sim.service import webhooks
from clearing_sim.service.messages import Response
from tests.service.conftest import Service, make_service

HOOKS = "/api/v1/webhooks"
URL = "https://hooks.northbank.example/clearing"
ALL_EVENTS = [e.value for e in EventType]
FIELDS = ["id", "url", "events", "description", "status", "createdAt", "lastDeliveryAt",
          "lastSuccessAt", "failingSince", "disableAt", "disabledAt", "pendingDeliveries"]


def _create(svc: Service, token: str | None = None, **body: Any) -> Response:
    body.setdefault("url", URL)
    body.setdefault("events", ["transaction.settled"])
    return svc.call("POST", HOOKS, token or svc.member.key, body)


def _created(svc: Service, token: str | None = None, **body: Any) -> dict[str, Any]:
    response = _create(svc, token, **body)
    assert response.status == 201, response.body
    return response.json()["data"]


def _errors(response: Response) -> list[tuple[str | None, str]]:
    return [(e.get("param"), e["code"]) for e in response.json()["errors"]]


# create --------------------------------------------------------------------------------------
def test_create_is_201_with_the_subscription_and_its_signing_secret(svc: Service) -> None:
    svc.world.advance(90_000)
    data = _created(svc, events=["transaction.parked", "transaction.settled"])
    assert list(data) == [*FIELDS, "signingSecret"]
    assert re.fullmatch(r"wh_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                        data["id"])
    assert data["url"] == URL
    assert data["events"] == ["transaction.parked", "transaction.settled"]  # request order
    assert (data["description"], data["status"]) == (None, "active")
    assert (data["createdAt"], data["lastDeliveryAt"]) == ("2026-01-01T00:01:30.000Z", None)
    assert re.fullmatch(r"whsec_[0-9a-f]{64}", data["signingSecret"])


def test_create_keeps_the_description(svc: Service) -> None:
    assert _created(svc, description="ops pager")["description"] == "ops pager"
    assert _created(svc, description="d" * 256)["description"] == "d" * 256


def test_the_subscription_lives_in_the_world_and_is_logged_without_its_secret(
        svc: Service) -> None:
    data = _created(svc, description="ops")
    subscription = svc.world.subscriptions.get(data["id"])
    assert subscription is not None and subscription.active
    assert subscription.participant_id == svc.member.participant.id
    assert subscription.signing_secret == data["signingSecret"]
    [record] = svc.world.log.select("webhook.subscribed")
    assert dict(record.fields) == {"subscriptionId": data["id"],
                                   "participantId": svc.member.participant.id, "url": URL,
                                   "events": ["transaction.settled"], "description": "ops"}
    assert data["signingSecret"] not in "".join(svc.world.log.lines())


def test_the_events_array_accepts_exactly_the_six_public_types(svc: Service) -> None:
    """Events: "The subscription events array accepts exactly these six types"."""
    assert ALL_EVENTS == ["transaction.received", "transaction.in_flight",
                          "transaction.settled", "transaction.cancelled", "transaction.parked",
                          "transaction.failed"]
    assert _created(svc, events=ALL_EVENTS[::-1])["events"] == ALL_EVENTS[::-1]


@pytest.mark.parametrize(("events", "expected"), [
    ([], [("events", "invalid_value")]),
    (["transaction.refunded"], [("events[0]", "invalid_value")]),
    (["Transaction.Settled"], [("events[0]", "invalid_value")]),
    (["transaction.in-flight"], [("events[0]", "invalid_value")]),
    (["reserve.updated"], [("events[0]", "invalid_value")]),
    (["transaction.settled", "transaction.settled"], [("events[1]", "invalid_value")]),
    (["transaction.settled", 7, None], [("events[1]", "invalid_type"),
                                        ("events[2]", "invalid_type")]),
    ("transaction.settled", [("events", "invalid_type")]),
    ({"transaction.settled": True}, [("events", "invalid_type")]),
    (None, [("events", "required")]),
])
def test_events_must_be_a_non_empty_array_of_distinct_public_types(
        svc: Service, events: Any, expected: list[tuple[str, str]]) -> None:
    body: dict[str, Any] = {"url": URL}
    if events is not None:
        body["events"] = events
    response = svc.call("POST", HOOKS, svc.member.key, body)
    assert response.status == 400
    assert _errors(response) == expected


@pytest.mark.parametrize(("body", "expected"), [
    ({"events": ["transaction.settled"]}, ("url", "required")),
    ({"url": 42, "events": ["transaction.settled"]}, ("url", "invalid_type")),
    ({"url": "", "events": ["transaction.settled"]}, ("url", "invalid_url")),
    ({"url": URL, "events": ["transaction.settled"], "description": "d" * 257},
     ("description", "invalid_value")),
    ({"url": URL, "events": ["transaction.settled"], "description": " "},
     ("description", "invalid_value")),
    ({"url": URL, "events": ["transaction.settled"], "description": 5},
     ("description", "invalid_type")),
    ({"url": URL, "events": ["transaction.settled"], "secret": "mine"},
     ("secret", "unknown_field")),
    ({"url": URL, "events": ["transaction.settled"], "status": "active"},
     ("status", "unknown_field")),
])
def test_body_fields_are_checked_and_unknown_fields_refused(
        svc: Service, body: dict[str, Any], expected: tuple[str, str]) -> None:
    response = svc.call("POST", HOOKS, svc.member.key, body)
    assert response.status == 400
    assert _errors(response) == [expected]


def test_every_problem_is_listed_the_url_first(svc: Service) -> None:
    response = svc.call("POST", HOOKS, svc.member.key,
                        {"url": "http://x.example/", "events": [], "extra": 1})
    assert _errors(response) == [("url", "invalid_url"), ("events", "invalid_value"),
                                 ("extra", "unknown_field")]


# the URL rule ----------------------------------------------------------------------------------
@pytest.mark.parametrize("url", [
    "http://hooks.example.com/", "ftp://hooks.example.com/", "https://",
    "https:///no-host", "https://user:pass@hooks.example.com/", "https://hooks.example.com:0/",
    "https://2130706433/", "hooks.example.com/x", "https://hooks example.com/",
    "https://hooks.example.com/" + "p" * 2048,
])
def test_a_malformed_or_non_https_url_is_400_invalid_url(svc: Service, url: str) -> None:
    response = _create(svc, url=url)
    assert response.status == 400
    assert _errors(response) == [("url", "invalid_url")]


NOT_PUBLIC = {
    "https://127.0.0.1/": "a loopback address",
    "https://localhost/": "a loopback address",
    "https://api.localhost:8443/hook": "a loopback address",
    "https://10.0.0.5/": "a private address",
    "https://172.16.4.4/": "a private address",
    "https://172.31.0.1/": "a private address",
    "https://192.168.0.10/": "a private address",
    "https://169.254.169.254/": "a link-local address",
    "https://0.0.0.0/": "the unspecified address",
    "https://100.64.0.1/": "a shared address",
    "https://224.0.0.1/": "a multicast address",
    "https://240.0.0.1/": "a reserved address",
    "https://[::1]/": "a loopback address",
    "https://[fe80::1]/": "a link-local address",
    "https://[fc00::1]/": "a private (unique local) address",
    "https://[fd00:1::2]/": "a private (unique local) address",
    "https://[::]/": "the unspecified address",
    "https://[::ffff:10.0.0.1]/": "the IPv4-mapped form of 10.0.0.1, a private address",
    "https://[2002:7f00:1::]/": "the 6to4 form of 127.0.0.1, a loopback address",
    "https://[64:ff9b::c0a8:1]/": "the NAT64 form of 192.168.0.1, a private address",
}


@pytest.mark.parametrize("url", list(NOT_PUBLIC))
def test_a_url_reaching_a_non_public_address_is_400_url_not_public(svc: Service,
                                                                   url: str) -> None:
    response = _create(svc, url=url)
    assert response.status == 400
    [error] = response.json()["errors"]
    assert (error["param"], error["code"], error["type"]) == (
        "url", "url_not_public", "invalid_request_error")
    assert NOT_PUBLIC[url] in error["message"]


def test_a_name_the_worlds_dns_maps_to_a_private_address_is_refused(svc: Service) -> None:
    svc.world.dns.set("hooks.internal.example", ["10.20.30.40"])
    response = _create(svc, url="https://hooks.internal.example/cb")
    [error] = response.json()["errors"]
    assert error["code"] == "url_not_public"
    assert "resolves to 10.20.30.40, a private address" in error["message"]


def test_a_name_with_one_public_and_one_private_address_is_refused(svc: Service) -> None:
    svc.world.dns.set("split.example.com", ["93.184.215.14", "192.168.7.7"])
    response = _create(svc, url="https://split.example.com/cb")
    [error] = response.json()["errors"]
    assert error["code"] == "url_not_public"
    assert "192.168.7.7, a private address" in error["message"]


def test_public_names_and_addresses_are_accepted(svc: Service) -> None:
    svc.world.dns.set("hooks.mapped.example", ["198.51.99.4", "2606:4700::1111"])
    for url in ("https://hooks.example.com/cb",  # not in the table: the public default
                "https://hooks.mapped.example:8443/cb?x=1",
                "https://93.184.215.14/cb", "https://[2606:4700::1111]/cb"):
        assert _create(svc, url=url).status == 201, url


def test_the_dns_table_is_read_at_creation(svc: Service) -> None:
    """A name that moves to a private address is refused from then on."""
    assert _create(svc, url="https://moving.example.com/").status == 201
    svc.world.dns.set("moving.example.com", ["10.0.0.1"])
    assert _create(svc, url="https://moving.example.com/").status == 400


# a refusal changes nothing -------------------------------------------------------------------
@pytest.mark.parametrize("body", [
    {"url": "https://10.0.0.5/", "events": ["transaction.settled"]},
    {"url": "http://hooks.example.com/", "events": ["transaction.settled"]},
    {"url": URL, "events": []},
    {"url": URL, "events": ["transaction.settled", "transaction.settled"]},
    {"url": URL, "events": ["transaction.settled"], "extra": True},
])
def test_a_refused_create_changes_nothing_but_the_request_record(
        svc: Service, body: dict[str, Any]) -> None:
    _created(svc)
    size, records = len(svc.world.subscriptions), list(svc.world.log)
    response = svc.call("POST", HOOKS, svc.member.key, body,
                        headers={"Idempotency-Key": "refused"})
    assert response.status == 400
    assert len(svc.world.subscriptions) == size
    new = list(svc.world.log)[len(records):]
    assert list(svc.world.log)[:len(records)] == records
    assert [r.kind for r in new] == ["api.request"]
    assert len(svc.call("GET", HOOKS, svc.member.key).json()["data"]) == 1


# list and get ----------------------------------------------------------------------------------
def test_list_is_the_callers_subscriptions_oldest_first_without_secrets(svc: Service) -> None:
    first = _created(svc, url="https://a.example.com/")
    svc.world.advance(1_000)
    second = _created(svc, svc.member.admin, url="https://b.example.com/")
    _created(svc, svc.other.key, url="https://c.example.com/")
    response = svc.call("GET", HOOKS, svc.member.key)
    assert response.status == 200
    body = response.json()
    assert body["meta"]["nextCursor"] is None
    assert [item["id"] for item in body["data"]] == [first["id"], second["id"]]
    for item, created in zip(body["data"], (first, second), strict=True):
        assert list(item) == FIELDS
        assert item == {k: v for k, v in created.items() if k != "signingSecret"}
    assert first["signingSecret"].encode() not in response.body


@pytest.mark.parametrize("query", ["limit=10", "cursor=abc", "status=active"])
def test_the_list_takes_no_query_parameters(svc: Service, query: str) -> None:
    response = svc.call("GET", f"{HOOKS}?{query}", svc.member.key)
    assert response.status == 400
    assert _errors(response) == [(query.partition("=")[0], "invalid_query")]


def test_an_empty_list_is_200_with_no_items(svc: Service) -> None:
    body = svc.call("GET", HOOKS, svc.other.key).json()
    assert (body["data"], body["meta"]["nextCursor"]) == ([], None)


def test_get_is_the_subscription_without_its_secret(svc: Service) -> None:
    created = _created(svc, description="ops")
    response = svc.call("GET", f"{HOOKS}/{created['id']}", svc.member.key)
    assert response.status == 200
    data = response.json()["data"]
    assert list(data) == FIELDS
    assert data == {k: v for k, v in created.items() if k != "signingSecret"}
    assert b"signingSecret" not in response.body
    assert created["signingSecret"].encode() not in response.body


def test_the_wire_form_is_rendered_by_one_function(svc: Service) -> None:
    created = _created(svc)
    subscription = svc.world.subscriptions.get(created["id"])
    assert subscription is not None
    got = svc.call("GET", f"{HOOKS}/{created['id']}", svc.member.key).json()["data"]
    assert got == webhooks.subscription_wire(svc.world, subscription)


def test_last_delivery_at_renders_once_a_delivery_happened(svc: Service) -> None:
    created = _created(svc)
    subscription = svc.world.subscriptions.get(created["id"])
    assert subscription is not None
    subscription.last_delivery_at_ms = 61_000  # what the webhook channel will record
    got = svc.call("GET", f"{HOOKS}/{created['id']}", svc.member.key).json()["data"]
    assert got["lastDeliveryAt"] == "2026-01-01T00:01:01.000Z"


# scope -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_another_participants_subscription_is_404(svc: Service, method: str) -> None:
    created = _created(svc)
    response = svc.call(method, f"{HOOKS}/{created['id']}", svc.other.key)
    assert response.status == 404
    assert _errors(response) == [(None, "webhook_not_found")]
    assert svc.call("GET", f"{HOOKS}/{created['id']}", svc.member.key).status == 200
    assert svc.call("GET", HOOKS, svc.other.key).json()["data"] == []


@pytest.mark.parametrize("method", ["GET", "DELETE"])
@pytest.mark.parametrize("webhook_id", ["wh_00000000-0000-4000-8000-000000000000", "nope"])
def test_an_unknown_subscription_is_404(svc: Service, method: str, webhook_id: str) -> None:
    response = svc.call(method, f"{HOOKS}/{webhook_id}", svc.member.key)
    assert response.status == 404
    assert _errors(response) == [(None, "webhook_not_found")]


def test_issuers_manage_their_own_subscriptions_too(svc: Service) -> None:
    issuer = svc.issuers[2]
    created = _created(svc, issuer.key)
    assert [s["id"] for s in svc.call("GET", HOOKS, issuer.admin).json()["data"]] == [
        created["id"]]
    assert svc.call("GET", HOOKS, svc.member.key).json()["data"] == []


# delete ----------------------------------------------------------------------------------------
def test_delete_is_204_with_no_body_then_get_is_404_and_the_list_omits_it(svc: Service) -> None:
    kept = _created(svc, url="https://kept.example.com/")
    gone = _created(svc, url="https://gone.example.com/")
    response = svc.call("DELETE", f"{HOOKS}/{gone['id']}", svc.member.key)
    assert (response.status, response.body) == (204, b"")
    assert response.header("Content-Type") is None
    assert svc.call("GET", f"{HOOKS}/{gone['id']}", svc.member.key).status == 404
    listed = svc.call("GET", HOOKS, svc.member.key).json()["data"]
    assert [s["id"] for s in listed] == [kept["id"]]
    again = svc.call("DELETE", f"{HOOKS}/{gone['id']}", svc.member.key)
    assert _errors(again) == [(None, "webhook_not_found")]


def test_delete_takes_effect_at_once_and_is_logged(svc: Service) -> None:
    created = _created(svc)
    svc.world.advance(5_000)
    svc.call("DELETE", f"{HOOKS}/{created['id']}", svc.member.admin)
    subscription = svc.world.subscriptions.get(created["id"])
    assert subscription is not None  # still findable by the engine, for queued deliveries
    assert (subscription.active, subscription.deleted_at_ms) == (False, 5_000)
    assert svc.world.subscriptions.of(svc.member.participant.id) == []
    [record] = svc.world.log.select("webhook.deleted")
    assert dict(record.fields) == {"subscriptionId": created["id"],
                                   "participantId": svc.member.participant.id}


def test_delete_with_a_body_field_is_400_and_deletes_nothing(svc: Service) -> None:
    created = _created(svc)
    response = svc.call("DELETE", f"{HOOKS}/{created['id']}", svc.member.key, {"force": True})
    assert _errors(response) == [("force", "unknown_field")]
    assert svc.call("GET", f"{HOOKS}/{created['id']}", svc.member.key).status == 200


def test_rotation_is_delete_and_recreate_with_a_new_secret(svc: Service) -> None:
    old = _created(svc)
    svc.call("DELETE", f"{HOOKS}/{old['id']}", svc.member.key)
    new = _created(svc)
    assert new["id"] != old["id"]
    assert new["signingSecret"] != old["signingSecret"]


# idempotency, credentials, environments --------------------------------------------------------
def test_an_idempotent_replay_of_create_returns_the_same_bytes_and_creates_one(
        svc: Service) -> None:
    headers = {"Idempotency-Key": "hook-1"}
    first = svc.call("POST", HOOKS, svc.member.key,
                     {"url": URL, "events": ["transaction.settled"]}, headers=headers)
    svc.world.advance(60_000)
    again = svc.call("POST", HOOKS, svc.member.key,
                     {"events": ["transaction.settled"], "url": URL}, headers=headers)
    assert first.status == 201
    assert (again.status, again.body) == (first.status, first.body)
    assert len(svc.world.subscriptions) == 1
    assert len(svc.world.log.select("webhook.subscribed")) == 1
    other = svc.call("POST", HOOKS, svc.member.key,
                     {"url": URL, "events": ["transaction.failed"]}, headers=headers)
    assert _errors(other) == [("Idempotency-Key", "idempotency_key_reused")]


def test_an_idempotent_replay_of_delete_is_204_again(svc: Service) -> None:
    created = _created(svc)
    headers = {"Idempotency-Key": "del-1"}
    target = f"{HOOKS}/{created['id']}"
    assert svc.call("DELETE", target, svc.member.key, headers=headers).status == 204
    assert svc.call("DELETE", target, svc.member.key, headers=headers).status == 204
    assert len(svc.world.log.select("webhook.deleted")) == 1


def test_every_route_needs_webhooks_manage_from_a_key_or_an_admin() -> None:
    assert len(webhooks.ROUTES) == 4
    for route in webhooks.ROUTES:
        assert route.capabilities == (Capability.WEBHOOKS_MANAGE,)
        assert not route.public and not route.sandbox_only
        assert {c.value for c in route.credentials} == {"api_key", "tenant_admin"}


@pytest.mark.parametrize(("method", "target"), [
    ("POST", HOOKS), ("GET", HOOKS), ("GET", f"{HOOKS}/wh_x"), ("DELETE", f"{HOOKS}/wh_x")])
def test_without_a_credential_every_route_is_401(svc: Service, method: str,
                                                 target: str) -> None:
    assert svc.call(method, target, None).status == 401


def test_production_serves_the_same_routes(prod: Service) -> None:
    """Production has the same API surface (spec, intro); webhooks are not sandbox-only."""
    created = _created(prod)
    assert prod.call("GET", HOOKS, prod.member.key).json()["data"][0]["id"] == created["id"]
    assert prod.call("GET", f"{HOOKS}/{created['id']}", prod.member.key).status == 200
    assert _create(prod, url="https://127.0.0.1/").status == 400
    assert prod.call("DELETE", f"{HOOKS}/{created['id']}", prod.member.key).status == 204
    assert prod.call("GET", f"{HOOKS}/{created['id']}", prod.member.key).status == 404


def test_same_seed_gives_the_same_ids_and_secrets() -> None:
    first = _create(make_service(seed=5)).body
    assert _create(make_service(seed=5)).body == first
    assert _create(make_service(seed=6)).body != first
