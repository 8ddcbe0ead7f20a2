"""The world file's ``gateway`` TLS files (``caFile``, ``clientCert``, ``clientKey``): a
relative path is read from the world file's folder, whatever the current directory; a
missing or unreadable file is a problem at its own line and field (Authentication 8: the
service's client certificate and the issuer's CA bundle are files given at onboarding)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from clearing_sim.http.cli import load_world
from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.tls import write_bundle
from tests.http.conftest import SOL_QUID_YAML

WORLD = """\
world: {seed: 5}
members:
  northbank: {wallets: {GBPQ: "100.00"}}
""" + SOL_QUID_YAML % {"url": "https://127.0.0.1:9"} + """\
    gateway:
      apiBaseUrl: "https://127.0.0.1:9"
      caFile: %(ca)s
      clientCert: %(cert)s
      clientKey: %(key)s
"""
GATEWAY_LINE = WORLD.splitlines().index("    gateway:") + 1


def world_text(ca: str = "certs/ca.crt", cert: str = "certs/service-client.crt",
               key: str = "certs/service-client.key") -> str:
    return WORLD % {"ca": ca, "cert": cert, "key": key}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_bundle(tmp_path / "certs", dt.datetime.now(dt.UTC))
    return tmp_path


@pytest.fixture
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The current directory moved away from the world file's folder for the test."""
    before = Path.cwd()
    other = tmp_path_factory.mktemp("elsewhere")
    os.chdir(other)
    try:
        yield other
    finally:
        os.chdir(before)


def _gateway(world: Path) -> dict[str, str | int]:
    (issuer,) = load_world(str(world)).issuers
    return dict(issuer.gateway)


def test_relative_tls_paths_are_read_from_the_world_files_folder(folder: Path,
                                                                 elsewhere: Path) -> None:
    world = folder / "world.yaml"
    world.write_text(world_text())
    gateway = _gateway(world)
    assert gateway["caFile"] == str(folder.resolve() / "certs" / "ca.crt")
    assert gateway["clientCert"] == str(folder.resolve() / "certs" / "service-client.crt")
    assert gateway["clientKey"] == str(folder.resolve() / "certs" / "service-client.key")
    assert not (elsewhere / "certs").exists()


def test_an_absolute_tls_path_is_kept(folder: Path, elsewhere: Path) -> None:
    ca = folder / "certs" / "ca.crt"
    world = folder / "world.yaml"
    world.write_text(world_text(ca=str(ca)))
    assert _gateway(world)["caFile"] == str(ca)


@pytest.mark.parametrize(("field", "values", "reason"), [
    ("caFile", {"ca": "certs/missing.crt"}, "no such file"),
    ("clientCert", {"cert": "certs"}, "is not a file"),
    ("clientKey", {"key": '"bad\\0name"'}, "is not a usable path"),
])
def test_a_missing_or_unusable_tls_file_is_a_problem_at_its_line_and_field(
        folder: Path, elsewhere: Path, field: str, values: dict[str, str],
        reason: str) -> None:
    world = folder / "world.yaml"
    world.write_text(world_text(**values))
    with pytest.raises(ScenarioError) as caught:
        load_world(str(world))
    [line] = caught.value.lines()
    offset = {"caFile": 2, "clientCert": 3, "clientKey": 4}[field]
    assert line.startswith(f"{world}:{GATEWAY_LINE + offset}:"), line
    assert f"issuers.solquid.gateway.{field}:" in line and reason in line, line
    if values != {"key": '"bad\\0name"'}:
        assert "read from the world file's folder" in line and str(folder.resolve()) in line


def test_an_unreadable_tls_file_is_a_problem(folder: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    key = folder / "certs" / "service-client.key"
    key.chmod(0)
    world = folder / "world.yaml"
    world.write_text(world_text())
    with pytest.raises(ScenarioError) as caught:
        load_world(str(world))
    [line] = caught.value.lines()
    assert "gateway.clientKey" in line and "cannot be read" in line, line
