"""Running the receiver kit from the command line: its own shim on loopback, then the battery.

Public names: ``KitShim``, ``ServedShim``, ``ShimFactory``, ``run_kit``, ``shim_base_url``.

The kit serves a fresh world of its own (manual clock, the given seed) with the kit's cast
(``add_cast``: a member holding an issuer-backed asset) under uvicorn, on the same event
loop as the battery, so the receiver's fetches are served while the kit waits for its
answers. The member's API key depends only on the seed (the world's id streams; the kit's
shim is served with ``seed_only_keys``, unlike ``clearing-sim serve``), so a receiver can be
configured before the kit runs (``clearing-sim conformance receiver --show-shim``).

The shim is handed in, not imported (the kit sits below the HTTP shim that serves it):
``run_kit(options, shim_factory, ...)`` calls ``shim_factory(seed, operator_token)`` for a
``ServedShim`` (the ASGI app, its served world and clock as the stage's protocols, the
member's API key, the HTTP protocol class uvicorn serves it with).
``clearing_sim.http.kit_shim`` gives the shim's factory and binds it:
``run_receiver_kit`` and ``shim_api_key`` there.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
from collections.abc import Callable

import httpx
from attrs import frozen
from starlette.types import ASGIApp

from clearing_sim.conformance.receiver_kit import KitOptions, run_battery
from clearing_sim.conformance.receiver_stage import ServedWorld, Stage, SteppedClock
from clearing_sim.conformance.report import Report
from clearing_sim.serving import GuardedServer
from clearing_sim.serving.guard import GuardedH11Protocol

__all__ = ["KitShim", "ServedShim", "ShimFactory", "run_kit", "shim_base_url"]


@frozen
class KitShim:
    """Where the receiver under test finds the API, and the operator token of the shim."""

    base_url: str
    api_key: str
    operator_token: str


@frozen
class ServedShim:
    """A fresh shim for the kit: the app to serve, its world and clock (what the stage
    uses), the kit's member's API key, and the HTTP/1.1 protocol class to serve it with."""

    app: ASGIApp
    sim: ServedWorld
    clock: SteppedClock
    api_key: str
    protocol: type[GuardedH11Protocol] = GuardedH11Protocol


#: ``(seed, operator_token) -> ServedShim``: a fresh world with the kit's cast (``add_cast``)
ShimFactory = Callable[[int, str], ServedShim]


def shim_base_url(host: str, port: int) -> str:
    """The URL a receiver on this machine reaches a shim bound to ``host:port`` at (bound to
    every interface: loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))  # OSError: the door says it cannot listen (exit 2)
    sock.listen(128)
    return sock


async def run_kit(options: KitOptions, shim_factory: ShimFactory, *, host: str = "127.0.0.1",
                  port: int = 0, seed: int = 0,
                  on_ready: Callable[[KitShim], None] | None = None,
                  public_url: str | None = None) -> Report:
    """Serve the factory's shim on ``host:port``, run the battery against ``options.url``, stop.
    ``public_url``: the shim's base URL as the receiver reaches it, announced instead of the
    bound address (a receiver in a container, behind a proxy).

    ``OSError`` when the port cannot be bound; ``TargetUnreachable`` when the receiver
    gives no answer to the first delivery."""
    token = secrets.token_urlsafe(18)
    served = shim_factory(seed, token)
    sock = _bind(host, port)
    bound = sock.getsockname()
    shim = KitShim(public_url or shim_base_url(str(bound[0]), bound[1]), served.api_key, token)
    server = GuardedServer(served.app, lifespan="on", protocol=served.protocol)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if serving.done():
                serving.result()
            await asyncio.sleep(0.01)
        if on_ready is not None:
            on_ready(shim)
        stage = Stage.open(served.sim, served.clock, served.api_key)
        try:
            async with httpx.AsyncClient() as client:
                return await run_battery(stage, options, client)
        finally:
            stage.close()
    finally:
        server.should_exit = True
        await serving
        sock.close()
