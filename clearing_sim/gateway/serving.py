"""Run an ASGI app under uvicorn in a background thread, optionally over (m)TLS.

Public names: ``ServerTls``, ``ServerThread``.

Used by ``clearing-sim issuer serve`` (in the foreground) and by tests and the kit (in a
thread, on an ephemeral loopback port). ``ServerTls`` with ``client_ca`` requires a client
certificate signed by that CA (mTLS). ``ServerTls.context()`` loads the files the way a
server will (``TlsProblem`` for one that cannot be used, an encrypted key among them, which
uvicorn would otherwise ask a passphrase for on the terminal): the commands call it before
they serve.
"""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import uvicorn
from attrs import frozen

from clearing_sim.tls.contexts import server_context

__all__ = ["ServerThread", "ServerTls"]


@frozen
class ServerTls:
    cert: Path
    key: Path
    client_ca: Path | None = None  # given: a client certificate is required (mTLS)

    def context(self) -> ssl.SSLContext:
        """The server's TLS context (``TlsProblem`` if the files make none)."""
        return server_context(self.cert, self.key, self.client_ca)

    def uvicorn_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"ssl_certfile": str(self.cert), "ssl_keyfile": str(self.key)}
        if self.client_ca is not None:
            options.update(ssl_ca_certs=str(self.client_ca), ssl_cert_reqs=ssl.CERT_REQUIRED)
        return options


def bind(host: str, port: int) -> socket.socket:
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when the
    # socket says it is TCP; without it every answer waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class ServerThread:
    """``start()`` binds (port 0: any free one) and serves until ``stop()``."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0,
                 tls: ServerTls | None = None) -> None:
        self.host = host
        self.tls = tls
        self.sock = bind(host, port)
        self.port: int = self.sock.getsockname()[1]
        options = tls.uvicorn_options() if tls is not None else {}
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                **options)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, daemon=True, name="issuer-gateway")

    @property
    def base_url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def _serve(self) -> None:
        self.server.run(sockets=[self.sock])

    def start(self) -> ServerThread:
        self._thread.start()
        while not self.server.started and self._thread.is_alive():
            self._thread.join(0.01)
        if not self.server.started:
            raise RuntimeError(f"the server on {self.base_url} did not start")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(10)
        self.sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
