"""The door: /api/v1 over HTTP gives the in-process bytes; paths outside it; HTTP details."""

from __future__ import annotations

from typing import Any

import pytest

from clearing_sim.http.app import READ_LIMIT_BYTES
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request, encode_json
from clearing_sim.sim.world import World, WorldConfig
from tests.http.conftest import (
    OP,
    Client,
    Shim,
    add,
    issuer_body,
    member_body,
    redeem_body,
    stage_in_process,
)

HOOK = {"url": "https://hooks.example.com/in", "events": [
    "transaction.received", "transaction.in_flight", "transaction.settled",
    "transaction.cancelled", "transaction.parked", "transaction.failed"]}


def test_api_bytes_and_digest_equal_the_in_process_run(client: Client) -> None:
    """Spec door rule: for the same world, seed and requests, the same bytes and digest
    (a served world's key material is sealed with its operator token: the same token)."""
    world = World(WorldConfig(seed=3, key_secret=client.sim.key_secret))
    api = ServiceAPI(world)
    local = stage_in_process(world, api)
    remote = {"issuer": add(client, issuer_body()), "member": add(client, member_body())}
    assert remote["issuer"].key == local["issuer"].key
    asset = local["issuer"].asset
    assert asset is not None and remote["issuer"].asset == asset

    def both(method: str, target: str, who: str | None, body: Any = None,
             headers: dict[str, str] | None = None, raw: bytes | None = None,
             admin: bool = False) -> dict[str, Any]:
        party = local[who] if who else None
        token = (party.admin if admin else party.key) if party else None
        content = raw if raw is not None else (None if body is None else encode_json(body))
        sent = dict(headers or {})
        if content is not None:
            sent["Content-Type"] = "application/json"
        mine = api.handle(Request.build(method, target, token=token, body=content,
                                        headers=sent))
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        theirs = client.request(method, target, content=content, headers=sent)
        assert theirs.status_code == mine.status, (target, theirs.text, mine.body)
        assert theirs.content == mine.body, target
        for name in ("Content-Type", "Service-Version", "Idempotent-Replayed"):
            assert theirs.headers.get(name) == mine.header(name), (target, name)
        return dict(mine.json() or {})

    def advance(seconds: int) -> None:
        world.run_until(world.now_ms + seconds * 1000)
        client.advance(seconds)

    both("GET", "/api/v1/system/status", "member")
    hook = both("POST", "/api/v1/webhooks", "member", HOOK)["data"]["id"]
    key = {"Idempotency-Key": "redeem-1"}
    first = both("POST", "/api/v1/transactions", "member", redeem_body(asset), key)["data"]["id"]
    both("POST", "/api/v1/transactions", "member", redeem_body(asset), key)
    second = both("POST", "/api/v1/transactions", "member",
                  redeem_body(asset, "5.00", "INV-2"))["data"]["id"]
    advance(30)
    both("GET", f"/api/v1/transactions/{first}", "member")
    both("POST", f"/api/v1/transactions/{second}/cancel", "member")
    page = both("GET", "/api/v1/transactions?limit=1", "member")
    both("GET", f"/api/v1/transactions?limit=1&cursor={page['meta']['nextCursor']}", "member")
    advance(3600)
    both("GET", f"/api/v1/transactions/{first}", "issuer")
    both("GET", f"/api/v1/transactions/{first}/recovery-status", "member")
    both("GET", f"/api/v1/webhooks/{hook}", "member")
    both("GET", "/api/v1/sandbox/agents", "member", admin=True)
    both("POST", "/api/v1/transactions", "member", raw=b'{"useCase": ')
    both("POST", "/api/v1/transactions", None, redeem_body(asset))
    both("DELETE", f"/api/v1/transactions/{first}", "member")
    both("GET", "/api/v1/nowhere", "member")
    both("GET", "/api/v1/system/status", "member", headers={"Service-Version": "1999-01-01"})
    both("POST", "/api/v1/tools/integration-path", None,
         {"role": "participant", "custodyModel": "mpc", "chain": "evm"})
    digest = client.op("GET", "/sim/v1/digest").json()["data"]["digest"]
    assert digest == world.log.digest()


def test_a_path_outside_the_api_is_404_and_leaves_the_world_alone(client: Client) -> None:
    before = client.op("GET", "/sim/v1/digest").json()["data"]
    for path in ("/", "/favicon.ico", "/api/v1x", "/sim/v2/clock"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json()["errors"][0]["code"] == "route_not_found"
        assert response.headers["content-type"] == "application/json"
    assert client.op("GET", "/sim/v1/digest").json()["data"] == before


def test_405_names_the_allowed_methods(shim: Shim) -> None:
    tx = shim.initiate()
    response = shim.client.request("PATCH", f"/api/v1/transactions/{tx}",
                                   headers=shim.member.auth)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
    assert response.json()["errors"][0]["code"] == "method_not_allowed"
    response = shim.client.request("DELETE", "/sim/v1/clock", headers=OP)
    assert (response.status_code, response.headers["allow"]) == (405, "GET, HEAD")
    response = shim.client.post("/openapi.json")
    assert (response.status_code, response.headers["allow"]) == (405, "GET, HEAD")


def test_openapi_json_is_served(client: Client) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"] == "3.1.0"


def test_a_body_over_the_read_limit_is_413_without_reading_it_all(shim: Shim) -> None:
    response = shim.client.post("/api/v1/transactions", headers=shim.member.auth,
                                content=b" " * (READ_LIMIT_BYTES + 1))
    assert response.status_code == 413
    assert response.json()["errors"][0]["code"] == "payload_too_large"
    # The API's own limit (1 MiB) is the API's to answer, with its own message.
    response = shim.client.post("/api/v1/transactions", headers=shim.member.auth,
                                content=b" " * (2 << 20))
    assert response.status_code == 413
    assert "1048576" in response.json()["errors"][0]["message"]


def test_head_gets_headers_only(client: Client) -> None:
    response = client.request("HEAD", "/openapi.json")
    assert response.status_code == 200 and response.content == b""
    assert int(response.headers["content-length"]) > 1000


def test_any_path_gets_the_envelope_even_with_an_encoded_newline(shim: Shim) -> None:
    response = shim.client.get("/api/v1/webhooks/%7C%0A%1D", headers=shim.member.auth)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.headers["service-version"] == "2026-06-01"
    assert response.json()["errors"][0]["code"] == "webhook_not_found"


def test_a_defect_is_a_500_in_the_envelope_with_a_catalogued_code(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never bad input, but if the simulator fails the client still gets the envelope, with
    ``internal_error`` from the catalogue (so from the OpenAPI document), and no traceback."""
    def broken(request: Request) -> None:
        raise RuntimeError("a defect")

    monkeypatch.setattr(client.sim.api, "handle", broken)
    answer = client.get("/api/v1/transactions")
    assert answer.status_code == 500
    error = answer.json()["errors"][0]
    assert (error["type"], error["code"]) == ("api_error", "internal_error")
    assert "Traceback" not in answer.text and "a defect" not in answer.text
    document = client.get("/openapi.json").json()
    assert "internal_error" in document["components"]["schemas"]["Error"]["properties"][
        "code"]["enum"]
