"""The outgoing webhook channel: fan-out, signing, attempts, the retry schedule, the disable rule.

Public names: ``ChannelWorld`` (what the channel reads of its run, its seam:
``sim.seams``), ``Delivery``, ``DeliveryStatus``, ``WebhookChannel``.

The world makes one channel (``world.webhooks``). It listens to the log: each
``transaction.state`` record is one public event (``evt_`` + a UUID from the world's id
factory; an operator fix's return to ``in-flight`` is a new event), fanned out at once to
every ``active`` subscription that lists its type *and belongs to a party of the
transaction* (its audience: the initiating member and the issuers it lists, the scope of
``GET /transactions/{id}``), in subscription creation order, as one ``Delivery`` each
(logged ``webhook.event``). Nothing is logged and no id is drawn for a change no
subscription wants.

A delivery is a SimPy process. Attempt 1 starts at the change's virtual millisecond; attempt
n + 1 starts ``RETRY_DELAYS_MS[n - 1]`` after attempt n started, while the attempts fail;
after the seventh failure the delivery is ``failed`` (``webhook.delivery_failed``). Each
attempt is signed at its own virtual time (``t`` = unix seconds of the attempt) and is one
``webhook.attempt`` record, written when the service learns the outcome: a 2xx within
``DELIVERY_TIMEOUT_MS`` is a success; another status, a lost request or a late answer is a
failure.

The subscription's health (docs/semantics.md, "The webhook channel") is kept on the
``Subscription`` at the times the service learns outcomes: a success sets
``last_success_at_ms`` and ends the failure streak; the first failure after it starts the
streak (``failing_since_ms``); the first failure learned 72 h or more after the streak
started disables the subscription (``webhook.disabled``; no webhook announces it): its
deliveries waiting for a retry are dropped at once (``webhook.delivery_dropped``), one whose
attempt is on the wire ends with that attempt, and nothing more is sent to it. After that
the subscription's health no longer changes.

Deletion stops new events at once (the registry marks the subscription inactive); deliveries
created before it keep their whole schedule and their original signing secret, as the spec's
"already queued deliveries may still arrive" allows. A deleted subscription is never disabled.
"""

from __future__ import annotations

from collections.abc import Generator
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

import simpy
from attrs import define

from clearing_sim.domain.delivery import (
    ATTEMPTS_MAX,
    DELIVERY_TIMEOUT_MS,
    RETRY_DELAYS_MS,
    WebhookEvent,
    disable_due,
    is_success,
)
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.domain.signing import signature_header
from clearing_sim.sim.receivers import ReceiverBehaviour, Receivers, WebhookRequest
from clearing_sim.sim.seams import Engine
from clearing_sim.sim.subscriptions import Subscription, SubscriptionStatus

if TYPE_CHECKING:
    from clearing_sim.sim.book import TransactionBook
    from clearing_sim.sim.eventlog import Record
    from clearing_sim.sim.subscriptions import SubscriptionRegistry

__all__ = ["ChannelWorld", "Delivery", "DeliveryStatus", "WebhookChannel"]

Proc = Generator[simpy.Event, Any, Any]
#: ``EventType(value)`` without the enum's call
_EVENT_TYPES: dict[str, EventType] = {member.value: member for member in EventType}


class DeliveryStatus(StrEnum):
    PENDING = "pending"  # an attempt is on the wire or a retry is scheduled
    DELIVERED = "delivered"
    FAILED = "failed"  # seven attempts failed
    DROPPED = "dropped"  # the subscription was disabled


@define
class Delivery:
    """One event on its way to one subscription (engine-owned, changed by the channel only)."""

    seq: int  # its index in ``WebhookChannel.deliveries``
    event: WebhookEvent
    subscription_id: str
    url: str
    signing_secret: str  # the subscription's secret when the event was fanned out
    body: bytes  # the event's raw body, rendered once
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: int = 0
    on_the_wire: bool = False
    next_attempt_at_ms: int | None = None


