"""The service's calls to a gateway: OAuth 2.0 client credentials (Authentication 8), the
token cached until it expires; answers over the size bound are refused."""

from __future__ import annotations

import time

import pytest

from clearing_sim.gateway.reference import GatewaySettings, ReferenceIssuer, create_app
from clearing_sim.gateway.reference.app import Auth
from clearing_sim.gateway.serving import ServerThread
from clearing_sim.gateway.transport import GatewayConfig, Transport, TransportProblem


def test_the_oauth_token_is_reused_until_it_expires_then_fetched_again() -> None:
    auth = Auth(client_id="svc", client_secret="s", token_ttl_s=2)  # reused ~1 s (leeway)
    with ServerThread(create_app(ReferenceIssuer(GatewaySettings()), auth)) as server:
        transport = Transport(GatewayConfig(server.base_url,
                                            token_url=server.base_url + "/oauth/token",
                                            client_id="svc", client_secret="s"))
        try:
            first = transport.request("GET", server.base_url + "/instructions/none")
            second = transport.request("GET", server.base_url + "/instructions/none")
            assert first.status == second.status == 404  # authenticated: not 401
            assert len(auth.issued) == 1
            time.sleep(1.1)
            third = transport.request("GET", server.base_url + "/instructions/none")
            assert third.status == 404 and len(auth.issued) == 2
        finally:
            transport.close()


def test_a_wrong_client_secret_is_a_plain_error_not_a_crash() -> None:
    auth = Auth(client_id="svc", client_secret="s")
    with ServerThread(create_app(ReferenceIssuer(GatewaySettings()), auth)) as server:
        transport = Transport(GatewayConfig(server.base_url,
                                            token_url=server.base_url + "/oauth/token",
                                            client_id="svc", client_secret="wrong"))
        try:
            call = transport.request("GET", server.base_url + "/instructions/none")
        finally:
            transport.close()
    assert call.status is None and call.error is not None
    assert "OAuth token request" in call.error and "401" in call.error


@pytest.mark.parametrize("bearer", ["t\u00f6ken", "two words", "", "line\nbreak"])
def test_a_bearer_that_cannot_travel_in_a_header_is_refused_at_set_up(bearer: str) -> None:
    """RFC 6750: a bearer token is header-safe characters; refused before any call."""
    with pytest.raises(TransportProblem, match="bearer token"):
        Transport(GatewayConfig("http://127.0.0.1:9", bearer=bearer))
