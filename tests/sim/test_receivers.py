"""Simulated webhook receivers and network faults (spec, Events, guarantee 1: "delivery is at
least once; duplicates, losses and out-of-order arrival occur")."""

from __future__ import annotations

import pytest

from clearing_sim.domain.delivery import DELIVERY_TIMEOUT_MS, RETRY_OFFSETS_MS
from clearing_sim.domain.latency import Fixed, Uniform
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.sim.examples import Cast, example_world, redeem
from clearing_sim.sim.receivers import Arrival, ReceiverBehaviour
from clearing_sim.sim.webhook_channel import DeliveryStatus

URL = "https://hooks.northbank.example/clearing"


def _setup(behaviour: ReceiverBehaviour | None = None, *events: EventType,
           seed: int = 0) -> tuple[Cast, list[Arrival]]:
    cast = example_world(seed)
    cast.world.subscriptions.create(cast.member.id, URL, events or (EventType.RECEIVED,))
    if behaviour is not None:
        cast.world.webhooks.set_receiver(URL, behaviour)
    seen: list[Arrival] = []
    cast.world.webhooks.receivers.listen(seen.append)
    return cast, seen


def _redeem(cast: Cast, reference: str = "INV-0001") -> str:
    return cast.world.initiate(cast.member.id, redeem(cast.asset(1), "10.00", reference)).id


def test_default_receiver_answers_200_after_a_short_latency() -> None:
    cast, seen = _setup()
    _redeem(cast)
    cast.world.run_all()
    (arrival,) = seen
    assert arrival.status == 200 and 0 < arrival.at_ms < 2_000
    (attempt,) = cast.world.log.select("webhook.attempt")
    assert attempt["latencyMs"] == arrival.at_ms and attempt["outcome"] == "success"


def test_a_status_until_a_virtual_time_then_200() -> None:
    behaviour = ReceiverBehaviour.failing(429, until_ms=5_000)
    assert [behaviour.status_at(t) for t in (0, 4_999, 5_000, 10**9)] == [429, 429, 200, 200]
    assert ReceiverBehaviour.failing(500).status_at(10**12) == 500  # for ever


def test_every_arrival_is_logged_and_passed_to_listeners() -> None:
    cast, seen = _setup(ReceiverBehaviour(latency=Fixed(7)))
    _redeem(cast)
    cast.world.run_all()
    (record,) = cast.world.log.select("webhook.arrival")
    (arrival,) = seen
    assert dict(record.fields) == {"url": URL, "eventId": arrival.event_id,
                                   "subscriptionId": arrival.subscription_id, "attempt": 1,
                                   "copy": 0, "status": 200}
    assert (record.at_ms, arrival.at_ms) == (7, 7)


def test_a_lost_request_never_arrives_and_the_sender_sees_a_timeout() -> None:
    cast, seen = _setup(ReceiverBehaviour(p_lost=1.0))
    _redeem(cast)
    cast.world.run_all()
    attempts = cast.world.log.select("webhook.attempt")
    assert seen == []
    assert [(r.at_ms - r["sentAtMs"], r["fault"], r["status"]) for r in attempts] == [
        (DELIVERY_TIMEOUT_MS, "lost", None)] * 7
    assert [r["sentAtMs"] for r in attempts] == list(RETRY_OFFSETS_MS)
    assert cast.world.webhooks.deliveries[0].status is DeliveryStatus.FAILED


def test_a_duplicated_request_arrives_twice_and_is_one_attempt() -> None:
    cast, seen = _setup(ReceiverBehaviour(latency=Fixed(50), p_duplicate=1.0,
                                          duplicate_delay=Fixed(300)))
    _redeem(cast)
    cast.world.run_all()
    assert [(a.at_ms, a.copy, a.attempt) for a in seen] == [(50, 0, 1), (350, 1, 1)]
    assert seen[0].request == seen[1].request
    (attempt,) = cast.world.log.select("webhook.attempt")
    assert attempt["duplicated"] is True and attempt.at_ms == 50


def test_jitter_reorders_arrivals() -> None:
    """Arrival order is not ordering (guarantee 2): with jitter, a later event overtakes."""
    cast, seen = _setup(ReceiverBehaviour(latency=Fixed(10), p_jitter=1.0,
                                          jitter=Uniform(0, 5_000)),
                        EventType.RECEIVED, EventType.IN_FLIGHT)
    for i in range(5):
        _redeem(cast, f"INV-{i}")
        cast.world.advance(1_000)
    cast.world.run_all()
    sent = [e.id for e in cast.world.webhooks.events]
    arrived = [a.event_id for a in seen]
    assert sorted(arrived) == sorted(sent) and arrived != sent
    jitters = [r["jitterMs"] for r in cast.world.log.select("webhook.attempt")]
    assert all(0 <= j <= 5_000 for j in jitters) and len(set(jitters)) > 1


def test_an_attached_application_answers_while_the_endpoint_is_up() -> None:
    cast, seen = _setup(ReceiverBehaviour.failing(503, until_ms=60_000, latency=Fixed(0)))
    calls: list[int] = []

    def app(arrival: Arrival) -> int:
        calls.append(arrival.attempt)
        return 401 if arrival.attempt == 2 else 204  # rejects once, then accepts

    cast.world.webhooks.receivers.attach(URL, app)
    _redeem(cast)
    cast.world.run_all()
    assert calls == [2, 3]  # attempt 1 met the endpoint down: the application never saw it
    assert [a.status for a in seen] == [503, 401, 204]
    assert cast.world.webhooks.deliveries[0].status is DeliveryStatus.DELIVERED


def test_set_receiver_is_logged() -> None:
    cast, _ = _setup(ReceiverBehaviour.failing(503, until_ms=1_000))
    (record,) = cast.world.log.select("webhook.receiver")
    assert (record["url"], record["status"], record["untilMs"]) == (URL, 503, 1_000)


@pytest.mark.parametrize("bad", [{"p_lost": 1.5}, {"p_jitter": -0.1}, {"status": 99},
                                 {"status": 600}, {"until_ms": -1}, {"p_duplicate": 2}])
def test_behaviour_values_are_validated(bad: dict[str, object]) -> None:
    with pytest.raises((ValueError, TypeError)):
        ReceiverBehaviour(**bad)  # type: ignore[arg-type]


def test_faults_are_drawn_from_the_urls_own_streams_same_seed_same_run() -> None:
    behaviour = ReceiverBehaviour(p_lost=0.3, p_duplicate=0.3, p_jitter=0.5)

    def run(seed: int) -> str:
        cast, _ = _setup(behaviour, *EventType, seed=seed)
        for i in range(4):
            _redeem(cast, f"INV-{i}")
            cast.world.advance(2_000)
        cast.world.run_all()
        return cast.world.log.digest()

    assert run(3) == run(3)
    assert run(3) != run(4)
