"""Webhooks are scoped to the transaction's parties (spec, Authentication 3; Events).

An event goes only to the active subscriptions of the initiating member and of the issuers
the transaction lists — the scope of ``GET /api/v1/transactions/{id}``. Another member's
receiver never gets it (its ``paymentReference`` included), nor an issuer the transaction
does not list; an issuer conformance run's synthetic transactions reach, among real
participants, only the issuer under test (docs/semantics.md, "The webhook channel").
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from clearing_sim.domain.lifecycle import EventType
from tests.service.conftest import Caller, Service

HOOKS = "/api/v1/webhooks"
TXS = "/api/v1/transactions"
ALL = [e.value for e in EventType]


def _subscribe(svc: Service, caller: Caller, name: str) -> str:
    response = svc.call("POST", HOOKS, caller.key,
                        {"url": f"https://hooks.{name}.example/clearing", "events": ALL})
    assert response.status == 201, response.body
    subscription_id: str = response.json()["data"]["id"]
    return subscription_id


def _received(svc: Service, subscription_id: str) -> list[dict[str, Any]]:
    """What the subscription's endpoint was sent: one decoded body per delivery."""
    return [json.loads(d.body) for d in svc.world.webhooks.deliveries_of(subscription_id)]


@pytest.mark.parametrize("use_case", ["redeem", "swap"])
def test_events_reach_the_initiator_and_listed_issuers_only(svc: Service,
                                                            use_case: str) -> None:
    """Authentication 3: member B's receiver gets nothing of member A's transaction, and an
    issuer not listed on it gets nothing either; the listed issuers get every event."""
    subs = {"north": _subscribe(svc, svc.member, "northbank"),
            "south": _subscribe(svc, svc.other, "southbank"),
            **{f"issuer{m}": _subscribe(svc, svc.issuers[m], f"issuer{m}") for m in (1, 2, 3)}}
    body = svc.redeem_body(2, "10.00", "SECRET-REF") if use_case == "redeem" \
        else svc.swap_body(2, 3, "10.00", "SECRET-REF")
    response = svc.call("POST", TXS, svc.member.key, body)
    assert response.status == 201, response.body
    tx_id = response.json()["data"]["id"]
    svc.world.run_all()
    listed = {"issuer2"} | ({"issuer3"} if use_case == "swap" else set())
    for name, subscription_id in subs.items():
        bodies = _received(svc, subscription_id)
        if name == "north" or name in listed:
            assert [b["type"] for b in bodies] == ["transaction.received",
                                                   "transaction.in_flight",
                                                   "transaction.settled"], name
            assert {b["data"]["transactionId"] for b in bodies} == {tx_id}
        else:
            assert bodies == [], f"{name} received another participant's events"
    assert "SECRET-REF" not in repr(_received(svc, subs["south"]))


def test_a_conformance_runs_synthetic_transactions_reach_only_the_issuer_under_test(
        svc: Service) -> None:
    """Issuer conformance: its synthetic transactions' events go to the issuer under test,
    never to the real members or to other issuers."""
    issuer = svc.issuers[2]
    others = {"north": _subscribe(svc, svc.member, "northbank"),
              "south": _subscribe(svc, svc.other, "southbank"),
              "issuer3": _subscribe(svc, svc.issuers[3], "issuer3")}
    mine = _subscribe(svc, issuer, "issuer2")
    response = svc.call("POST", f"/api/v1/issuers/{issuer.participant.id}/conformance/run",
                        issuer.admin)
    assert response.status == 202, response.body
    svc.world.run_until(svc.world.now_ms + 7_200_000)
    synthetic = {str(r["transactionId"]) for r in svc.world.log.select("conformance.transaction")}
    assert synthetic
    assert {b["data"]["transactionId"] for b in _received(svc, mine)} == synthetic
    for name, subscription_id in others.items():
        assert _received(svc, subscription_id) == [], name
