"""The issuer conformance kit against the reference gateway over loopback HTTP.

Spec, "Issuer conformance suite": happy path per instruction type; explicit rejection with
earmark cancelled and asset returned; silence beyond approvalSlaSeconds parks; replay with the
same idempotency key; verification of callback signatures. Against ``issuer serve`` with mTLS
and an OAuth bearer every scenario passes; against each ``--defect`` the scenarios that should
catch it fail and the others pass.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from clearing_sim.conformance.cli import conformance
from clearing_sim.gateway.kit import _probe
from clearing_sim.gateway.reference import (
    DEFECTS,
    Defect,
    GatewaySettings,
    ReferenceIssuer,
    create_app,
)
from clearing_sim.gateway.serving import ServerThread
from clearing_sim.gateway.transport import GatewayConfig
from clearing_sim.tls import CertBundle
from tests.gateway.conftest import run_kit

from .conftest import Served

SCENARIOS = {"happy_path_burn", "happy_path_mint", "rejection_unwinds", "silence_parks",
             "idempotent_replay", "callback_signatures", "waits_for_execute"}


def _failed(report: dict[str, Any]) -> set[str]:
    return {c["id"] for c in report["checks"] if c["verdict"] == "fail"}


def _mtls(certs: CertBundle) -> list[str]:
    return ["--ca-file", str(certs.ca_cert), "--client-cert", str(certs.client_cert),
            "--client-key", str(certs.client_key)]


def test_every_mandatory_scenario_passes_over_mtls_with_an_oauth_token(
        serve: type[Served], certs: CertBundle, tmp_path: Path) -> None:
    gateway = serve("--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key),
                    "--client-ca", str(certs.ca_cert), "--oauth-client-id", "svc",
                    "--oauth-client-secret", "s3cret")
    assert gateway.base_url.startswith("https://127.0.0.1:")
    junit, page = tmp_path / "kit.xml", tmp_path / "kit.html"
    started = time.monotonic()
    code, report = run_kit(gateway.base_url, *_mtls(certs), "--token-url",
                        gateway.base_url + "/oauth/token", "--client-id", "svc",
                        "--client-secret", "s3cret", "--junit", str(junit),
                        "--html", str(page))
    assert code == 0, _failed(report)
    _junit_times_are_wall_seconds(junit, report, time.monotonic() - started)
    assert {c["id"] for c in report["checks"]} == SCENARIOS
    verdicts = {c["id"]: c["verdict"] for c in report["checks"]}
    assert verdicts.pop("waits_for_execute") == "skip"  # Mode 3: no execute call
    assert set(verdicts.values()) == {"pass"}
    assert report["score"] == {"passed": 6, "applicable": 6, "percent": 100, "notApplied": [
        {"id": "waits_for_execute", "reason": "not applicable: Mode 3 has no execute call "
                                              "(the pre-burn transfer moves the asset at once)"}]}
    assert b"<testsuite" in junit.read_bytes()
    assert "happy_path_burn" in page.read_text()
    happy = next(c for c in report["checks"] if c["id"] == "happy_path_burn")
    exchanges = happy["evidence"]["exchanges"]
    assert any("/burn-instructions" in e["request"]["url"] for e in exchanges)
    assert all(("Bearer ***" in json.dumps(e["request"])) for e in exchanges)
    signatures = next(c for c in report["checks"] if c["id"] == "callback_signatures")
    assert any("verified" in note for note in signatures["evidence"]["notes"])


def test_mode_2_with_a_static_bearer_token_passes(serve: type[Served]) -> None:
    gateway = serve("--mode", "2", "--bearer", "t0ken")
    code, report = run_kit(gateway.base_url, "--mode", "2", "--bearer", "t0ken")
    assert code == 0, _failed(report)


def _junit_times_are_wall_seconds(junit: Path, report: dict[str, Any], wall_s: float) -> None:
    """Issue 27: the JUnit ``time`` a CI dashboard adds up is the wall time of the run (it
    was virtual time, ``time="1844.7"`` for a 3-second run); the virtual span is the
    ``virtualSeconds`` property of the suite and of each testcase."""
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None

    def virtual_s(node: ElementTree.Element) -> float:
        found = node.find("properties/property[@name='virtualSeconds']")
        assert found is not None, ElementTree.tostring(node)
        return float(found.get("value", ""))

    assert 0 < float(suite.get("time", "")) <= wall_s
    assert virtual_s(suite) > 10 * wall_s  # the approval SLA alone is minutes of virtual time
    silence = next(c for c in suite.iter("testcase") if c.get("name", "").startswith(
        "silence_parks"))
    assert float(silence.get("time", "")) <= wall_s < virtual_s(silence)
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["silence_parks"]["virtualMs"] == 1000 * virtual_s(silence)
    assert report["durationMs"] <= 1000 * wall_s < report["virtualMs"]


@pytest.fixture(scope="module")
def threads() -> Iterator[dict[tuple[Defect, str], str]]:
    """One reference gateway per defect (in the mode it shows in), in threads."""
    running: dict[tuple[Defect, str], ServerThread] = {}
    for defect, info in DEFECTS.items():
        mode = info.modes[-1]
        issuer = ReferenceIssuer(GatewaySettings(mode=mode, defects=frozenset({defect})))
        running[(defect, mode)] = ServerThread(create_app(issuer)).start()
    yield {key: server.base_url for key, server in running.items()}
    for server in running.values():
        server.stop()


@pytest.mark.parametrize("defect", list(Defect), ids=[d.value for d in Defect])
def test_each_defect_fails_exactly_the_scenarios_that_catch_it(
        defect: Defect, threads: dict[tuple[Defect, str], str]) -> None:
    info = DEFECTS[defect]
    mode = info.modes[-1]
    code, report = run_kit(threads[(defect, mode)], "--mode", mode[-1])
    assert code == 1
    assert _failed(report) == set(info.catches), report
    for check in report["checks"]:  # each failure names the rule broken, not a symptom
        if check["verdict"] == "fail":
            assert info.names in check["reason"], (check["id"], check["reason"])


def test_an_unreachable_gateway_is_exit_2() -> None:
    result = CliRunner().invoke(conformance, [
        "issuer", "--api-base-url", "http://127.0.0.1:9", "--triggers"])
    assert result.exit_code == 2
    assert "cannot be reached" in result.output


def test_a_wrong_token_is_exit_2(serve: type[Served]) -> None:
    gateway = serve("--bearer", "right")
    result = CliRunner().invoke(conformance, [
        "issuer", "--api-base-url", gateway.base_url, "--bearer", "wrong", "--triggers"])
    assert result.exit_code == 2
    assert "refuses the kit's credentials" in result.output


def test_trigger_values_arm_rejection_and_silence_without_provider_states(
        serve: type[Served]) -> None:
    gateway = serve("--webhook-secret", "whsec_conformance_kit")
    result = CliRunner().invoke(conformance, [
        "issuer", "--api-base-url", gateway.base_url, "--triggers", "--no-webhooks",
        "--patience-ms", "200", "--json"])
    report = json.loads(result.output)
    assert result.exit_code == 0, _failed(report)
    skipped = {c["id"] for c in report["checks"] if c["verdict"] == "skip"}
    assert skipped == {"callback_signatures", "waits_for_execute"}


async def _large_answer(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b" " * 70_000})


def test_a_gateway_whose_probe_answer_is_too_large_is_reached_not_unreachable() -> None:
    """An answer over the 64 KiB bound is an answer (a malformed one for the checks to
    judge), not a gateway that "cannot be reached" (exit 2 before any check ran)."""
    with ServerThread(_large_answer) as server:
        _probe(GatewayConfig(server.base_url))  # raises KitUnusable when unreachable
