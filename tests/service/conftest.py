"""Fixtures for the API tests: the example cast behind a ``ServiceAPI``, with credentials."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from attrs import define

from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request, Response
from clearing_sim.sim.examples import Cast, example_world
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.world import Environment, WorldConfig


@define
class Caller:
    """One participant's credentials: its sandbox API key and a tenant-admin portal JWT."""

    participant: Participant
    key: str
    admin: str


@define
class Service:
    """The example cast (Northbank; issuers by mode 1, 2, 3) plus Southbank, a second member
    with nothing, behind one ``ServiceAPI``."""

    cast: Cast
    api: ServiceAPI
    member: Caller
    other: Caller
    issuers: dict[int, Caller]

    @property
    def world(self) -> Any:
        return self.cast.world

    def call(self, method: str, target: str, token: str | None = None, json: Any = None, *,
             body: bytes | None = None, headers: dict[str, str] | None = None) -> Response:
        return self.api.handle(Request.build(method, target, token=token, json_body=json,
                                             body=body, headers=headers))

    def redeem_body(self, mode: int = 2, amount: str = "100.00",
                    reference: str = "INV-1") -> dict[str, Any]:
        asset = self.cast.asset(mode)
        return {"useCase": "redeem", "paymentReference": reference,
                "source": {"amount": amount,
                           "asset": {"code": asset.code, "issuer": asset.issuer}},
                "target": {"amount": amount, "asset": {"code": "GBP"}}}

    def swap_body(self, source: int = 2, target: int = 3, amount: str = "100.00",
                  reference: str = "SWP-1") -> dict[str, Any]:
        a, b = self.cast.asset(source), self.cast.asset(target)
        return {"useCase": "swap", "paymentReference": reference,
                "source": {"amount": amount, "asset": {"code": a.code, "issuer": a.issuer}},
                "target": {"amount": amount, "asset": {"code": b.code, "issuer": b.issuer}}}


def make_service(seed: int = 0, environment: Environment = Environment.SANDBOX) -> Service:
    cast = example_world(seed, config=WorldConfig(seed=seed, environment=environment))
    api = ServiceAPI(cast.world)

    def caller(participant: Participant) -> Caller:
        return Caller(participant, api.credentials.issue_api_key(participant.id)[1],
                      api.credentials.issue_session(participant.id))

    other = cast.world.add_member("Southbank", Decimal("0.00"))
    return Service(cast, api, caller(cast.member), caller(other),
                   {mode: caller(issuer) for mode, issuer in cast.issuers.items()})


@pytest.fixture
def svc() -> Service:
    return make_service()


@pytest.fixture
def prod() -> Service:
    return make_service(environment=Environment.PRODUCTION)
