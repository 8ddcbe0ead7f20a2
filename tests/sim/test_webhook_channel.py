"""The outgoing webhook channel on virtual time (spec, Events: delivery body, headers,
signature, guarantees 1, 4 and 5; Limits: retry schedule, auto-disable).

Every timing is checked to the millisecond (DESIGN.md, Fidelity). Receivers answer with a
fixed latency of 0 ms unless a test says otherwise, so an attempt's outcome is learned at the
millisecond it is sent.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from clearing_sim.domain.delivery import (
    DELIVERY_TIMEOUT_MS,
    DISABLE_AFTER_MS,
    RETRY_OFFSETS_MS,
    disable_due,
    is_success,
)
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.latency import Fixed
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.examples import Cast, example_world, redeem
from clearing_sim.sim.receivers import Arrival, ReceiverBehaviour
from clearing_sim.sim.subscriptions import Subscription, SubscriptionStatus
from clearing_sim.sim.webhook_channel import DeliveryStatus
from tests.sim.simkit import step_until

URL = "https://hooks.northbank.example/clearing"
OTHER_URL = "https://hooks.other.example/in"
HOUR_MS = 3_600_000
DOWN = ReceiverBehaviour.failing(500, latency=Fixed(0))


def _subscribe(cast: Cast, *events: EventType, url: str = URL) -> Subscription:
    return cast.world.subscriptions.create(cast.member.id, url, events or tuple(EventType))


def _redeem(cast: Cast, mode: int = 1, reference: str = "INV-0001") -> str:
    return cast.world.initiate(cast.member.id, redeem(cast.asset(mode), "10.00", reference)).id


def _attempts(cast: Cast, **match: Any) -> list[Record]:
    return cast.world.log.select("webhook.attempt", **match)


def _arrivals(cast: Cast) -> list[Arrival]:
    seen: list[Arrival] = []
    cast.world.webhooks.receivers.listen(seen.append)
    return seen


# the retry schedule ----------------------------------------------------------------------------
def test_rule_4_attempts_at_0_60_360_2160_9360_52560_138960_s_then_failed_and_no_eighth() -> None:
    """Guarantee 4: immediately, then 1 min, 5 min, 30 min, 2 h, 12 h, 24 h after the previous
    failed attempt; seven attempts, then the delivery is failed and retries stop."""
    cast = example_world(0)
    sub = _subscribe(cast, EventType.RECEIVED)
    cast.world.webhooks.set_receiver(URL, DOWN)
    cast.world.advance(5_000)
    _redeem(cast)
    cast.world.run_all()
    attempts = _attempts(cast)
    assert [r["sentAtMs"] for r in attempts] == [5_000 + off for off in RETRY_OFFSETS_MS]
    assert [off // 1000 for off in RETRY_OFFSETS_MS] == [0, 60, 360, 2160, 9360, 52560, 138960]
    assert [r["attempt"] for r in attempts] == [1, 2, 3, 4, 5, 6, 7]
    assert [r["nextAttemptAtMs"] for r in attempts] == [
        5_000 + off for off in RETRY_OFFSETS_MS[1:]] + [None]
    (failed,) = cast.world.log.select("webhook.delivery_failed")
    assert (failed.at_ms, failed["attempts"]) == (5_000 + 138_960_000, 7)
    (delivery,) = cast.world.webhooks.deliveries
    assert delivery.status is DeliveryStatus.FAILED and delivery.attempts == 7
    # one event's 38.6-hour schedule alone never disables (the 72 h must be spanned)
    assert sub.status is SubscriptionStatus.ACTIVE and sub.failing_since_ms == 5_000


def test_rule_4_a_receiver_that_recovers_inside_the_schedule_gets_it_and_stays_active() -> None:
    cast = example_world(0)
    sub = _subscribe(cast, EventType.RECEIVED)
    cast.world.webhooks.set_receiver(URL, ReceiverBehaviour.failing(503, 30 * HOUR_MS,
                                                                    latency=Fixed(0)))
    _redeem(cast)
    cast.world.run_all()
    attempts = _attempts(cast)
    assert [r["outcome"] for r in attempts] == ["failure"] * 6 + ["success"]
    assert attempts[-1]["sentAtMs"] == RETRY_OFFSETS_MS[6]
    assert cast.world.webhooks.deliveries[0].status is DeliveryStatus.DELIVERED
    assert sub.status is SubscriptionStatus.ACTIVE
    assert (sub.last_success_at_ms, sub.failing_since_ms) == (RETRY_OFFSETS_MS[6], None)
    assert sub.last_delivery_at_ms == RETRY_OFFSETS_MS[6]


def test_rule_4_success_is_a_2xx_within_the_timeout_exactly_10_s_counts() -> None:
    cast = example_world(0)
    _subscribe(cast, EventType.RECEIVED)
    cast.world.webhooks.set_receiver(URL, ReceiverBehaviour(latency=Fixed(DELIVERY_TIMEOUT_MS)))
    _redeem(cast)
    cast.world.run_all()
    (attempt,) = _attempts(cast)
    assert (attempt.at_ms, attempt["status"], attempt["outcome"]) == (10_000, 200, "success")


def test_rule_4_an_answer_1_ms_after_the_timeout_is_a_failure_and_the_receiver_still_got_it(
        ) -> None:
    cast = example_world(0)
    _subscribe(cast, EventType.RECEIVED)
    cast.world.webhooks.set_receiver(URL,
                                     ReceiverBehaviour(latency=Fixed(DELIVERY_TIMEOUT_MS + 1)))
    seen = _arrivals(cast)
    _redeem(cast)
    cast.world.run_until(RETRY_OFFSETS_MS[1] + 20_000)
    first, second = _attempts(cast)
    assert (first.at_ms, first["status"], first["fault"], first["outcome"]) == (
        10_000, None, "timeout", "failure")
    # at-least-once: the late request arrived, and so did the retry — a duplicate
    assert [(a.at_ms, a.attempt) for a in seen] == [(10_001, 1), (70_001, 2)]
    assert second["outcome"] == "failure"


def test_non_2xx_statuses_are_failures() -> None:
    assert [is_success(s) for s in (200, 204, 299, 300, 301, 404, 500, None)] == [
        True, True, True, False, False, False, False, False]


# the event body and headers --------------------------------------------------------------------
def _expected_body(event_id: str, tx_id: str, created_at: str, status: str, terminal: bool,
                   parked: bool, event: str, reference: str = "INV-0001") -> bytes:
    def js(b: bool) -> str:
        return "true" if b else "false"
    return (f'{{"id":"{event_id}","type":"{event}","createdAt":"{created_at}",'
            f'"data":{{"transactionId":"{tx_id}","paymentReference":"{reference}",'
            f'"lifecycleStatus":"{status}","terminal":{js(terminal)},"parked":{js(parked)}}}}}'
            ).encode()


def test_events_delivery_body_is_exactly_the_spec_fields_in_order_compact() -> None:
    """Events, Delivery: id, type, createdAt, data.{transactionId, paymentReference,
    lifecycleStatus, terminal, parked}, and nothing else."""
    cast = example_world(0)
    _subscribe(cast)
    seen = _arrivals(cast)
    cast.world.advance(1_234)
    tx_id = _redeem(cast)
    cast.world.run_all()
    events = cast.world.webhooks.events
    assert [e.type for e in events] == [EventType.RECEIVED, EventType.IN_FLIGHT,
                                        EventType.SETTLED]
    received, in_flight, settled = events
    assert seen[0].request.body == _expected_body(
        received.id, tx_id, "2026-01-01T00:00:01.234Z", "received", False, False,
        "transaction.received")
    assert seen[1].request.body == _expected_body(
        in_flight.id, tx_id, "2026-01-01T00:00:01.434Z", "in-flight", False, False,
        "transaction.in_flight")
    assert settled.body() == _expected_body(
        settled.id, tx_id, cast.world.iso(settled.created_at_ms), "settled", True, False,
        "transaction.settled")


def test_events_headers_sign_the_raw_body_at_each_attempts_own_virtual_time() -> None:
    """Signature: v1 = hex HMAC-SHA256(signingSecret, "<t>.<raw body>"), t the attempt's
    unix seconds; Service-Webhook-Id equals the event id on every attempt."""
    cast = example_world(0)
    sub = _subscribe(cast, EventType.RECEIVED)
    cast.world.webhooks.set_receiver(URL, ReceiverBehaviour.failing(503, 60_500,
                                                                    latency=Fixed(0)))
    seen = _arrivals(cast)
    cast.world.advance(500)
    _redeem(cast)
    cast.world.run_all()
    event = cast.world.webhooks.events[0]
    assert [a.at_ms for a in seen] == [500, 60_500]
    for arrival, record in zip(seen, _attempts(cast), strict=True):
        headers = arrival.request.headers
        assert [name for name, _ in headers] == ["Content-Type", "Service-Signature",
                                                 "Service-Webhook-Id"]
        assert dict(headers)["Content-Type"] == "application/json"
        assert dict(headers)["Service-Webhook-Id"] == event.id
        t = (cast.world.epoch_ms + arrival.at_ms) // 1000
        v1 = hmac.new(sub.signing_secret.encode(), f"{t}.".encode() + arrival.request.body,
                      hashlib.sha256).hexdigest()
        assert dict(headers)["Service-Signature"] == f"t={t},v1={v1}"
        assert record["headers"] == [list(h) for h in headers]
        assert record["body"] == arrival.request.body.decode() == event.body().decode()
        assert record["t"] == t
    assert seen[1].request.headers[1] != seen[0].request.headers[1]  # re-signed at t + 60


def test_events_attempt_record_carries_event_subscription_number_time_and_outcome() -> None:
    cast = example_world(0)
    sub = _subscribe(cast, EventType.RECEIVED)
    _redeem(cast)
    cast.world.run_all()
    (record,) = _attempts(cast)
    assert set(record.fields) == {
        "eventId", "subscriptionId", "attempt", "sentAtMs", "t", "url", "headers", "body",
        "status", "fault", "latencyMs", "jitterMs", "duplicated", "outcome", "nextAttemptAtMs"}
    assert (record["eventId"], record["subscriptionId"], record["attempt"]) == (
        cast.world.webhooks.events[0].id, sub.id, 1)
    assert (record["status"], record["outcome"], record["fault"]) == (200, "success", None)


# fan-out -------------------------------------------------------------------------------------
def test_events_only_listed_types_are_delivered() -> None:
    cast = example_world(0)
    settled_only = _subscribe(cast, EventType.SETTLED)
    parked_only = _subscribe(cast, EventType.PARKED, url=OTHER_URL)
    seen = _arrivals(cast)
    _redeem(cast)
    cast.world.run_all()
    assert [e.type for e in cast.world.webhooks.events] == [EventType.SETTLED]
    assert [(a.subscription_id, a.request.url) for a in seen] == [(settled_only.id, URL)]
    assert cast.world.webhooks.deliveries_of(parked_only.id) == []


def test_events_one_event_one_id_for_every_subscription_in_creation_order() -> None:
    cast = example_world(0)
    first = _subscribe(cast, EventType.RECEIVED, url=OTHER_URL)
    second = _subscribe(cast, EventType.RECEIVED)
    cast.world.webhooks.set_receiver(URL, ReceiverBehaviour(latency=Fixed(0)))
    cast.world.webhooks.set_receiver(OTHER_URL, ReceiverBehaviour(latency=Fixed(0)))
    _redeem(cast)
    cast.world.run_all()
    (event,) = cast.world.log.select("webhook.event")
    assert event["subscriptionIds"] == [first.id, second.id]
    assert [r["subscriptionId"] for r in _attempts(cast)] == [first.id, second.id]
    assert {r["eventId"] for r in _attempts(cast)} == {event["eventId"]}
    assert str(event["eventId"]).startswith("evt_")


def test_rule_1_operator_fix_gives_a_second_in_flight_event_with_a_new_id() -> None:
    """States and transitions: after an operator fix "event transaction.in_flight fires
    again"; guarantee 1: it is a new event (a new Service-Webhook-Id)."""
    cast = example_world(0)
    _subscribe(cast)
    tx_id = _redeem(cast, mode=2)
    cast.world.arm(tx_id, Outcome.FAILED)
    step_until(cast.world, "transaction.state", transactionId=tx_id, event="transaction.parked")
    cast.world.resolve(tx_id)
    cast.world.run_all()
    types = [e.type.value.removeprefix("transaction.") for e in cast.world.webhooks.events]
    assert types == ["received", "in_flight", "parked", "in_flight", "settled"]
    ids = [e.id for e in cast.world.webhooks.events]
    assert len(set(ids)) == 5
    assert {r["eventId"] for r in _attempts(cast)} == set(ids)


