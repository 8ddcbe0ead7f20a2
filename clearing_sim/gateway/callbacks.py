"""Where a real issuer's status webhooks arrive in the kit: a small receiver on loopback.

Public names: ``CallbackReceiver``.

It answers 200 to any POST on ``/issuer-webhooks`` and queues the signature header and the
raw body with their wall arrival time; the world takes them at its next step
(``HttpGateway.take_callbacks``), where they are verified and dropped or used as a prompt.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from clearing_sim.gateway.client import CallbackQueue

__all__ = ["CallbackReceiver"]

PATH = "/issuer-webhooks"
BODY_MAX = 65_536


class CallbackReceiver:
    def __init__(self, queue: CallbackQueue, host: str = "127.0.0.1", port: int = 0) -> None:
        self.queue = queue

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if self.path != PATH or length > BODY_MAX:
                    self.send_response(404 if self.path != PATH else 413)
                    self.end_headers()
                    return
                raw = self.rfile.read(length)
                queue.put(self.headers.get("Service-Signature"), raw)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}{PATH}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                        name="issuer-callbacks")

    def __enter__(self) -> CallbackReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)
