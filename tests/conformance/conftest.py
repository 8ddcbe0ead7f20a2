"""Fixtures for the conformance kits: free loopback ports and real receivers under uvicorn."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pytest

from clearing_sim.conformance.receiver_server import (
    HttpTransactionSource,
    ReceiverServer,
    receiver_app,
    wall_clock_s,
)
from clearing_sim.conformance.receiver_variants import (
    AckFirstReceiver,
    ReceiverDefect,
    defective,
)
from clearing_sim.http.kit_shim import shim_api_key
from clearing_sim.webhooks import NaiveReceiver, ReferenceReceiver

SECRET = "whsec_conformance_test_secret"


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports: the sockets are held open together, so two calls in a
    row cannot hand back the same port (the kernel may reuse a port just released)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


Serve = Callable[[str], tuple[ReceiverServer, int]]
#: ``serve_receiver`` kinds besides the defects' names (``ReceiverDefect``)
KINDS = ("reference", "naive", "ack-first")


@pytest.fixture
def serve_receiver() -> Iterator[Serve]:
    """``serve_receiver(kind)``: a receiver server (``KINDS`` or a ``ReceiverDefect`` value)
    and the kit's shim port it fetches from (the kit's shim must be started on that port,
    seed 0); stopped after."""
    servers: list[ReceiverServer] = []
    workers: list[AckFirstReceiver] = []

    def start(kind: str) -> tuple[ReceiverServer, int]:
        port = free_port()
        source = HttpTransactionSource(f"http://127.0.0.1:{port}/api/v1")
        hook: ReferenceReceiver | NaiveReceiver
        if kind == "naive":
            hook = NaiveReceiver(SECRET, wall_clock_s, None)
        elif kind == "reference":
            hook = ReferenceReceiver(source, shim_api_key(0), SECRET, wall_clock_s)
        elif kind == "ack-first":
            hook = AckFirstReceiver(source, shim_api_key(0), SECRET, wall_clock_s)
            workers.append(hook)
        else:
            hook = defective(ReceiverDefect(kind), source, shim_api_key(0), SECRET,
                             wall_clock_s)
        server = ReceiverServer(receiver_app(hook)).start()
        servers.append(server)
        return server, port

    yield start
    for server in servers:
        server.stop()
    for worker in workers:
        worker.close()