def test_no_subscription_no_event_and_no_record() -> None:
    cast = example_world(0)
    _redeem(cast)
    cast.world.run_all()
    assert cast.world.webhooks.events == []
    assert cast.world.log.select("webhook.") == []


# delete ----------------------------------------------------------------------------------------
def test_webhooks_delete_stops_new_events_at_once_queued_deliveries_keep_their_schedule(
        ) -> None:
    """Webhooks: DELETE "takes effect at once, already queued deliveries may still arrive"
    (docs/semantics.md: they keep their whole schedule and their secret)."""
    cast = example_world(0)
    sub = _subscribe(cast, EventType.RECEIVED)
    cast.world.webhooks.set_receiver(URL, ReceiverBehaviour.failing(503, HOUR_MS,
                                                                    latency=Fixed(0)))
    seen = _arrivals(cast)
    _redeem(cast)
    cast.world.advance(30_000)
    cast.world.subscriptions.delete(sub.id)
    _redeem(cast, reference="INV-0002")
    cast.world.run_all()
    assert len(cast.world.log.select("webhook.event")) == 1  # nothing for the second one
    assert [a.at_ms for a in seen] == [RETRY_OFFSETS_MS[i] for i in range(5)]
    assert seen[-1].status == 200
    assert cast.world.webhooks.deliveries[0].status is DeliveryStatus.DELIVERED
    assert all(a.request.header("Service-Webhook-Id") == seen[0].request.header(
        "Service-Webhook-Id") for a in seen)


