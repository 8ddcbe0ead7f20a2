"""Webhook subscriptions: create, list, get and delete (spec, Webhooks).

Public names: ``ROUTES``, ``subscription_wire``.

Every route needs ``webhooks:manage`` (an API key or a tenant-admin session) and acts on the
caller's participant only: another participant's subscription, an unknown id and a deleted
subscription are all 404 ``webhook_not_found``. The URL must be HTTPS and resolve, through the
world's simulated DNS, only to public addresses (``clearing_sim.domain.webhook_url``); the
``events`` array names one or more of the six public event types, each once. The signing
secret is shown once, in the 201 of create (and in its idempotent replay); no other answer
carries it. The subscriptions themselves live in the world (``world.subscriptions``), where
the webhook channel reads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clearing_sim.domain.errors import NotFound
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.domain.parties import Capability
from clearing_sim.domain.webhook_url import relaxed_url_problem, url_problem
from clearing_sim.service.body import BODY_BYTES_MAX, Fields
from clearing_sim.service.context import Context, Reply, Route

if TYPE_CHECKING:
    from clearing_sim.sim.subscriptions import Subscription
    from clearing_sim.sim.world import World

__all__ = ["ROUTES", "subscription_wire"]

DESCRIPTION_LENGTH_MAX = 256
_EVENT_TYPES = tuple(e.value for e in EventType)


def subscription_wire(world: World, subscription: Subscription) -> dict[str, Any]:
    """The spec's Webhook subscription, without ``signingSecret``: the one rendering of it.

    ``description`` and ``lastDeliveryAt`` are always present, null when absent, so every
    subscription has the same shape (docs/semantics.md). The delivery-detail fields of ours
    tell a subscriber a disable is coming (docs/semantics.md, "The webhook channel"):
    ``lastDeliveryAt`` (the last attempt sent, whatever its outcome), ``lastSuccessAt``,
    ``failingSince`` (the start of the current failure streak), ``disableAt`` (the earliest
    time a failure can disable it), ``disabledAt`` and ``pendingDeliveries``."""
    def at(ms: int | None) -> str | None:
        return None if ms is None else world.iso(ms)

    return {
        "id": subscription.id,
        "url": subscription.url,
        "events": [event.value for event in subscription.events],
        "description": subscription.description,
        "status": subscription.status.value,
        "createdAt": world.iso(subscription.created_at_ms),
        "lastDeliveryAt": at(subscription.last_delivery_at_ms),
        "lastSuccessAt": at(subscription.last_success_at_ms),
        "failingSince": at(subscription.failing_since_ms),
        "disableAt": at(subscription.disable_at_ms),
        "disabledAt": at(subscription.disabled_at_ms),
        "pendingDeliveries": world.webhooks.pending(subscription.id),
    }


def _events(f: Fields) -> tuple[EventType, ...]:
    """``events``: a non-empty array of distinct public event types, in the caller's order."""
    names = f.choices("events", _EVENT_TYPES, what="event type")
    return () if names is None else tuple(EventType(name) for name in names)


def create(ctx: Context) -> Reply:
    f = ctx.fields()
    # any string: its length and form are the URL rules' to judge (invalid_url)
    url = f.text("url", length_max=BODY_BYTES_MAX, nonblank=False)
    if url is not None:
        check = relaxed_url_problem if ctx.private_webhook_urls else url_problem
        problem = check(url, ctx.world.dns.resolve, f.path("url"))
        if problem is not None:
            f.problems.append(problem)
    events = _events(f)
    description = f.text("description", required=False, length_max=DESCRIPTION_LENGTH_MAX)
    f.done()
    assert url is not None and events
    subscription = ctx.world.subscriptions.create(ctx.caller.id, url, events, description)
    return Reply(201, {**subscription_wire(ctx.world, subscription),
                       "signingSecret": subscription.signing_secret})


def list_webhooks(ctx: Context) -> Reply:
    mine = ctx.world.subscriptions.of(ctx.caller.id)
    return Reply(200, [subscription_wire(ctx.world, s) for s in mine], next_cursor=None)


def _own(ctx: Context) -> Subscription:
    subscription = ctx.world.subscriptions.get(ctx.params["id"])
    if (subscription is None or subscription.participant_id != ctx.caller.id
            or subscription.deleted_at_ms is not None):
        raise NotFound.one(None, "webhook_not_found",
                           f"no webhook subscription {ctx.params['id'][:64]} for this "
                           "participant")
    return subscription


def get_webhook(ctx: Context) -> Reply:
    return Reply(200, subscription_wire(ctx.world, _own(ctx)))


def delete_webhook(ctx: Context) -> Reply:
    ctx.fields(empty_ok=True).done()
    ctx.world.subscriptions.delete(_own(ctx).id)
    return Reply(204)


_CAP = (Capability.WEBHOOKS_MANAGE,)
ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/webhooks", create, "subscribe a URL to public events", _CAP),
    Route("GET", "/api/v1/webhooks", list_webhooks, "list the caller's subscriptions", _CAP),
    Route("GET", "/api/v1/webhooks/{id}", get_webhook, "one subscription", _CAP),
    Route("DELETE", "/api/v1/webhooks/{id}", delete_webhook, "delete a subscription", _CAP),
)
