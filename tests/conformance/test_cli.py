"""``clearing-sim conformance receiver`` and ``clearing-sim receiver serve``: a verdict per
check, the JUnit/JSON/HTML reports, exit 0/1/2, never a traceback (DESIGN.md, Bad input)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.cli import main
from clearing_sim.conformance.receiver_kit import CHECKS
from clearing_sim.conformance.receiver_server import (
    HttpTransactionSource,
    ReceiverServer,
    receiver_app,
    wall_clock_s,
)
from clearing_sim.http.kit_shim import shim_api_key
from clearing_sim.webhooks import ReferenceReceiver
from tests.conformance.conftest import SECRET, Serve, free_ports


@pytest.fixture
def unused_port() -> int:
    return free_ports(1)[0]


def _kit(*args: str) -> list[str]:
    return ["conformance", "receiver", *args]


def test_show_shim_prints_what_to_configure_the_receiver_with() -> None:
    result = CliRunner().invoke(main, _kit("--show-shim", "--shim-port", "9999", "--seed", "4"))
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "export CLEARING_SIM_API_BASE_URL=http://127.0.0.1:9999",
        f"export CLEARING_SIM_API_KEY={shim_api_key(4)}"]
    assert shim_api_key(4) != shim_api_key(0)


@pytest.mark.parametrize(("args", "base"), [
    (("--shim-public-url", "http://host.docker.internal:4243/"),
     "http://host.docker.internal:4243"),
    (("--shim-public-url", "https://kit.example/shim"), "https://kit.example/shim"),
    (("--shim-host", "0.0.0.0", "--shim-port", "4243"), "http://127.0.0.1:4243"),
    (("--shim-host", "::", "--shim-port", "4243"), "http://[::1]:4243"),
])
def test_show_shim_announces_the_url_the_receiver_reaches(args: tuple[str, ...],
                                                           base: str) -> None:
    """A receiver in a container or behind a proxy reaches the shim at another address than
    the one it listens on (``--shim-public-url``); bound to every interface, the shim is
    announced on loopback, never at 0.0.0.0."""
    result = CliRunner().invoke(main, _kit("--show-shim", *args))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"export CLEARING_SIM_API_BASE_URL={base}"


def test_a_receiver_given_the_public_url_passes_through_it(unused_port: int) -> None:
    """End to end: the reference receiver fetches from ``http://localhost:PORT`` (the
    announced public URL) while the shim listens on 127.0.0.1; every check passes and the
    kit's first line names the public URL."""
    public = f"http://localhost:{unused_port}"
    hook = ReferenceReceiver(HttpTransactionSource(f"{public}/api/v1"), shim_api_key(0),
                             SECRET, wall_clock_s)
    server = ReceiverServer(receiver_app(hook)).start()
    try:
        result = CliRunner().invoke(main, _kit(
            f"{server.url}/webhooks", "--secret", SECRET, "--shim-port", str(unused_port),
            "--shim-public-url", public, "--probe-url", f"{server.url}/transactions/{{id}}"))
    finally:
        server.stop()
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith(f"kit shim on {public}  API key ")


def test_the_reference_receiver_exits_0_and_writes_every_report(tmp_path: Path,
                                                                 serve_receiver: Serve) -> None:
    server, port = serve_receiver("reference")
    junit, html = tmp_path / "kit.xml", tmp_path / "kit.html"
    result = CliRunner().invoke(main, _kit(
        f"{server.url}/webhooks", "--secret", SECRET, "--shim-port", str(port),
        "--probe-url", f"{server.url}/transactions/{{id}}", "--junit", str(junit),
        "--html", str(html)))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"kit shim on http://127.0.0.1:{port}  API key sk_sandbox_")
    assert [ln.split()[:2] for ln in lines if ln.startswith("PASS  ")] == \
        [["PASS", c] for c in CHECKS]
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == str(len(CHECKS))
    assert suite.get("failures") == "0"
    assert "valid-delivery" in html.read_text()


