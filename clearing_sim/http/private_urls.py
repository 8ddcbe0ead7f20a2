"""``--allow-private-webhook-urls``: subscriptions to a receiver on the developer's machine.

Public names: ``PLACEHOLDER_HOST``, ``PrivateWebhookUrls``, ``relaxed_url_problem``.

The API refuses webhook URLs that are not HTTPS or not public (spec, Webhooks), and the
shim must not change the API. With the option, a ``POST /api/v1/webhooks`` whose ``url`` the
API would refuse *only* for its scheme (``http``) or its address (loopback, private, …) is
sent on with a stand-in URL (``https://private-webhook-url.invalid/<sha256 of the URL>``, the
same for the same URL, so idempotent replays still match), and when the API creates the
subscription the shim gives it the real URL back: on the subscription (where deliveries read
it), in one ``http.webhook_url`` log record, and in the answer's ``data.url``. Every other
check (auth, events, idempotency, the rest of the URL's syntax) is the API's own.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from attrs import evolve

from clearing_sim.domain.errors import Problem
from clearing_sim.domain.webhook_url import Resolver, url_problem
from clearing_sim.service.messages import Request, Response, encode_json
from clearing_sim.sim.world import World

__all__ = ["PLACEHOLDER_HOST", "PrivateWebhookUrls", "relaxed_url_problem"]

PLACEHOLDER_HOST = "private-webhook-url.invalid"
_ROUTE = ("POST", "/api/v1/webhooks")


def relaxed_url_problem(url: str, resolve: Resolver) -> Problem | None:
    """The URL's problem when ``http`` and non-public addresses are allowed, or None."""
    https = "https" + url[len("http"):] if url.startswith("http://") else url
    problem = url_problem(https, resolve)
    return None if problem is None or problem.code == "url_not_public" else problem


class PrivateWebhookUrls:
    def __init__(self, world: World) -> None:
        self.world = world

    def rewrite(self, request: Request) -> tuple[Request, str | None]:
        """The request to hand to the API, and the real URL it stands in for (or None)."""
        if (request.method, request.path) != _ROUTE:
            return request, None
        try:
            body = json.loads(request.body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return request, None
        url = body.get("url") if isinstance(body, dict) else None
        resolve = self.world.dns.resolve
        if (not isinstance(url, str) or url_problem(url, resolve) is None
                or relaxed_url_problem(url, resolve) is not None):
            return request, None
        digest = hashlib.sha256(url.encode()).hexdigest()[:32]
        body["url"] = f"https://{PLACEHOLDER_HOST}/{digest}"
        return evolve(request, body=encode_json(body)), url

    def restore(self, response: Response, url: str) -> Response:
        """Give the created subscription its real URL, in the world and in the answer."""
        if response.status != 201:
            return response
        payload: dict[str, Any] = response.json()
        data = payload["data"]
        subscription = self.world.subscriptions.get(str(data["id"]))
        assert subscription is not None
        if subscription.url != url:
            subscription.url = url
            self.world.log.append("http.webhook_url", subscriptionId=subscription.id, url=url)
        data["url"] = url
        return Response(response.status, response.headers, encode_json(payload))
