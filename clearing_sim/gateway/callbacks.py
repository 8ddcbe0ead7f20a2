"""Where a real issuer's status webhooks arrive in the kit: a small receiver on loopback.

Public names: ``CallbackReceiver``.

It answers 200 to any POST on ``/issuer-webhooks`` and queues the signature header and the
raw body with their wall arrival time (a body of at most ``BODY_MAX`` bytes whose
``Content-Length`` is a plain number: 400 for another, 413 past the bound; each read of a
connection waits at most ``READ_TIMEOUT_S``; 503 once ``CallbackQueue.KEPT_MAX`` arrived);
the world takes them at its next step (``HttpGateway.take_callbacks``), where they are
verified and dropped or used as a prompt.

With ``tls`` it serves HTTPS, as a real service's webhook endpoint would: the certificate
(``service-webhooks.crt`` from ``clearing-sim issuer certs``) is presented to the issuer's
gateway, which verifies it against the CA it was given. Each connection's handshake runs in
that connection's own thread, so a client that never finishes one holds up nobody; a failed
handshake (a client that does not trust the certificate, or speaks plain HTTP) is counted in
``handshake_failures`` and the connection closed.
"""

from __future__ import annotations

import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from clearing_sim.gateway.client import CallbackQueue
from clearing_sim.gateway.serving import ServerTls

__all__ = ["CallbackReceiver"]

PATH = "/issuer-webhooks"
BODY_MAX = 65_536
READ_TIMEOUT_S = 10.0
HANDSHAKE_TIMEOUT_S = 10.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 context: ssl.SSLContext | None) -> None:
        super().__init__(address, handler)
        self.context = context
        self.handshake_failures: list[str] = []

    def finish_request(self, request: Any, client_address: Any) -> None:
        """In the connection's thread: the TLS handshake first, then the request."""
        if self.context is not None:
            request.settimeout(HANDSHAKE_TIMEOUT_S)
            try:
                request = self.context.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError) as error:
                self.handshake_failures.append(str(error))
                return
        super().finish_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a peer that goes away mid-request is not the kit's failure


class CallbackReceiver:
    def __init__(self, queue: CallbackQueue, host: str = "127.0.0.1", port: int = 0,
                 tls: ServerTls | None = None) -> None:
        self.queue = queue

        class Handler(BaseHTTPRequestHandler):
            timeout = READ_TIMEOUT_S  # each read of the connection (socket timeout)

            def do_POST(self) -> None:
                declared = (self.headers.get("Content-Length") or "0").strip()
                length = int(declared) if declared.isascii() and declared.isdigit() else -1
                status = 404 if self.path != PATH else 400 if length < 0 \
                    else 413 if length > BODY_MAX else 0
                if not status:
                    raw = self.rfile.read(length)
                    status = 200 if len(raw) == length and queue.put(
                        self.headers.get("Service-Signature"), raw) else \
                        400 if len(raw) != length else 503
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return

        context = None if tls is None else tls.context()
        self.server = _Server((host, port), Handler, context)
        scheme = "http" if tls is None else "https"
        self.url = f"{scheme}://{host}:{self.server.server_address[1]}{PATH}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                        name="issuer-callbacks")

    @property
    def handshake_failures(self) -> list[str]:
        return self.server.handshake_failures

    def __enter__(self) -> CallbackReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)
