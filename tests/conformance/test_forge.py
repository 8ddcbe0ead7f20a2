"""The kit's deliveries against an independent verifier: stripe-python's
``WebhookSignature.verify_header`` implements the same scheme (``t=<unix s>,v1=<hex>``,
HMAC-SHA256 over ``<t>.<raw body>``; Stripe names the header ``Stripe-Signature``, so the
header's value is passed). Valid deliveries verify; the forged ones do not."""

from __future__ import annotations

import time

import pytest
import stripe

from clearing_sim import webhooks
from clearing_sim.conformance.forge import FORGED_KINDS, Delivery, forged, fresh, valid
from clearing_sim.domain.delivery import WebhookEvent
from clearing_sim.domain.lifecycle import EventType

SECRET = "whsec_forge_test"
EVENT = WebhookEvent(id="evt_1", type=EventType.IN_FLIGHT, created_at_ms=0,
                     created_at="2026-01-01T00:00:00.000Z",
                     transaction_id="f03848e1-1f13-4be1-80d9-d189cdc28f2f",
                     payment_reference="CONFORMANCE-A", lifecycle_status="in-flight",
                     terminal=False, parked=False)


def _stripe_accepts(delivery: Delivery) -> bool:
    try:
        stripe.WebhookSignature.verify_header(delivery.body, delivery.header(
            "Service-Signature"), SECRET, tolerance=webhooks.REPLAY_WINDOW_S)
    except stripe.SignatureVerificationError:
        return False
    return True


def _ours_accepts(delivery: Delivery, now_s: int) -> bool:
    return webhooks.verify(SECRET, delivery.header("Service-Signature"), delivery.body, now_s)


def test_a_valid_delivery_verifies_with_stripe_and_with_ours() -> None:
    now = int(time.time())
    delivery = valid(fresh(EVENT), SECRET, now)
    assert _stripe_accepts(delivery) and _ours_accepts(delivery, now)
    assert delivery.header("Service-Webhook-Id") == delivery.event_id
    assert f'"id":"{delivery.event_id}"'.encode() in delivery.body


@pytest.mark.parametrize("kind", [k for k in FORGED_KINDS if k != "timestamp-future"])
def test_every_forgery_fails_stripe_verification(kind: str) -> None:
    now = int(time.time())
    for delivery in forged(kind, EVENT, SECRET, now):
        assert not _stripe_accepts(delivery), (kind, delivery.header("Service-Signature"))
        assert not _ours_accepts(delivery, now)


def test_a_future_t_is_outside_the_spec_window_though_stripe_checks_only_age() -> None:
    """Stripe's tolerance bounds how old ``t`` may be; the spec's window is the absolute
    difference, so a ``t`` 360 s ahead is refused by the spec's rule (and by ours) while its
    MAC is right: Stripe accepts it, which shows the signature itself is valid."""
    now = int(time.time())
    [delivery] = forged("timestamp-future", EVENT, SECRET, now)
    assert _stripe_accepts(delivery)
    assert not _ours_accepts(delivery, now)


def test_each_forgery_is_a_new_event_id_and_an_unknown_kind_is_refused() -> None:
    ids = [d.event_id for k in FORGED_KINDS for d in forged(k, EVENT, SECRET, 1)]
    assert len(set(ids)) == len(ids) and EVENT.id not in ids
    with pytest.raises(ValueError, match="no such forgery"):
        forged("nope", EVENT, SECRET, 1)
