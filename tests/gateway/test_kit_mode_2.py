"""Mode 2 through the kit: a gateway that holds where the spec says and one that moves first.

Spec, issuer instruction statuses: "In Mode 2 the issuer stops at RECEIVED or PENDING_APPROVAL
and does not execute until the execute call arrives"; execute is "sent only after the RTGS
earmark is confirmed". The kit holds each execute call back ``EXECUTE_HOLD_MS`` of wall time
and reads the instruction meanwhile, so a gateway that moves without waiting is seen moving
whatever its latency: the reference gateway with ``moves-before-execute`` fails
``waits_for_execute`` in every run at 0, 5, 20, 50 and 300 ms per status step, and the
correct one passes at each, holding at PENDING_APPROVAL (the default) or at APPROVED.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from clearing_sim.gateway.evidence import EXECUTE_HOLD_MS
from clearing_sim.gateway.reference import Defect, GatewaySettings, ReferenceIssuer, create_app
from clearing_sim.gateway.serving import ServerThread
from tests.gateway.conftest import run_kit

_SLOW = pytest.mark.slow
STEPS_MS = [0, 5, pytest.param(20, marks=_SLOW), pytest.param(50, marks=_SLOW),
            pytest.param(300, marks=_SLOW)]


def _verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in report["checks"]}


def _check(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["id"] == check_id)


def _served(settings: GatewaySettings) -> Iterator[str]:
    with ServerThread(create_app(ReferenceIssuer(settings))) as server:
        yield server.base_url


@pytest.mark.parametrize("step_ms", STEPS_MS)
def test_a_gateway_that_moves_before_execute_fails_waits_for_execute_at_any_latency(
        step_ms: int) -> None:
    settings = GatewaySettings(mode="MODE_2", step_ms=step_ms,
                               defects=frozenset({Defect.MOVES_BEFORE_EXECUTE}))
    for base_url in _served(settings):
        code, report = run_kit(base_url, "--mode", "2")
    assert code == 1
    waits = _check(report, "waits_for_execute")
    assert waits["verdict"] == "fail", waits
    assert "before execute" in waits["reason"] and "does not execute until the execute call " \
        "arrives" in waits["reason"]
    assert f"held {EXECUTE_HOLD_MS} ms" in " ".join(waits["evidence"]["notes"])


#: each run takes about 12 s (a 2 s hold per Mode 2 instruction, one after the other: the
#: transactions reach their instructions at different virtual instants); two in the fast suite
HOLDS = [(0, "PENDING_APPROVAL"), (5, "APPROVED"),
         *[pytest.param(step, hold, marks=_SLOW) for step, hold in [
             (5, "PENDING_APPROVAL"), (0, "APPROVED"), (20, "PENDING_APPROVAL"),
             (20, "APPROVED"), (50, "PENDING_APPROVAL"), (50, "APPROVED"),
             (300, "PENDING_APPROVAL"), (300, "APPROVED")]]]


@pytest.mark.parametrize(("step_ms", "hold_at"), HOLDS)
def test_a_gateway_that_holds_until_execute_passes_every_check_at_any_latency(
        step_ms: int, hold_at: str) -> None:
    settings = GatewaySettings(mode="MODE_2", hold_at=hold_at, step_ms=step_ms)
    for base_url in _served(settings):
        code, report = run_kit(base_url, "--mode", "2")
    assert code == 0, {c["id"]: c["reason"] for c in report["checks"] if c["reason"]}
    assert set(_verdicts(report).values()) == {"pass"}
    notes = " ".join(_check(report, "waits_for_execute")["evidence"]["notes"])
    assert f"last status {hold_at}" in notes  # watched where it holds, before execute
    assert report["score"]["passed"] == report["score"]["applicable"] == 7
