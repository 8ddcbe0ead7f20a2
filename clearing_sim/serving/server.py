"""One way of serving an ASGI app for the project's servers: ``GuardedServer``.

Public names: ``BACKLOG``, ``HANDSHAKE_FAILURES_KEPT``, ``GuardedServer``, ``ServeLimits``,
``Served``, ``ServerThread``, ``bind``, ``limit_options``.

``clearing-sim serve`` (the shim), ``receiver serve``, ``issuer serve`` and the issuer
kit's callback receiver (and the threads tests and kits run them on) all serve through
``GuardedServer``, a ``uvicorn.Server`` with:

- the guarded h11 protocol (``clearing_sim.serving.guard``): the header-read deadline and
  the connection cap that evicts connections without a complete request head;
- a cap below the process's descriptor limit (``ServeLimits.cap``): room is kept for the
  connections the ``accept()`` rounds take before the cap sees them (``BACKLOG`` a round)
  and for the server's own files, so the cap, not ``accept()`` failing, is what a flood
  meets;
- a TLS handshake deadline (``ssl_handshake_timeout``) equal to the header deadline: a
  peer that opens a TLS connection and never finishes its handshake is not yet a
  connection the gate sees (asyncio hands the protocol over after the handshake), so
  without it such a peer is held for asyncio's default 60 s; a handshake that fails (a
  client that does not trust the certificate, plain HTTP to an https port) is kept in
  ``failed_handshakes()`` (the first ``HANDSHAKE_FAILURES_KEPT``), as the kit reports them;
- an event-loop exception handler that counts asyncio's ``socket.accept() out of system
  resource`` (with its traceback, once per failed accept) in the gate's report instead;
- ``Served`` around the app: an absolute-form request target (``GET http://h/p HTTP/1.1``,
  RFC 9112 §3.2.2, which a server must accept) is served as its origin form ``/p``, and a
  request whose body was cut off (Starlette's ``ClientDisconnect`` while reading it: the
  peer closed, half closed or reset before the declared ``Content-Length`` or the last
  chunk) ends without an answer or a traceback: nobody is there to read one, and the
  handler, which reads its body first, did nothing.

``limit_options`` adds ``--header-timeout`` and ``--connections-max`` to a command.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import resource
import socket
import ssl
import threading
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import click
import uvicorn
from attrs import frozen
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from clearing_sim.serving.guard import Gate, GuardedH11Protocol, guarded

__all__ = ["BACKLOG", "HANDSHAKE_FAILURES_KEPT", "GuardedServer", "ServeLimits", "Served",
           "ServerThread", "bind", "limit_options"]

BACKLOG = 64  # the most connections one accept() round of asyncio takes
_LISTEN_QUEUE = 2048  # connections the kernel holds for the next rounds (a burst of clients)
# Descriptors the cap leaves free: a connection reaches the gate (connection_made) two loop
# iterations after its accept() and an evicted one is closed one iteration after, while
# each iteration accepts up to BACKLOG more: four rounds in flight, and the server's files.
_RESERVED = 4 * BACKLOG + 128
_CAP_MOST = 10_000
_ACCEPT_FAILED = "accept() failures at the descriptor limit"
HANDSHAKE_FAILURES_KEPT = 100


def _recording(failures: list[str]) -> type[ssl.SSLObject]:
    """An ``SSLObject`` class whose failed handshakes are appended to ``failures``: those
    that raise, and those the peer abandoned (asyncio's own client closes without an alert
    when it does not trust the certificate), seen when the object is let go unfinished.
    asyncio reports neither outside debug mode."""
    def note(text: str) -> None:
        if len(failures) < HANDSHAKE_FAILURES_KEPT:
            failures.append(text)

    def unfinished(state: list[bool]) -> None:
        if not state[0]:
            note("the peer closed the connection during the TLS handshake (a client that "
                 "does not trust the certificate may close without an alert)")

    class Recording(ssl.SSLObject):
        def do_handshake(self) -> None:
            state: list[bool] | None = self.__dict__.get("_handshake_state")
            if state is None:
                state = self.__dict__["_handshake_state"] = [False]
                weakref.finalize(self, unfinished, state)
            try:
                super().do_handshake()
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                raise
            except ssl.SSLError as error:
                state[0] = True  # told here
                note(str(error))
                raise
            state[0] = True

    return Recording


@frozen
class ServeLimits:
    header_timeout_s: float = 10.0
    connections_max: int | None = None  # None: below the descriptor limit (``cap``)

    def cap(self) -> int:
        """``connections_max``, or what the process's descriptor limit leaves room for."""
        if self.connections_max is not None:
            return self.connections_max
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return _CAP_MOST
        room = soft - _RESERVED
        return min(_CAP_MOST, room if room >= 64 else max(8, soft // 2))


def _origin_form(scope: Scope) -> Scope:
    """An absolute-form target's origin form (its host is the peer's business, not ours)."""
    raw = bytes(scope.get("raw_path") or b"")
    if not raw[:8].lower().startswith((b"http://", b"https://")):
        return scope
    authority_and_path = raw.split(b"://", 1)[1]
    slash = authority_and_path.find(b"/")
    raw_path = b"/" if slash < 0 else authority_and_path[slash:]
    return {**scope, "raw_path": raw_path, "path": unquote(raw_path.decode("ascii"))}


class Served:
    """The app as the servers serve it (absolute-form targets, cut-off bodies)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self.app(_origin_form(scope), receive, send)
        except ClientDisconnect:  # the body was cut off: its handler did nothing with it
            return


class GuardedServer(uvicorn.Server):
    """``uvicorn.Server`` for ``app`` under ``limits`` (``options``: ``uvicorn.Config``'s)."""

    def __init__(self, app: ASGIApp, limits: ServeLimits | None = None, *,
                 protocol: type[GuardedH11Protocol] = GuardedH11Protocol,
                 **options: Any) -> None:
        limits = limits or ServeLimits()
        self.limits = limits
        self.handshake_failures: list[str] = []
        self.gate = Gate(limits.header_timeout_s, limits.cap())
        options.setdefault("log_level", "warning")
        options.setdefault("access_log", False)
        super().__init__(uvicorn.Config(Served(app), http=guarded(protocol, self.gate),
                                        backlog=BACKLOG, **options))
        self._previous_handler: Any = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        loop = asyncio.get_running_loop()
        self._previous_handler = loop.get_exception_handler()
        loop.set_exception_handler(self._exception)
        if self.config.ssl is None:
            await super().startup(sockets)
        else:  # uvicorn passes no handshake timeout: the header deadline bounds it too
            self.config.ssl.sslobject_class = _recording(self.handshake_failures)
            create_server = loop.create_server
            loop.create_server = functools.partial(  # type: ignore[method-assign]
                create_server, ssl_handshake_timeout=self.limits.header_timeout_s)
            try:
                await super().startup(sockets)
            finally:
                del loop.create_server  # the loop's own method again
        for sock in sockets or ():  # asyncio listened with BACKLOG: queue a burst, accept
            sock.listen(_LISTEN_QUEUE)  # it BACKLOG at a time

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets)
        self.gate.report()
        asyncio.get_running_loop().set_exception_handler(self._previous_handler)

    def failed_handshakes(self) -> list[str]:
        """Why TLS handshakes failed so far. One the peer abandoned is known when its
        connection's objects are let go, which a reference cycle in asyncio's TLS transport
        delays until a garbage collection: one is run first."""
        gc.collect()
        return list(self.handshake_failures)

    def _exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if str(context.get("message", "")).startswith("socket.accept() out of system resource"):
            self.gate.note(_ACCEPT_FAILED)
        elif self._previous_handler is not None:
            self._previous_handler(loop, context)
        else:
            loop.default_exception_handler(context)


def bind(host: str, port: int) -> socket.socket:
    """A listening IPv4 TCP socket on ``host:port``."""
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when the
    # socket says it is TCP; without it every answer waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(_LISTEN_QUEUE)
    sock.set_inheritable(True)
    return sock


class ServerThread:
    """``app`` under a ``GuardedServer`` on a thread of its own: ``start()`` binds (port 0:
    any free one) and serves until ``stop()``. ``options``: ``uvicorn.Config``'s (TLS)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, *,
                 limits: ServeLimits | None = None, scheme: str = "http",
                 **options: Any) -> None:
        self.host = host
        self.scheme = scheme
        self.sock = bind(host, port)
        self.port: int = self.sock.getsockname()[1]
        self.server = GuardedServer(app, limits, lifespan="off", **options)
        self._thread = threading.Thread(target=self._serve, daemon=True,
                                        name=f"server:{self.port}")

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

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


def limit_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--header-timeout`` and ``--connections-max`` for a serving command, given to it as
    ``limits: ServeLimits``."""
    @functools.wraps(command)
    def with_limits(*args: Any, header_timeout_s: float, connections_max: int | None,
                    **kwargs: Any) -> Any:
        return command(*args, limits=ServeLimits(header_timeout_s, connections_max), **kwargs)

    with_connections = click.option(
        "--connections-max", type=click.IntRange(min=1), default=None, metavar="N",
        envvar="CLEARING_SIM_CONNECTIONS_MAX", show_envvar=True,
        help="At most N open connections; when full, the oldest one without a complete "
             "request head is closed for a new one.  [default: the descriptor limit less "
             f"{_RESERVED}, at most {_CAP_MOST}]")(with_limits)
    return click.option(
        "--header-timeout", "header_timeout_s", type=click.FloatRange(min=0, min_open=True),
        default=10.0, show_default=True, metavar="SECONDS",
        envvar="CLEARING_SIM_HEADER_TIMEOUT", show_envvar=True,
        help="Close a connection that has not sent a complete request line and headers "
             "within SECONDS.")(with_connections)
