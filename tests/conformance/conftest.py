"""Fixtures for the conformance kits: free loopback ports and real receivers under uvicorn."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pytest

from clearing_sim.conformance.receiver_run import shim_api_key
from clearing_sim.conformance.receiver_server import (
    HttpTransactionSource,
    ReceiverServer,
    receiver_app,
    wall_clock_s,
)
from clearing_sim.webhooks import NaiveReceiver, ReferenceReceiver

SECRET = "whsec_conformance_test_secret"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


Serve = Callable[[str], tuple[ReceiverServer, int]]


@pytest.fixture
def serve_receiver() -> Iterator[Serve]:
    """``serve_receiver("reference" | "naive")``: a receiver server and the kit's shim port it
    fetches from (the kit's shim must be started on that port, seed 0); stopped after."""
    servers: list[ReceiverServer] = []

    def start(kind: str) -> tuple[ReceiverServer, int]:
        port = free_port()
        hook: ReferenceReceiver | NaiveReceiver
        if kind == "naive":
            hook = NaiveReceiver(SECRET, wall_clock_s, None)
        else:
            hook = ReferenceReceiver(HttpTransactionSource(f"http://127.0.0.1:{port}/api/v1"),
                                     shim_api_key(0), SECRET, wall_clock_s)
        server = ReceiverServer(receiver_app(hook)).start()
        servers.append(server)
        return server, port

    yield start
    for server in servers:
        server.stop()
