"""Webhook subscriptions: who wants which public events, where, signed with which secret.

Public names: ``Subscription``, ``SubscriptionRegistry``, ``SubscriptionStatus``.

The world owns the registry, so the webhook channel (fan-out, attempts, the retry schedule
and the 72-hour disable rule, ``clearing_sim.sim.webhook_channel``) reads the same
subscriptions the API manages, and keeps each one's delivery health on it. A subscription
is ``wh_`` + a UUID and carries its ``signingSecret`` (``whsec_`` + 64 hex digits), both from
the world's id factory. Every change is one log record: ``webhook.subscribed`` (never with
the secret) and ``webhook.deleted``. Deletion takes effect at once: the subscription is no
longer ``active`` and is left out of ``of``, so no new event is fanned out to it, but it stays
findable by ``get`` with its ``deleted_at_ms`` for deliveries already queued (spec: "already
queued deliveries may still arrive").
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import TYPE_CHECKING

from attrs import define

from clearing_sim.domain.delivery import DISABLE_AFTER_MS
from clearing_sim.domain.ids import ParticipantId
from clearing_sim.domain.lifecycle import EventType

if TYPE_CHECKING:
    from clearing_sim.sim.seams import Engine

__all__ = ["Subscription", "SubscriptionRegistry", "SubscriptionStatus"]

_SECRET_PREFIX = "whsec_"
_SECRET_BYTES = 32  # 64 hex digits


class SubscriptionStatus(StrEnum):
    ACTIVE = "active"
    DISABLED = "disabled"


@define
class Subscription:
    id: str
    participant_id: ParticipantId
    url: str
    events: tuple[EventType, ...]  # in the order the request named them
    description: str | None
    signing_secret: str
    created_at_ms: int
    status: SubscriptionStatus = SubscriptionStatus.ACTIVE
    last_delivery_at_ms: int | None = None  # the last attempt sent, whatever its outcome
    deleted_at_ms: int | None = None
    # Health, kept by the webhook channel at the times it learns outcomes:
    last_success_at_ms: int | None = None  # the last 2xx received in time
    failing_since_ms: int | None = None  # the first failure since then (the streak's start)
    disabled_at_ms: int | None = None

    @property
    def active(self) -> bool:
        """Whether new events are sent to it: not disabled and not deleted."""
        return self.status is SubscriptionStatus.ACTIVE and self.deleted_at_ms is None

    @property
    def disable_at_ms(self) -> int | None:
        """The earliest time a failure can disable it (streak start + 72 h), while it can."""
        if self.failing_since_ms is None or not self.active:
            return None
        return self.failing_since_ms + DISABLE_AFTER_MS


class SubscriptionRegistry:
    """Every subscription of one world, in creation order, deleted ones included."""

    def __init__(self, world: Engine) -> None:
        self._world = world
        self._by_id: dict[str, Subscription] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[Subscription]:
        return iter(self._by_id.values())

    def create(self, participant_id: ParticipantId, url: str, events: tuple[EventType, ...],
               description: str | None = None) -> Subscription:
        """A new active subscription; the caller has validated the URL and the events."""
        assert events and len(set(events)) == len(events), events
        world = self._world
        subscription = Subscription(
            id=world.ids.prefixed("wh"), participant_id=participant_id, url=url,
            events=events, description=description,
            signing_secret=_SECRET_PREFIX + world.ids.key_hex("webhook-secret", _SECRET_BYTES),
            created_at_ms=world.now_ms)
        self._by_id[subscription.id] = subscription
        world.log.append("webhook.subscribed", subscriptionId=subscription.id,
                         participantId=participant_id, url=url,
                         events=[event.value for event in events], description=description)
        return subscription

    def get(self, subscription_id: str) -> Subscription | None:
        """Any subscription by id, deleted or not (the API answers 404 for deleted ones)."""
        return self._by_id.get(subscription_id)

    def of(self, participant_id: str) -> list[Subscription]:
        """The participant's subscriptions that are not deleted, oldest first."""
        return [s for s in self._by_id.values()
                if s.participant_id == participant_id and s.deleted_at_ms is None]

    def delete(self, subscription_id: str) -> Subscription:
        """Delete now: no new event goes to it; it stays findable by ``get``."""
        subscription = self._by_id[subscription_id]
        assert subscription.deleted_at_ms is None, f"{subscription_id} is already deleted"
        subscription.deleted_at_ms = self._world.now_ms
        self._world.log.append("webhook.deleted", subscriptionId=subscription_id,
                               participantId=subscription.participant_id)
        return subscription
