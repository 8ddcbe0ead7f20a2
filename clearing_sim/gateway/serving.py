"""Run an ASGI app under uvicorn in a background thread, optionally over (m)TLS.

Public names: ``ServerThread``, ``ServerTls``, ``bind``.

Used by ``clearing-sim issuer serve`` (in the foreground) and by tests and the kit (in a
thread, on an ephemeral loopback port), through the shared ``clearing_sim.serving`` (the
header deadline and the connection cap of every server of the project; ``bind`` is its).
``ServerTls`` with ``client_ca`` requires a client certificate signed by that CA (mTLS).
``ServerTls.context()`` loads the files the way a server will (``TlsProblem`` for one that
cannot be used, an encrypted key among them, which uvicorn would otherwise ask a passphrase
for on the terminal): the commands call it before they serve.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from attrs import frozen

from clearing_sim import serving
from clearing_sim.serving import ServeLimits, bind
from clearing_sim.tls.contexts import server_context

__all__ = ["ServerThread", "ServerTls", "bind"]


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


class ServerThread(serving.ServerThread):
    """``serving.ServerThread`` over TLS when ``tls`` is given (the issuer gateway's)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0,
                 tls: ServerTls | None = None, limits: ServeLimits | None = None) -> None:
        self.tls = tls
        options = tls.uvicorn_options() if tls is not None else {}
        super().__init__(app, host, port, limits=limits,
                         scheme="http" if tls is None else "https", **options)
