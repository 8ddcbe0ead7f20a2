"""The reference gateway's routes: the contract's bodies, refusals as 4xx with an error code,
never a 5xx for any body (it is an entry point); provider states and the OAuth token."""

from __future__ import annotations

import json
import re
import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.gateway.reference import GatewaySettings, ReferenceIssuer, create_app
from clearing_sim.gateway.reference.app import Auth
from tests.http.conftest import Client

from .test_answers import json_values


class _Open:
    """``with _client() as client``: the app on one event loop, closed after."""

    def __init__(self, **auth: str) -> None:
        self.client = Client(create_app(ReferenceIssuer(GatewaySettings()), Auth(**auth)))

    def __enter__(self) -> Client:
        return self.client

    def __exit__(self, *exc: object) -> None:
        self.client.close()


def _client(**auth: str) -> _Open:
    return _Open(**auth)


def _burn(reference: str = "a" * 32, amount: str = "1.00") -> dict[str, str]:
    return {"idempotencyKey": str(uuid.UUID(int=1)), "reference": reference,
            "sourceWalletId": "w-1", "amount": amount, "assetCode": "GBPT"}


@settings(max_examples=60, deadline=None)
@given(st.one_of(json_values.map(json.dumps), st.text(max_size=100)),
       st.sampled_from(["/burn-instructions", "/mint-instructions", "/treasury/refunds",
                        "/instructions/x/execute", "/_pact/provider-states"]))
def test_no_body_makes_a_5xx(body: str, path: str) -> None:
    with _client() as client:
        response = client.post(path, content=body.encode())
    assert response.status_code < 500


def test_a_replay_answers_the_original_and_another_body_conflicts() -> None:
    with _client() as client:
        first = client.post("/burn-instructions", json=_burn())
        again = client.post("/burn-instructions", json=_burn())
        other = client.post("/burn-instructions", json=_burn(amount="2.00"))
    assert first.status_code == 201 and again.status_code == 200
    assert again.json() == first.json()
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"


def test_a_reference_longer_than_35_characters_is_refused() -> None:
    with _client() as client:
        response = client.post("/burn-instructions", json=_burn(reference="r" * 36))
    assert response.status_code == 400


def test_bearer_and_oauth_client_credentials() -> None:
    with _client(client_id="svc", client_secret="s") as client:
        assert client.post("/burn-instructions", json=_burn()).status_code == 401
        bad = client.post("/oauth/token", data={"grant_type": "client_credentials",
                                                "client_id": "svc", "client_secret": "x"})
        assert bad.status_code == 401
        token = client.post("/oauth/token", data={"grant_type": "client_credentials",
                                                  "client_id": "svc", "client_secret": "s"})
        assert token.status_code == 200 and token.json()["token_type"] == "Bearer"
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        assert client.post("/burn-instructions", json=_burn(), headers=headers).status_code \
            == 201


def test_an_unknown_provider_state_is_refused_with_the_known_ones() -> None:
    with _client() as client:
        response = client.post("/_pact/provider-states", json={"state": "be nice"})
    assert response.status_code == 400
    assert "instruction will be rejected" in response.json()["error"]["message"]


def test_the_bearer_guards_every_route_but_the_token_endpoint() -> None:
    """Issue 31 §7: ``issuer serve --bearer TOKEN`` left ``/_pact/provider-states`` open (no
    token: 200, and the next burn was REJECTED). Every route that reads or changes the
    issuer's state needs the bearer; only the OAuth token endpoint cannot."""
    state = {"state": "instruction will be rejected", "params": {"reference": "a" * 32}}
    calls = [("/burn-instructions", _burn()), ("/mint-instructions", {}),
             ("/treasury/refunds", {}), ("/instructions/x/execute", {}),
             ("/_pact/provider-states", state)]
    with _client(bearer="sesame") as client:
        for path, body in calls:
            assert client.post(path, json=body).status_code == 401, path
        assert client.get("/instructions/x").status_code == 401
        assert client.post("/oauth/token", data={}).status_code != 401
        allowed = {"Authorization": "Bearer sesame"}
        assert client.post("/_pact/provider-states", json=state, headers=allowed) \
            .status_code == 200
        burned = client.post("/burn-instructions", json=_burn(), headers=allowed)
    assert burned.status_code == 201 and burned.json()["status"] in ("RECEIVED", "REJECTED")


@settings(max_examples=80, deadline=None)
@given(st.one_of(
    st.sampled_from(["1e999999999", "1_000", "\u0661\u0660", "\uff11", " 1", "1 ", "+1", "-1",
                     "1e2", "Infinity", "NaN", "0x10", "1.", ".5", "01", "0", "0.00"]),
    st.text(alphabet="0123456789.e_+- \u0660\u0661\uff10", min_size=1, max_size=12)))
def test_an_amount_is_one_of_the_spec_decimal_strings_or_refused(amount: str) -> None:
    """Issue 31 §6: ``issuer serve`` accepted ``1e999999999``, ``1_000``, Arabic-Indic and
    full-width digits and ``" 1"``. An amount is accepted exactly when it is a positive plain
    decimal string (ASCII digits, one optional fraction), whatever ``Decimal`` would read."""
    plain = re.fullmatch(r"(0|[1-9][0-9]*)(\.[0-9]+)?", amount) is not None \
        and amount.isascii() and Decimal(amount) > 0
    with _client() as client:
        response = client.post("/burn-instructions", json=_burn(amount=amount))
    assert (response.status_code == 201) == plain, (amount, response.text)


@pytest.mark.parametrize("key", ["{00000000-0000-0000-0000-000000000001}",
                                 "urn:uuid:00000000-0000-0000-0000-000000000001",
                                 "00000000000000000000000000000001"])
def test_an_idempotency_key_is_a_uuid_in_its_one_form(key: str) -> None:
    with _client() as client:
        response = client.post("/burn-instructions", json={**_burn(), "idempotencyKey": key})
    assert response.status_code == 400
