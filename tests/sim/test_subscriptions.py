"""The world's webhook subscriptions: what the API manages and the webhook channel reads."""

from __future__ import annotations

import re

import pytest

from clearing_sim.domain.ids import ParticipantId
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.sim.subscriptions import SubscriptionStatus
from clearing_sim.sim.world import World, WorldConfig

ALICE, BOB = ParticipantId("p-alice"), ParticipantId("p-bob")
SETTLED, PARKED = EventType.SETTLED, EventType.PARKED


def test_create_mints_the_id_and_secret_from_the_worlds_factory_and_logs_it() -> None:
    world = World()
    world.advance(2_500)
    sub = world.subscriptions.create(ALICE, "https://a.example.com/", (PARKED, SETTLED), "ops")
    assert re.fullmatch(r"wh_[0-9a-f-]{36}", sub.id)
    assert re.fullmatch(r"whsec_[0-9a-f]{64}", sub.signing_secret)
    assert (sub.events, sub.description, sub.created_at_ms) == ((PARKED, SETTLED), "ops", 2_500)
    assert (sub.status, sub.last_delivery_at_ms, sub.deleted_at_ms) == (
        SubscriptionStatus.ACTIVE, None, None)
    assert sub.active
    [record] = world.log.select("webhook.subscribed")
    assert record.at_ms == 2_500
    assert record["events"] == ["transaction.parked", "transaction.settled"]
    assert sub.signing_secret not in record.canonical()


def test_of_is_a_participants_live_subscriptions_oldest_first() -> None:
    world = World()
    a1 = world.subscriptions.create(ALICE, "https://a.example.com/1", (SETTLED,))
    b1 = world.subscriptions.create(BOB, "https://b.example.com/", (SETTLED,))
    a2 = world.subscriptions.create(ALICE, "https://a.example.com/2", (SETTLED,))
    assert world.subscriptions.of(ALICE) == [a1, a2]
    world.subscriptions.delete(a1.id)
    assert world.subscriptions.of(ALICE) == [a2]
    assert len(world.subscriptions) == 3
    assert list(world.subscriptions) == [a1, b1, a2]  # every one, deleted included


def test_a_deleted_subscription_is_no_longer_active_but_stays_findable() -> None:
    world = World()
    sub = world.subscriptions.create(ALICE, "https://a.example.com/", (SETTLED,))
    world.advance(10)
    assert world.subscriptions.delete(sub.id) is sub
    assert world.subscriptions.get(sub.id) is sub
    assert (sub.active, sub.deleted_at_ms) == (False, 10)
    [record] = world.log.select("webhook.deleted")
    assert (record.at_ms, record["subscriptionId"]) == (10, sub.id)
    with pytest.raises(AssertionError):
        world.subscriptions.delete(sub.id)


def test_a_disabled_subscription_is_not_active() -> None:
    sub = World().subscriptions.create(ALICE, "https://a.example.com/", (SETTLED,))
    sub.status = SubscriptionStatus.DISABLED
    assert not sub.active


@pytest.mark.parametrize("events", [(), (SETTLED, SETTLED)])
def test_events_are_distinct_and_at_least_one(events: tuple[EventType, ...]) -> None:
    with pytest.raises(AssertionError):
        World().subscriptions.create(ALICE, "https://a.example.com/", events)


def test_same_seed_same_ids_and_secrets() -> None:
    def first(seed: int) -> tuple[str, str]:
        world = World(WorldConfig(seed=seed))
        sub = world.subscriptions.create(ALICE, "https://a.example.com/", (SETTLED,))
        return sub.id, sub.signing_secret

    assert first(3) == first(3)
    assert first(3) != first(4)
