"""The project's own servers read at most a bound of a request's body (the hostile-input
rule, for the reference gateway and the reference receiver that integrators run)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette

from clearing_sim.conformance.receiver_server import receiver_app
from clearing_sim.gateway.reference import GatewaySettings, ReferenceIssuer, create_app
from clearing_sim.gateway.reference.app import Auth
from clearing_sim.gateway.serving import ServerThread
from clearing_sim.webhooks import NaiveReceiver

_MIB = 1 << 20


def _chunks() -> Iterator[bytes]:  # 4 MiB with no Content-Length: chunked
    for _ in range(4):
        yield b"[" * _MIB


def _apps() -> list[tuple[str, Starlette, str]]:
    open_gateway = create_app(ReferenceIssuer(GatewaySettings()))
    with_oauth = create_app(ReferenceIssuer(GatewaySettings()),
                            Auth(client_id="svc", client_secret="s"))
    receiver = receiver_app(NaiveReceiver("whsec_x", lambda: 0))
    return [("gateway", open_gateway, "/burn-instructions"),
            ("token", with_oauth, "/oauth/token"), ("receiver", receiver, "/webhooks")]


@pytest.mark.parametrize("name", ["gateway", "token", "receiver"])
def test_a_body_past_the_bound_is_413_streamed_or_declared(name: str) -> None:
    """``await request.body()`` read whatever came, whole, before its size was looked at:
    a client posting gigabytes to ``issuer serve`` or ``receiver serve`` took that much
    memory. A streamed body is read up to the bound and one chunk; a declared length past
    it is refused unread."""
    [(_, app, path)] = [row for row in _apps() if row[0] == name]
    with ServerThread(app) as server, httpx.Client(base_url=server.base_url,
                                                   timeout=30) as client:
        streamed = client.post(path, content=_chunks())
        declared = client.post(path, content=b"{}",
                               headers={"Content-Length": "2"})  # honest, small: read
    assert streamed.status_code == 413, streamed.text
    assert declared.status_code != 413


def test_the_token_endpoint_answers_a_basic_credential_that_is_not_base64_401() -> None:
    """It was a binascii.Error: 500 from the reference gateway."""
    [(_, app, _)] = [row for row in _apps() if row[0] == "token"]
    with ServerThread(app) as server, httpx.Client(base_url=server.base_url,
                                                   timeout=30) as client:
        answer = client.post("/oauth/token", data={"grant_type": "client_credentials"},
                             headers={"Authorization": "Basic !!not base64!!"})
    assert answer.status_code == 401, answer.text
