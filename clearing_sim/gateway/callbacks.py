"""Where a real issuer's status webhooks arrive in the kit: a small receiver on loopback.

Public names: ``CallbackReceiver``.

It answers 200 to a POST on ``/issuer-webhooks`` and queues the signature header and the
raw body with their wall arrival time (a body of at most ``BODY_MAX`` bytes whose
``Content-Length`` is a plain number: 400 for another, 413 past the bound; 503 once
``CallbackQueue.KEPT_MAX`` arrived); any other path is 404. The world takes them at its next
step (``HttpGateway.take_callbacks``), where they are verified and dropped or used as a
prompt.

It is served like every server of the project (``clearing_sim.serving``): a connection that
has not sent its request head within ``READ_TIMEOUT_S`` (and its body within as long again)
is closed, the connection cap evicts the oldest one without a head, and a body cut off
before its declared length is never queued. It used ``http.server`` with a thread per
connection and a timeout per read, so a peer dripping a byte every few seconds held a
thread for ever (issue 31, finding 1).

With ``tls`` it serves HTTPS, as a real service's webhook endpoint would: the certificate
(``service-webhooks.crt`` from ``clearing-sim issuer certs``) is presented to the issuer's
gateway, which verifies it against the CA it was given. A handshake must be done within the
same deadline; a failed one (a client that does not trust the certificate, or speaks plain
HTTP, or closes without an alert) is kept in ``handshake_failures`` and the connection
closed.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from clearing_sim.gateway.client import CallbackQueue
from clearing_sim.gateway.serving import ServerThread, ServerTls
from clearing_sim.serving import ServeLimits

__all__ = ["CallbackReceiver"]

PATH = "/issuer-webhooks"
BODY_MAX = 65_536
READ_TIMEOUT_S = 10.0


def _app(queue: CallbackQueue) -> Starlette:
    async def arrived(request: Request) -> Response:
        declared = (request.headers.get("content-length") or "0").strip()
        length = int(declared) if declared.isascii() and declared.isdigit() else -1
        if length < 0:
            return Response(status_code=400)
        if length > BODY_MAX:
            return Response(status_code=413)
        raw = await request.body()  # Content-Length is known and bounded: at most BODY_MAX
        if len(raw) != length:
            return Response(status_code=400)
        return Response(status_code=200 if queue.put(request.headers.get("service-signature"),
                                                      raw) else 503)

    return Starlette(routes=[Route(PATH, arrived, methods=["POST"])])


class CallbackReceiver:
    def __init__(self, queue: CallbackQueue, host: str = "127.0.0.1", port: int = 0,
                 tls: ServerTls | None = None, header_timeout_s: float = READ_TIMEOUT_S) -> None:
        self.queue = queue
        if tls is not None:
            tls.context()  # a TlsProblem now, not in the server's thread
        self.server = ServerThread(_app(queue), host, port, tls=tls,
                                   limits=ServeLimits(header_timeout_s))
        self.url = f"{self.server.base_url}{PATH}"

    @property
    def handshake_failures(self) -> list[str]:
        return self.server.server.failed_handshakes()

    def __enter__(self) -> CallbackReceiver:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