# the 72-hour disable ---------------------------------------------------------------------------
def test_rule_5_disable_boundary_72h_minus_1ms_active_at_72h_disabled_then_nothing_sent(
        ) -> None:
    """Guarantee 5: every delivery failing for 72 h continuously disables the subscription.
    The streak starts at the first failure (0 ms here); a failure learned at 72 h − 1 ms
    leaves it active, the one learned at exactly 72 h disables it; pending retries are
    dropped and nothing more is sent."""
    cast = example_world(0)
    world = cast.world
    sub = _subscribe(cast, EventType.RECEIVED)
    world.webhooks.set_receiver(URL, DOWN)
    _redeem(cast, reference="T0")
    world.run_until(DISABLE_AFTER_MS - 1)
    _redeem(cast, reference="T1")
    world.run_until(DISABLE_AFTER_MS - 1)
    assert sub.status is SubscriptionStatus.ACTIVE
    assert (sub.failing_since_ms, sub.disable_at_ms) == (0, DISABLE_AFTER_MS)
    assert world.webhooks.pending(sub.id) == 1  # T1's retry, due at 72 h + 59.999 s
    world.run_until(DISABLE_AFTER_MS)
    _redeem(cast, reference="T2")
    world.run_until(DISABLE_AFTER_MS)
    assert sub.status is SubscriptionStatus.DISABLED
    assert (sub.disabled_at_ms, sub.disable_at_ms) == (DISABLE_AFTER_MS, None)
    (disabled,) = world.log.select("webhook.disabled")
    assert (disabled.at_ms, disabled["failingSinceMs"]) == (DISABLE_AFTER_MS, 0)
    assert world.webhooks.pending(sub.id) == 0
    dropped = world.log.select("webhook.delivery_dropped")
    assert [d["attempts"] for d in dropped] == [1, 1]  # T1's (waiting) and T2's (on the wire)
    _redeem(cast, reference="T3")
    world.run_all()
    assert max(r["sentAtMs"] for r in _attempts(cast)) == DISABLE_AFTER_MS
    assert len(world.log.select("webhook.event")) == 3  # T3 fanned out to nobody
    assert world.log.select("webhook.arrival")[-1].at_ms == DISABLE_AFTER_MS