class ChannelWorld(Engine, Protocol):
    """What the channel reads of its run (``sim.seams``): the subscriptions it fans out to,
    the book that names each transaction's audience, whether terminal history is kept."""

    @property
    def subscriptions(self) -> SubscriptionRegistry: ...

    @property
    def transactions(self) -> TransactionBook: ...

    @property
    def forget_terminal(self) -> bool: ...


class WebhookChannel:
    def __init__(self, world: ChannelWorld) -> None:
        self._world = world
        self.receivers = Receivers(world)
        self.events: list[WebhookEvent] = []  # every event fanned out, in order
        self.deliveries: list[Delivery] = []  # in creation order
        self._history = not world.forget_terminal  # else: keep only pending deliveries
        self._created = 0
        self._pending: dict[str, dict[int, Delivery]] = {}  # by subscription, then by seq
        world.log.listen(self._fan_out, "transaction.state")

    # engine controls ----------------------------------------------------------------------
    def set_receiver(self, url: str, behaviour: ReceiverBehaviour) -> None:
        """How the simulated endpoint behind ``url`` answers from now on."""
        self.receivers.set(url, behaviour)

    def pending(self, subscription_id: str) -> int:
        """Deliveries to the subscription not yet delivered, failed or dropped."""
        return len(self._pending.get(subscription_id, ()))

    @property
    def busy(self) -> bool:
        """Whether any delivery is left to attempt: one on the wire or a retry scheduled."""
        return any(self._pending.values())

    def deliveries_of(self, subscription_id: str) -> list[Delivery]:
        return [d for d in self.deliveries if d.subscription_id == subscription_id]

    # fan-out ------------------------------------------------------------------------------
    def _fan_out(self, record: Record) -> None:
        world = self._world
        if not len(world.subscriptions):
            return  # nobody subscribed to anything yet
        fields: Any = record.fields  # a ``transaction.state`` record: its fields' types known
        event_type = _EVENT_TYPES[fields["event"]]
        transaction_id: str = fields["transactionId"]
        audience = world.transactions[transaction_id].audience
        wanted = [s for s in world.subscriptions
                  if s.active and event_type in s.events and s.participant_id in audience]
        if not wanted:
            return
        event = WebhookEvent(
            id=world.ids.prefixed("evt"), type=event_type, created_at_ms=record.at_ms,
            created_at=world.iso(record.at_ms), transaction_id=transaction_id,
            payment_reference=fields["paymentReference"],
            lifecycle_status=fields["lifecycleStatus"], terminal=fields["terminal"],
            parked=fields["parked"])
        if self._history:
            self.events.append(event)
        world.log.append("webhook.event", eventId=event.id, type=event_type.value,
                         transactionId=event.transaction_id,
                         subscriptionIds=[s.id for s in wanted])
        body = event.body()
        for subscription in wanted:
            delivery = Delivery(self._created, event, subscription.id, subscription.url,
                                subscription.signing_secret, body)
            self._created += 1
            if self._history:
                self.deliveries.append(delivery)
            self._pending.setdefault(subscription.id, {})[delivery.seq] = delivery
            world.env.process(self._deliver(delivery))

    # one delivery -------------------------------------------------------------------------
    def _deliver(self, delivery: Delivery) -> Proc:
        env = self._world.env
        for n in range(1, ATTEMPTS_MAX + 1):
            sent_at_ms = self._world.now_ms
            success = yield from self._attempt(delivery, n)
            if success:
                self._finish(delivery, DeliveryStatus.DELIVERED)
                return
            if n == ATTEMPTS_MAX:
                self._finish(delivery, DeliveryStatus.FAILED)
                return
            if self._subscription(delivery).status is SubscriptionStatus.DISABLED:
                self._finish(delivery, DeliveryStatus.DROPPED)
                return
            assert delivery.next_attempt_at_ms is not None
            yield env.timeout(delivery.next_attempt_at_ms - self._world.now_ms)
            if delivery.status is not DeliveryStatus.PENDING:
                return  # dropped while waiting: the subscription was disabled
            assert self._world.now_ms == sent_at_ms + RETRY_DELAYS_MS[n - 1]

    def _attempt(self, delivery: Delivery, n: int) -> Generator[simpy.Event, Any, bool]:
        """Sign, send, wait for the answer or the timeout, log, update the health."""
        world = self._world
        sent_at_ms = world.now_ms
        t = (world.epoch_ms + sent_at_ms) // 1000
        body = delivery.body
        headers = (("Content-Type", "application/json"),
                   ("Service-Signature", signature_header(delivery.signing_secret, t, body)),
                   ("Service-Webhook-Id", delivery.event.id))
        delivery.attempts, delivery.on_the_wire = n, True
        delivery.next_attempt_at_ms = None
        subscription = self._subscription(delivery)
        subscription.last_delivery_at_ms = sent_at_ms
        sent = self.receivers.transmit(WebhookRequest(delivery.url, headers, body),
                                       delivery.event.id, delivery.subscription_id, n)
        status: int | None = None
        fault: str | None = None
        if sent.response is None:
            fault = "lost"
            yield world.env.timeout(DELIVERY_TIMEOUT_MS)
        elif sent.delay_ms is not None and sent.delay_ms > DELIVERY_TIMEOUT_MS:
            fault = "timeout"
            yield world.env.timeout(DELIVERY_TIMEOUT_MS)
        else:
            status = yield sent.response
        success = is_success(status)
        if not success and n < ATTEMPTS_MAX:
            delivery.next_attempt_at_ms = sent_at_ms + RETRY_DELAYS_MS[n - 1]
        world.log.append(
            "webhook.attempt", eventId=delivery.event.id, subscriptionId=delivery.subscription_id,
            attempt=n, sentAtMs=sent_at_ms, t=t, url=delivery.url,
            headers=[[name, value] for name, value in headers], body=body.decode(),
            status=status, fault=fault, latencyMs=None if fault else sent.delay_ms,
            jitterMs=sent.jitter_ms, duplicated=sent.duplicated,
            outcome="success" if success else "failure",
            nextAttemptAtMs=delivery.next_attempt_at_ms)
        self._record_outcome(subscription, success)  # a disable here spares this delivery
        delivery.on_the_wire = False
        return success

    # health -------------------------------------------------------------------------------
    def _record_outcome(self, subscription: Subscription, success: bool) -> None:
        if subscription.status is SubscriptionStatus.DISABLED:
            return  # frozen once disabled
        now = self._world.now_ms
        if success:
            subscription.last_success_at_ms = now
            subscription.failing_since_ms = None
        elif subscription.failing_since_ms is None:
            subscription.failing_since_ms = now
        elif subscription.deleted_at_ms is None and disable_due(subscription.failing_since_ms,
                                                                 now):
            self._disable(subscription)

    def _disable(self, subscription: Subscription) -> None:
        world = self._world
        subscription.status = SubscriptionStatus.DISABLED
        subscription.disabled_at_ms = world.now_ms
        world.log.append("webhook.disabled", subscriptionId=subscription.id,
                         participantId=subscription.participant_id,
                         failingSinceMs=subscription.failing_since_ms,
                         lastSuccessAtMs=subscription.last_success_at_ms)
        for delivery in list(self._pending.get(subscription.id, {}).values()):
            if not delivery.on_the_wire:
                self._finish(delivery, DeliveryStatus.DROPPED)

    def _finish(self, delivery: Delivery, status: DeliveryStatus) -> None:
        delivery.status = status
        delivery.next_attempt_at_ms = None
        del self._pending[delivery.subscription_id][delivery.seq]
        fields: dict[str, Any] = {"eventId": delivery.event.id,
                                  "subscriptionId": delivery.subscription_id,
                                  "attempts": delivery.attempts}
        if status is DeliveryStatus.FAILED:
            self._world.log.append("webhook.delivery_failed", **fields)
        elif status is DeliveryStatus.DROPPED:
            self._world.log.append("webhook.delivery_dropped", **fields,
                                   reason="subscription_disabled")

    def _subscription(self, delivery: Delivery) -> Subscription:
        subscription = self._world.subscriptions.get(delivery.subscription_id)
        assert subscription is not None
        return subscription
