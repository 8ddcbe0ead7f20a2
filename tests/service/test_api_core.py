"""The API layer's cross-cutting rules: envelopes, Service-Version, idempotency, refusals."""

from __future__ import annotations

import json
import uuid

import pytest

from clearing_sim.service.messages import Request, Response
from clearing_sim.service.versions import CURRENT_VERSION, SUPPORTED_VERSIONS
from tests.service.conftest import Service, make_service

TX = "/api/v1/transactions"


def _is_uuid(text: str) -> bool:
    return str(uuid.UUID(text)) == text


def test_success_envelope_is_data_and_meta_with_a_uuid_command_id(svc: Service) -> None:
    body = svc.call("POST", TX, svc.member.key, svc.redeem_body()).json()
    assert set(body) == {"data", "meta"}
    assert set(body["meta"]) == {"commandId"}
    assert _is_uuid(body["meta"]["commandId"])


def test_list_envelope_carries_next_cursor(svc: Service) -> None:
    body = svc.call("GET", TX, svc.member.key).json()
    assert body["meta"]["nextCursor"] is None
    assert _is_uuid(body["meta"]["commandId"])


def test_failure_envelope_is_errors_and_meta(svc: Service) -> None:
    body = svc.call("POST", TX, svc.member.key, {"useCase": "redeem"}).json()
    assert set(body) == {"errors", "meta"}
    assert _is_uuid(body["meta"]["commandId"])
    for error in body["errors"]:
        assert set(error) <= {"type", "code", "message", "param"}
        assert {"type", "code", "message"} <= set(error)


def test_each_request_gets_its_own_command_id(svc: Service) -> None:
    ids = {svc.call("GET", TX, svc.member.key).json()["meta"]["commandId"] for _ in range(5)}
    assert len(ids) == 5


@pytest.mark.parametrize("target", [TX, "/api/v1/nope", "/api/v2/transactions"])
def test_every_response_carries_service_version(svc: Service, target: str) -> None:
    """Versioning 2: every response, success or failure, carries Service-Version."""
    for token in (svc.member.key, None):
        assert svc.call("GET", target, token).header("Service-Version") == CURRENT_VERSION


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_a_request_may_pin_a_supported_version(svc: Service, version: str) -> None:
    response = svc.call("GET", TX, svc.member.key, headers={"Service-Version": version})
    assert response.status == 200
    assert response.header("Service-Version") == version


@pytest.mark.parametrize("version", ["2020-01-01", "latest", "", "v1", "2026-06-01x"])
def test_an_unsupported_version_is_400_naming_the_supported_list(svc: Service,
                                                                  version: str) -> None:
    response = svc.call("GET", TX, svc.member.key, headers={"Service-Version": version})
    assert response.status == 400
    error = response.json()["errors"][0]
    assert error["code"] == "unsupported_version"
    assert all(v in error["message"] for v in SUPPORTED_VERSIONS)


def test_a_delete_answers_204_with_no_body_and_still_a_version(svc: Service) -> None:
    created = svc.call("POST", "/api/v1/webhooks", svc.member.key,
                       {"url": "https://hooks.example.com/x",
                        "events": ["transaction.settled"]}).json()["data"]
    response = svc.call("DELETE", f"/api/v1/webhooks/{created['id']}", svc.member.key)
    assert response.status == 204
    assert response.body == b""
    assert response.header("Service-Version") == CURRENT_VERSION


# routes -------------------------------------------------------------------------------------
def test_an_unknown_route_is_404_route_not_found(svc: Service) -> None:
    response = svc.call("GET", "/api/v1/unknown", svc.member.key)
    assert response.status == 404
    assert response.json()["errors"][0]["code"] == "route_not_found"


def test_a_known_path_with_another_method_is_405(svc: Service) -> None:
    response = svc.call("PATCH", TX, svc.member.key)
    assert response.status == 405
    assert response.json()["errors"][0]["code"] == "method_not_allowed"


# idempotency ---------------------------------------------------------------------------------
def _initiate(svc: Service, key: str, amount: str = "100.00") -> tuple[int, bytes]:
    response = svc.call("POST", TX, svc.member.key, svc.redeem_body(amount=amount),
                        headers={"Idempotency-Key": key})
    return response.status, response.body


def test_same_key_same_body_replays_the_original_bytes_and_changes_nothing(svc: Service) -> None:
    first = _initiate(svc, "key-1")
    count = len(svc.world.transactions)
    svc.world.advance(60_000)  # the transaction moved on meanwhile
    assert _initiate(svc, "key-1") == first
    assert len(svc.world.transactions) == count


def test_same_key_different_body_is_409_idempotency_key_reused(svc: Service) -> None:
    _initiate(svc, "key-1")
    count = len(svc.world.transactions)
    status, body = _initiate(svc, "key-1", amount="5.00")
    assert status == 409
    assert b"idempotency_key_reused" in body
    assert len(svc.world.transactions) == count


def test_json_whitespace_and_key_order_do_not_make_another_body(svc: Service) -> None:
    import json
    body = svc.redeem_body()
    a = svc.call("POST", TX, svc.member.key, body=json.dumps(body).encode(),
                 headers={"Idempotency-Key": "k"})
    reordered = json.dumps(dict(reversed(list(body.items()))), indent=2).encode()
    b = svc.call("POST", TX, svc.member.key, body=reordered, headers={"Idempotency-Key": "k"})
    assert a.body == b.body