def test_rule_5_a_success_breaks_the_streak() -> None:
    cast = example_world(0)
    world = cast.world
    sub = _subscribe(cast, EventType.RECEIVED)
    world.webhooks.set_receiver(URL, DOWN)
    _redeem(cast, reference="T0")
    world.run_until(40 * HOUR_MS)
    world.webhooks.set_receiver(URL, ReceiverBehaviour(latency=Fixed(0)))
    _redeem(cast, reference="T1")
    world.run_until(40 * HOUR_MS)
    assert (sub.failing_since_ms, sub.last_success_at_ms) == (None, 40 * HOUR_MS)
    world.webhooks.set_receiver(URL, DOWN)
    world.run_until(80 * HOUR_MS)
    _redeem(cast, reference="T2")
    world.run_until(80 * HOUR_MS)
    assert (sub.status, sub.failing_since_ms) == (SubscriptionStatus.ACTIVE, 80 * HOUR_MS)


def test_rule_5_a_deleted_subscription_is_never_disabled() -> None:
    cast = example_world(0)
    world = cast.world
    sub = _subscribe(cast, EventType.RECEIVED)
    world.webhooks.set_receiver(URL, DOWN)
    for i in range(4):
        _redeem(cast, reference=f"T{i}")
        if i == 0:
            world.subscriptions.delete(sub.id)
            sub2 = _subscribe(cast, EventType.RECEIVED)
        world.advance(30 * HOUR_MS)
    world.run_all()
    assert sub.status is SubscriptionStatus.ACTIVE and sub.disabled_at_ms is None
    assert sub2.status is SubscriptionStatus.DISABLED  # its failures spanned 72 h


def test_disable_due_is_the_72_hour_rule_on_learned_times() -> None:
    assert not disable_due(None, 10 * DISABLE_AFTER_MS)
    assert not disable_due(1_000, 1_000 + DISABLE_AFTER_MS - 1)
    assert disable_due(1_000, 1_000 + DISABLE_AFTER_MS)
