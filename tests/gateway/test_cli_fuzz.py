"""Any arguments to ``issuer serve``, ``issuer certs`` and ``conformance issuer``: exit 0, 1
or 2 with a message, never a traceback (DESIGN.md, "Bad input": the CLI names what is wrong
and exits 2). Hypothesis picks options and values from each command's vocabulary, mixed with
junk; ``serve`` always ends on a port that is taken, so it can never start serving."""

from __future__ import annotations

import contextlib
import datetime as dt
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.conformance.cli import conformance
from clearing_sim.gateway.cli import issuer
from clearing_sim.tls import write_bundle

FILES = Path("/nonexistent-dir/for-fuzz")  # replaced by the fixture's folder
_JUNK = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                max_size=12)
_NUMBERS = st.sampled_from(["0", "1", "-1", "65536", "3.5", "abc", "", "1e9", "NaN", "99999",
                            "2.22", "Infinity", "5", "120"])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz-files")
    write_bundle(folder / "certs", dt.datetime.now(dt.UTC))
    (folder / "junk.pem").write_text("not PEM\n")
    (folder / "a-file").write_text("x")
    return folder


@pytest.fixture(scope="module")
def taken_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def _paths(files: Path) -> st.SearchStrategy[str]:
    names = ["certs/ca.crt", "certs/service-client.crt", "certs/service-client.key",
             "certs/issuer-server.crt", "certs/issuer-server.key", "certs/service-webhooks.crt",
             "certs/service-webhooks.key", "certs/service-client.csr", "junk.pem", "a-file",
             "certs", "missing.pem"]
    known = st.sampled_from([str(files / n) for n in names])
    return st.one_of(known, known, known, _JUNK)


def _argv(options: dict[str, st.SearchStrategy[str] | None]) -> st.SearchStrategy[list[str]]:
    """A few of ``options`` (None: a flag), each with a value from its strategy, in any
    order, sometimes with a stray word."""
    def one(name: str) -> st.SearchStrategy[list[str]]:
        values = options[name]
        return st.just([name]) if values is None else values.map(lambda v: [name, v])

    chosen = st.lists(st.sampled_from(sorted(options)).flatmap(one), max_size=8)
    junk: st.SearchStrategy[list[str]] = st.sampled_from([["--help"], ["--nope"], ["-x"]]) \
        | st.lists(_JUNK, min_size=1, max_size=1)
    stray = st.one_of(st.just([]), st.just([]), st.just([]), st.just([]), junk)
    return st.tuples(chosen, stray).map(lambda t: [w for pair in t[0] for w in pair] + t[1])


def _no_traceback(result: Result, allowed: tuple[int, ...] = (0, 1, 2)) -> None:
    assert result.exit_code in allowed, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.output


_SETTINGS = settings(max_examples=120, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture,
                                            HealthCheck.too_slow])


@_SETTINGS
@given(data=st.data())
def test_issuer_serve_never_tracebacks(data: Any, files: Path, taken_port: int) -> None:
    paths = _paths(files)
    argv = data.draw(_argv({
        "--host": st.sampled_from(["127.0.0.1", "::1", ""]), "--seed": _NUMBERS,
        "--mode": st.sampled_from(["2", "3", "4", ""]),
        "--defect": st.sampled_from(["replay-creates-second", "unsigned-callbacks", "nope",
                                     "list", ""]),
        "--step-ms": _NUMBERS, "--tls-cert": paths, "--tls-key": paths, "--client-ca": paths,
        "--bearer": _JUNK, "--oauth-client-id": _JUNK, "--oauth-client-secret": _JUNK,
        "--token-ttl": _NUMBERS,
        "--webhook-url": st.one_of(_JUNK, st.just("https://127.0.0.1:9/h")),
        "--webhook-secret": _JUNK, "--webhook-ca": paths}))
    result = CliRunner().invoke(issuer, ["serve", *argv, "--port", str(taken_port)])
    _no_traceback(result, (0, 2))


@_SETTINGS
@given(data=st.data())
def test_issuer_certs_never_tracebacks(data: Any, files: Path, tmp_path: Path) -> None:
    out = st.one_of(st.sampled_from([str(tmp_path / "out"), str(files / "a-file"),
                                     str(files / "a-file" / "below"), str(files / "certs")]),
                    _JUNK.map(lambda j: str(tmp_path / j) if j else ""))
    argv = data.draw(_argv({"--out": out, "--days": _NUMBERS, "--csr": _paths(files)}))
    with contextlib.chdir(tmp_path):  # "--out ''" writes where it runs: not in the checkout
        result = CliRunner().invoke(issuer, ["certs", *argv])
    _no_traceback(result, (0, 2))


@settings(_SETTINGS, max_examples=400)
@given(data=st.data())
def test_conformance_issuer_never_tracebacks(data: Any, files: Path, tmp_path: Path) -> None:
    """Against gateways that cannot be reached (a verdict would need a real one): whatever
    the options, bad usage or no gateway is exit 2."""
    paths = _paths(files)
    urls = st.sampled_from(["http://127.0.0.1:9", "https://127.0.0.1:9", "ftp://x", "",
                            "http://", "https://127.0.0.1:9/base/"])
    argv = data.draw(_argv({
        "--api-base-url": urls, "--mode": st.sampled_from(["2", "3", "x"]),
        "--ca-file": paths, "--client-cert": paths, "--client-key": paths,
        "--bearer": _JUNK, "--token-url": urls, "--client-id": _JUNK,
        "--client-secret": _JUNK, "--provider-states-url": urls, "--triggers": None,
        "--reject-amount": _NUMBERS, "--silence-amount": _NUMBERS,
        "--approval-sla-seconds": _NUMBERS, "--webhook-secret": _JUNK, "--no-webhooks": None,
        "--callback-port": _NUMBERS, "--callback-tls-cert": paths,
        "--callback-tls-key": paths, "--patience-ms": _NUMBERS, "--timeout-s": _NUMBERS,
        "--seed": _NUMBERS, "--junit": st.just(str(tmp_path / "k.xml")),
        "--html": st.just(str(tmp_path / "k.html")), "--json": None}))
    result = CliRunner().invoke(conformance, ["issuer", *argv])
    _no_traceback(result, (2,) if "--help" not in argv else (0, 2))
