"""The reference and naive webhook receivers as real HTTP servers (``clearing-sim receiver
serve``).

Public names: ``HttpTransactionSource``, ``ReceiverServer``, ``receiver_app``,
``wall_clock_s``.

``receiver_app(receiver)`` is a Starlette application around one receiver of
``clearing_sim.webhooks`` (or of ``receiver_variants``: the ack-first one, the defective
ones):

- ``POST /webhooks``: the delivery (raw body, headers) goes to ``receiver.handle``; its
  status is the answer (200 ``ok``, 401 a signature refused, 400 a body it cannot read, 503
  when its fetch failed, so the service retries).
- ``GET /transactions/{id}``: the probe the conformance kit reads (docs/conformance.md): the
  receiver's view ``{lifecycleStatus, parked, terminal}``, 404 when it has none.

The reference receiver fetches through ``HttpTransactionSource``: ``GET
{api base}/api/v1/transactions/{id}`` with its API key, over httpx, and its clock is the
wall clock (unix seconds), as a member's receiver's is. The naive receiver
(``replay_window_s=None``) never fetches and never looks at ``t``. Handlers run in Starlette's
thread pool (the fetch blocks), one delivery at a time (a lock), as a simple receiver would.

``ReceiverServer`` runs an application on a thread of its own, bound to a loopback port (0:
a free one), the way every server of the project is served (``clearing_sim.serving``: the
header deadline, the connection cap), for tests and the kit's examples: ``start()``,
``url``, ``stop()``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from clearing_sim.service.messages import Request
from clearing_sim.service.messages import Response as ApiResponse
from clearing_sim.serving import ServerThread
from clearing_sim.untrusted.bodies import read_body
from clearing_sim.webhooks import NaiveReceiver, ReferenceReceiver

__all__ = ["HttpTransactionSource", "ReceiverServer", "receiver_app", "wall_clock_s"]

_FETCH_TIMEOUT_S = 5.0
BODY_LIMIT = 65_536  # of a webhook delivery: the service's events are under 1 KiB
_ANSWERS = {200: "ok", 400: "unreadable event", 401: "signature refused",
            503: "could not fetch the transaction; retry"}


class HttpTransactionSource:
    """The API over HTTP: a ``TransactionSource`` for ``ReferenceReceiver``."""

    def __init__(self, api_base_url: str, client: httpx.Client | None = None) -> None:
        self.base = api_base_url.rstrip("/")
        if self.base.endswith("/api/v1"):
            self.base = self.base[: -len("/api/v1")]
        self.client = client or httpx.Client(timeout=_FETCH_TIMEOUT_S)

    def handle(self, request: Request) -> ApiResponse:
        try:
            response = self.client.request(request.method, self.base + request.path,
                                           headers=list(request.headers), content=request.body)
        except httpx.HTTPError:
            return ApiResponse(503, (), b"")
        return ApiResponse(response.status_code, tuple(response.headers.items()),
                           response.content)


def wall_clock_s() -> int:
    return int(time.time())


def receiver_app(receiver: ReferenceReceiver | NaiveReceiver,
                 echo: Callable[[str], None] | None = None) -> Starlette:
    """``echo`` is told of each delivery: ``<-- evt_… [status] answer`` (``receiver serve``
    prints them, as a webhook CLI's listener does)."""
    lock = threading.Lock()

    def deliver(request: HttpRequest, body: bytes) -> Response:
        with lock:
            status = receiver.handle(tuple(request.headers.items()), body)
        answer = _ANSWERS.get(status, str(status))
        if echo is not None:
            webhook_id = request.headers.get("service-webhook-id", "(no Service-Webhook-Id)")
            echo(f"<-- {webhook_id[:80]} [{status}] {answer}")
        return PlainTextResponse(answer, status_code=status)

    async def webhooks(request: HttpRequest) -> Response:
        body = await read_body(request, BODY_LIMIT)
        if body is None:
            return PlainTextResponse(f"a webhook body is at most {BODY_LIMIT} bytes",
                                     status_code=413)
        return await run_in_threadpool(deliver, request, body)

    def probe(request: HttpRequest) -> Response:
        view = receiver.views.get(request.path_params["id"])
        if view is None:
            return JSONResponse({"error": "no view of this transaction"}, status_code=404)
        body: dict[str, Any] = {"lifecycleStatus": view.lifecycle_status,
                                "parked": view.parked, "terminal": view.terminal}
        return JSONResponse(body)

    return Starlette(routes=[Route("/webhooks", webhooks, methods=["POST"]),
                             Route("/transactions/{id}", probe, methods=["GET"])])


class ReceiverServer(ServerThread):
    """An application on a background thread (``clearing_sim.serving``), on ``host:port``."""

    @property
    def url(self) -> str:
        return self.base_url