def test_keys_are_scoped_to_the_participant(svc: Service) -> None:
    _initiate(svc, "shared")
    other = svc.call("POST", "/api/v1/webhooks", svc.other.key,
                     {"url": "https://hooks.example.com/x", "events": ["transaction.settled"]},
                     headers={"Idempotency-Key": "shared"})
    assert other.status == 201


def test_a_key_of_256_characters_is_accepted_257_is_400(svc: Service) -> None:
    """Limits: Idempotency-Key up to 256 characters."""
    assert _initiate(svc, "k" * 256)[0] == 201
    count = len(svc.world.transactions)
    status, body = _initiate(svc, "k" * 257)
    assert status == 400
    assert b"idempotency_key_too_long" in body
    assert len(svc.world.transactions) == count


def test_a_refusal_is_not_stored_so_a_corrected_retry_with_the_key_runs(svc: Service) -> None:
    bad = svc.call("POST", TX, svc.member.key, {"useCase": "redeem"},
                   headers={"Idempotency-Key": "retry"})
    assert bad.status == 400
    assert _initiate(svc, "retry")[0] == 201


def test_the_key_is_retained_24_hours_of_virtual_time(svc: Service) -> None:
    first = _initiate(svc, "day")
    svc.world.advance(24 * 3600 * 1000 - 1)
    assert _initiate(svc, "day") == first
    svc.world.advance(1)
    status, body = _initiate(svc, "day")
    assert status == 201 and body != first[1]


def test_get_requests_ignore_the_idempotency_key(svc: Service) -> None:
    a = svc.call("GET", TX, svc.member.key, headers={"Idempotency-Key": "x" * 300})
    assert a.status == 200


# bad bodies ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("raw", "code"), [
    (b"{", "malformed_json"), (b"\xff\xfe", "malformed_json"), (b"[]", "invalid_body"),
    (b"null", "invalid_body"), (b"", "invalid_body"), (b"NaN", "malformed_json"),
    (b'{"a": Infinity}', "malformed_json"), (b"[" * 100_000, "malformed_json"),
    (b'{"n": 1' + b"0" * 5000 + b"}", "malformed_json"),
])
def test_a_body_that_is_not_a_json_object_is_400(svc: Service, raw: bytes, code: str) -> None:
    response = svc.call("POST", TX, svc.member.key, body=raw)
    assert response.status == 400
    assert response.json()["errors"][0]["code"] == code


def test_a_body_over_1_mib_is_413(svc: Service) -> None:
    response = svc.call("POST", TX, svc.member.key, body=b" " * (1 << 20) + b"{}")
    assert response.status == 413
    assert response.json()["errors"][0]["code"] == "payload_too_large"


def test_every_request_is_one_api_request_record(svc: Service) -> None:
    before = len(svc.world.log.select("api.request"))
    svc.call("GET", TX, svc.member.key)
    svc.call("GET", TX)
    records = svc.world.log.select("api.request")[before:]
    assert [(r["status"], r.get("codes")) for r in records] == [
        (200, None), (401, ["authentication_required"])]


def test_the_answer_payload_is_the_value_its_bytes_encode(svc: Service) -> None:
    """The driver reads ``payload`` instead of decoding the bytes: it must be that value."""
    created = svc.call("POST", TX, svc.member.key, svc.redeem_body())
    refused = svc.call("POST", TX, svc.member.key, {"useCase": "redeem"})
    listed = svc.call("GET", TX, svc.member.key)
    for response in (created, refused, listed):
        assert response.payload is not None
        assert response.payload == response.json()


def test_answers_not_encoded_are_the_encoded_answers_byte_for_byte() -> None:
    """``handle(request, encode=False)`` (the workload driver's door) leaves the bytes to be
    encoded when read: the same status, headers and bytes as the eager answer, and the same
    log, for a created, a refused and a listed answer."""
    twins = make_service(), make_service()
    answers: list[list[Response]] = [[], []]
    for twin, out, encode in zip(twins, answers, (True, False), strict=True):
        for method, body in (("POST", twin.redeem_body()), ("POST", {"useCase": "redeem"}),
                             ("GET", None)):
            request = Request.build(method, TX, token=twin.member.key, json_body=body)
            out.append(twin.api.handle(request, encode=encode))
    for eager, deferred in zip(*answers, strict=True):
        assert deferred.payload is not None and deferred.payload == eager.payload
        assert (deferred.status, deferred.headers, deferred.body) == (
            eager.status, eager.headers, eager.body)
    assert twins[0].world.log.digest() == twins[1].world.log.digest()


@pytest.mark.parametrize("name", ["Authorization", "authorization", "Idempotency-Key",
                                  "Service-Version"])
def test_a_header_the_api_reads_once_sent_twice_is_400_and_changes_nothing(
        svc: Service, name: str) -> None:
    """The first of two Authorization headers was the one authenticated: a proxy in front
    that reads the last would have authorised another caller than the service saw. A
    header the API takes one value of, sent twice, is 400 ``invalid_value`` naming it."""
    auth = f"Bearer {svc.member.key}"
    headers = (("Authorization", auth), ("Idempotency-Key", "k-1"),
               ("Service-Version", CURRENT_VERSION), (name, auth))
    before = len(svc.world.transactions)
    response = svc.api.handle(Request("POST", TX, (), headers,
                                      json.dumps(svc.redeem_body()).encode()))
    assert response.status == 400, response.body
    [error] = response.json()["errors"]
    assert (error["code"], error["param"]) == ("invalid_value", f"header {name}")
    assert len(svc.world.transactions) == before
