"""Fixtures for the issuer gateway: certificates, the reference gateway in a thread or as
``clearing-sim issuer serve`` in a subprocess (both on loopback, both stopped by the test)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from clearing_sim.conformance.cli import conformance
from clearing_sim.tls import CertBundle, write_bundle


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertBundle:
    return write_bundle(tmp_path_factory.mktemp("gateway-certs"), dt.datetime.now(dt.UTC))


class Served:
    """``clearing-sim issuer serve`` running in a subprocess."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        self.proc = subprocess.Popen([sys.executable, "-m", "clearing_sim", "issuer", "serve",
                                      "--port", "0", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        banner = self.proc.stdout.readline()
        if " on " not in banner:
            self.stop()
            raise AssertionError(f"issuer serve did not start: {banner}{self.proc.stderr}")
        self.banner = banner
        self.base_url = banner.rsplit(" on ", 1)[1].strip()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def serve() -> Iterator[type[Served]]:
    started: list[Served] = []

    class Tracked(Served):
        def __init__(self, *args: str) -> None:
            super().__init__(*args)
            started.append(self)

    yield Tracked
    for served in started:
        served.stop()


def run_kit(base_url: str, *extra: str) -> tuple[int, dict[str, Any]]:
    """``clearing-sim conformance issuer --json`` against ``base_url`` (with its provider
    states): the exit code (0 or 1, a verdict) and the JSON report."""
    result = CliRunner().invoke(conformance, [
        "issuer", "--api-base-url", base_url, "--patience-ms", "200",
        "--provider-states-url", base_url + "/_pact/provider-states", "--json", *extra])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)