def test_the_naive_receiver_exits_1_and_json_names_the_failures(serve_receiver: Serve) -> None:
    server, port = serve_receiver("naive")
    result = CliRunner().invoke(main, _kit(f"{server.url}/webhooks", "--secret", SECRET,
                                           "--shim-port", str(port), "--json",
                                           "--process-within", "1"))
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["exitCode"] == 1 and report["counts"]["fail"] == 7
    assert {c["id"] for c in report["checks"] if c["verdict"] == "fail"} == {
        "timestamp-stale", "timestamp-future", "refusal-not-remembered",
        "fetch-failure-retried", "reentry-not-duplicate", "reordered-pair",
        "fetch-after-delivery"}
    skipped = {c["id"]: c["reason"] for c in report["checks"] if c["verdict"] == "skip"}
    assert set(skipped) == {"state-after-fetch", "view-matches-service"}
    assert all(reason.startswith("no --probe-url") for reason in skipped.values())
    assert "time limit: 1 s after an answer" in " ".join(report["notes"])


@pytest.mark.parametrize("args", [
    _kit(), _kit("http://127.0.0.1:1/x"), _kit("ftp://x", "--secret", "s"),
    _kit("http://x", "--secret", "s", "--probe-url", "not a url"),
    _kit("http://x", "--secret", "s", "--shim-port", "70000"),
    _kit("--show-shim", "--shim-public-url", "kit.example:4243"),
    _kit("--show-shim", "--shim-public-url", "http://kit.example/?a=1"),
    _kit("http://[", "--secret", "s"), _kit("http://x", "--secret", "s", "--probe-url", "http://["),
    _kit("http://127.0.0.1:99999/x", "--secret", "s"),  # was OverflowError inside httpx
    _kit("http://127.0.0.1:0/x", "--secret", "s"),
    _kit("http://x", "--secret", "s", "--process-within", "0"),
    ["receiver", "serve", "--secret", "s", "--defect", "no-such-defect", "--api-base-url",
     "http://x", "--api-key", "k"],
    ["receiver", "serve", "--secret", "s", "--naive", "--ack-first"],
    ["receiver", "serve", "--secret", "s"], ["receiver", "serve"],
    ["receiver", "serve", "--secret", "s", "--api-base-url", "x", "--api-key", "k"],
])
def test_bad_usage_exits_2_with_a_message(args: list[str]) -> None:
    result = CliRunner().invoke(main, args, env={"CLEARING_SIM_WEBHOOK_SECRET": ""})
    assert result.exit_code == 2, (args, result.output)
    assert "Error" in result.output and "Traceback" not in result.output


def test_an_unreachable_receiver_exits_2() -> None:
    receiver_port, shim_port = free_ports(2)  # distinct: the shim must not answer as receiver
    result = CliRunner().invoke(main, _kit(f"http://127.0.0.1:{receiver_port}/hooks", "--secret",
                                           SECRET, "--shim-port", str(shim_port)))
    assert result.exit_code == 2
    assert "the receiver did not answer" in result.output


@pytest.mark.parametrize(("host", "warned"), [("0.0.0.0", True), ("127.0.0.1", False)])
def test_a_shim_beyond_loopback_is_said_to_have_a_public_key(host: str, warned: bool) -> None:
    """Issue 31 §8: the kit's API key follows from ``--seed`` alone; bound beyond loopback,
    the kit says so (docs/conformance.md)."""
    receiver_port, shim_port = free_ports(2)
    result = CliRunner().invoke(main, _kit(f"http://127.0.0.1:{receiver_port}/hooks", "--secret",
                                           SECRET, "--shim-port", str(shim_port),
                                           "--shim-host", host))
    assert result.exit_code == 2
    assert ("follows from --seed 0 alone" in result.output) is warned


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30).filter(lambda s: s.isprintable()),
                max_size=4))
def test_any_arguments_to_the_kit_never_give_a_traceback(args: list[str]) -> None:
    result = CliRunner().invoke(main, _kit("--show-shim", *args) if not args else _kit(*args,
                                           "--shim-port", "1"))
    assert result.exit_code in (0, 2), (args, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), args


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.text(max_size=40),
                 st.builds(lambda host, tail: f"http://{host}{tail}",
                           st.text(min_size=1, max_size=15),
                           st.sampled_from(["", "/", ":8790", ":99999", "/p?q=1", "#f"]))))
def test_any_shim_public_url_is_announced_or_refused_with_exit_2(value: str) -> None:
    """``--shim-public-url``: whatever the value, ``--show-shim`` announces it (an http(s)
    base URL, without its last ``/``) or exits 2 with a message; never a traceback."""
    result = CliRunner().invoke(main, _kit("--show-shim", "--shim-public-url", value))
    assert result.exit_code in (0, 2), (value, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), value
    if result.exit_code == 0:
        assert result.output.split("\n")[0] == \
            f"export CLEARING_SIM_API_BASE_URL={value.rstrip('/')}"
