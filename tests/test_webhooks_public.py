"""The public helper ``clearing_sim.webhooks`` (spec, Events: Signature — "v1 = lowercase hex of
HMAC-SHA256 with key signingSecret over the string <t>.<raw request body>. Receivers compare
in constant time and reject when the absolute difference between current time and t exceeds
300 seconds"; guarantees 1 and 3 for the receivers)."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest

from clearing_sim import webhooks
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.service.messages import encode_json
from clearing_sim.webhooks import (
    NaiveReceiver,
    ReferenceReceiver,
    TransactionView,
    sign,
    signature_header,
    verify,
)
from tests.service.conftest import Service, make_service

#: Fixed test vectors: (secret, t, raw body, v1), each computed once with hmac/hashlib.
VECTORS = [
    ("whsec_test", 1_767_225_600, b'{"id":"evt_1"}',
     "45b40331de0325606dc5400202ade162460fbe48daf9401adfdcd0d7b4f35470"),
    ("whsec_" + "ab" * 32, 1_767_225_660, b"",
     "bede479c623b7277078f8d647f32f6e3be5e1100bece0ca62cd421ea4837639e"),
    ("whsec_é", 1, '{"a":"é"}'.encode(),
     "df1e4dab60faa0e6592a309fc85345bfa4350cda72181e342c37d633cd520407"),
]
SECRET, T, BODY, V1 = VECTORS[0]


@pytest.mark.parametrize(("secret", "t", "body", "v1"), VECTORS)
def test_signature_sign_and_header_match_the_fixed_vectors(secret: str, t: int, body: bytes,
                                                           v1: str) -> None:
    assert hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest() == v1
    assert sign(secret, body, t) == v1
    assert signature_header(secret, body, t) == f"t={t},v1={v1}"
    assert verify(secret, f"t={t},v1={v1}", body, now_s=t)


@pytest.mark.parametrize(("now_s", "ok"), [(T, True), (T + 300, True), (T - 300, True),
                                           (T + 301, False), (T - 301, False)])
def test_signature_replay_window_is_300_seconds_either_side(now_s: int, ok: bool) -> None:
    assert verify(SECRET, f"t={T},v1={V1}", BODY, now_s) is ok


def test_signature_tolerance_is_a_parameter() -> None:
    header = f"t={T},v1={V1}"
    assert verify(SECRET, header, BODY, T + 1_000, tolerance_s=1_000)
    assert not verify(SECRET, header, BODY, T + 11, tolerance_s=10)
    assert webhooks.REPLAY_WINDOW_S == 300


@pytest.mark.parametrize("header", [
    None, "", f"v1={V1}", f"t={T}", f"t=abc,v1={V1}", f"t={T},v1={V1.upper()}",
    f"t={T},v1={V1[:-1]}", f"t={T + 1},v1={V1}", f"t=-{T},v1={V1}", f"t={T},v1={'0' * 64}"])
def test_signature_malformed_or_wrong_headers_fail(header: str | None) -> None:
    assert not verify(SECRET, header, BODY, T)


def test_signature_tampered_body_or_wrong_secret_fails() -> None:
    assert not verify(SECRET, f"t={T},v1={V1}", BODY + b" ", T)
    assert not verify("whsec_other", f"t={T},v1={V1}", BODY, T)


def test_signature_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert verify(SECRET, f"t={T},v1={V1}", BODY, T)
    assert calls == [(V1, V1)]


# the receivers ---------------------------------------------------------------------------------
@pytest.fixture
def svc() -> Service:
    return make_service()


def _event(event_id: str, tx_id: str, status: str = "received",
           event_type: str = "transaction.received") -> bytes:
    return encode_json({"id": event_id, "type": event_type, "createdAt": "2026-01-01T00:00:00Z",
                        "data": {"transactionId": tx_id, "paymentReference": "INV-1",
                                 "lifecycleStatus": status, "terminal": False,
                                 "parked": False}})


def _headers(body: bytes, event_id: str, t: int = T, secret: str = SECRET) -> dict[str, str]:
    return {"Service-Signature": signature_header(secret, body, t),
            "Service-Webhook-Id": event_id, "Content-Type": "application/json"}


def _fetches(svc: Service) -> int:
    return sum(1 for r in svc.world.log.select("api.request", method="GET")
               if str(r["path"]).startswith("/api/v1/transactions/"))


def _reference(svc: Service, now_s: int = T) -> tuple[ReferenceReceiver, str]:
    response = svc.call("POST", "/api/v1/transactions", svc.member.key, svc.redeem_body())
    assert response.status == 201
    return ReferenceReceiver(svc.api, svc.member.key, SECRET, lambda: now_s), \
        response.json()["data"]["id"]


def test_reference_receiver_verifies_deduplicates_on_the_webhook_id_and_fetches(
        svc: Service) -> None:
    receiver, tx_id = _reference(svc)
    body = _event("evt_1", tx_id)
    assert receiver.handle(_headers(body, "evt_1"), body) == 200
    assert _fetches(svc) == 1
    assert receiver.views[tx_id] == TransactionView("received", False, False)
    assert receiver.handle(_headers(body, "evt_1"), body) == 200  # a duplicate: no fetch
    assert (receiver.accepted, receiver.duplicates, _fetches(svc)) == (1, 1, 1)
    # the same type for the same transaction under a new id is a new event (guarantee 1)
    body2 = _event("evt_2", tx_id)
    svc.world.advance(60_000)
    assert receiver.handle(_headers(body2, "evt_2"), body2) == 200
    assert _fetches(svc) == 2
    assert receiver.views[tx_id].lifecycle_status != "received"  # the resource, not the body


def test_reference_receiver_rejects_bad_signatures_and_stale_timestamps_without_fetching(
        svc: Service) -> None:
    receiver, tx_id = _reference(svc, now_s=T + 301)
    body = _event("evt_1", tx_id)
    assert receiver.handle(_headers(body, "evt_1"), body) == 401  # outside the window
    assert receiver.handle(_headers(body, "evt_1", t=T + 301, secret="whsec_x"), body) == 401
    assert receiver.handle({"Service-Webhook-Id": "evt_1"}, body) == 401
    assert (receiver.rejected, _fetches(svc), receiver.views) == (3, 0, {})
    assert receiver.handle(_headers(body, "evt_1", t=T + 301), body) == 200


def test_reference_receiver_answers_503_and_keeps_the_event_when_it_cannot_fetch(
        svc: Service) -> None:
    receiver = ReferenceReceiver(svc.api, svc.other.key, SECRET, lambda: T)  # out of scope
    response = svc.call("POST", "/api/v1/transactions", svc.member.key, svc.redeem_body())
    tx_id = response.json()["data"]["id"]
    body = _event("evt_1", tx_id)
    assert receiver.handle(_headers(body, "evt_1"), body) == 503
    assert (receiver.fetch_failures, receiver.views) == (1, {})
    assert "evt_1" not in receiver.seen  # a retry will be processed


def test_naive_receiver_deduplicates_on_type_and_transaction_and_trusts_the_payload() -> None:
    receiver = NaiveReceiver(SECRET, lambda: T)
    first, second = _event("evt_1", "tx"), _event("evt_2", "tx", status="in-flight")
    assert receiver.handle(_headers(first, "evt_1"), first) == 200
    assert receiver.handle(_headers(second, "evt_2"), second) == 200  # same type: dropped
    assert receiver.views["tx"] == TransactionView("received", False, False)
    assert (receiver.accepted, receiver.duplicates) == (1, 1)


def test_receivers_attach_to_a_simulated_url(svc: Service) -> None:
    url = "https://hooks.northbank.example/ref"
    created = svc.call("POST", "/api/v1/webhooks", svc.member.key,
                       {"url": url, "events": [e.value for e in EventType]}).json()["data"]
    receiver = ReferenceReceiver.on_world(svc.api, svc.member.key, created["signingSecret"])
    receiver.attach(svc.world, url)
    response = svc.call("POST", "/api/v1/transactions", svc.member.key, svc.redeem_body())
    tx_id = response.json()["data"]["id"]
    svc.world.run_all()
    api_view = svc.call("GET", f"/api/v1/transactions/{tx_id}", svc.member.key).json()["data"]
    assert receiver.views[tx_id] == TransactionView.of(api_view)
    assert receiver.accepted == len(svc.world.webhooks.events)


def test_a_receiver_without_a_replay_window_accepts_any_t_but_still_checks_the_mac() -> None:
    naive = NaiveReceiver(SECRET, lambda: T + 10**9, replay_window_s=None)
    body = _event("evt_1", "tx-1")
    assert naive.handle(_headers(body, "evt_1"), body) == 200
    assert naive.handle(_headers(body, "evt_2", secret="whsec_other"), body) == 401
    assert NaiveReceiver(SECRET, lambda: T + 301).handle(_headers(body, "evt_1"), body) == 401
