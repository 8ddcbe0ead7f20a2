"""The reference receiver's variants through the receiver kit: each defect that loses events
in production fails the check named after the rule it breaks (spec, Events: Signature,
guarantees 1 and 3), and the receiver that acknowledges first and processes afterwards,
which follows guarantee 3's words ("before changing its own state"), passes every check."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from clearing_sim.conformance.receiver_kit import CHECKS, PROCESS_WITHIN_S, KitOptions
from clearing_sim.conformance.receiver_variants import DEFECTS, ReceiverDefect
from clearing_sim.conformance.report import Check, Report, Verdict
from clearing_sim.http.kit_shim import run_receiver_kit
from tests.conformance.conftest import SECRET, Serve

QUICK_S = 1.0  # the time limit of runs expected to fail (tests/conformance/test_receiver_kit)

#: Every check each defect fails with a probe: the one named after its rule, then what
#: follows from it (refused deliveries are not processed; an event never fetched leaves
#: its view wrong). It passes every other check.
FAILS_WITH_PROBE = {
    ReceiverDefect.VERIFIES_RESERIALISED_JSON: {
        "raw-body-signature", "fetch-failure-retried", "reentry-not-duplicate",
        "reordered-pair", "view-matches-service"},
    ReceiverDefect.RECORDS_ID_BEFORE_VERIFYING: {
        "refusal-not-remembered", "fetch-after-delivery"},
    ReceiverDefect.RECORDS_ID_BEFORE_FETCH: {
        "fetch-failure-retried", "fetch-after-delivery", "view-matches-service"},
}
#: The field each defect's failure names
FIELDS = {ReceiverDefect.VERIFIES_RESERIALISED_JSON: "data.paymentReference",
          ReceiverDefect.RECORDS_ID_BEFORE_VERIFYING: "Service-Webhook-Id",
          ReceiverDefect.RECORDS_ID_BEFORE_FETCH: "data.transactionId"}


def _run(serve_receiver: Serve, kind: str, *, probe: bool, within_s: float) -> Report:
    server, port = serve_receiver(kind)
    probe_url = f"{server.url}/transactions/{{id}}" if probe else None
    return asyncio.run(run_receiver_kit(KitOptions(f"{server.url}/webhooks", SECRET,
                                                   probe_url, process_within_s=within_s),
                                        port=port))


def _failed(report: Report) -> set[str]:
    return {c.id for c in report.checks if c.verdict is Verdict.FAIL}


def _check(report: Report, check_id: str) -> Check:
    return next(c for c in report.checks if c.id == check_id)


@pytest.mark.parametrize("defect", list(ReceiverDefect))
def test_each_defect_that_loses_events_fails_the_check_of_its_rule(
        serve_receiver: Serve, defect: ReceiverDefect) -> None:
    report = _run(serve_receiver, defect.value, probe=True, within_s=QUICK_S)
    caught = _check(report, DEFECTS[defect].caught_by)
    assert caught.verdict is Verdict.FAIL, report.checks
    assert FIELDS[defect] in caught.reason and caught.rule.startswith("Events, ")
    assert _failed(report) == FAILS_WITH_PROBE[defect]


def test_the_reserialising_receiver_is_told_it_verified_other_bytes(
        serve_receiver: Serve) -> None:
    """Spec, Events, Signature: the HMAC is over the raw request body. The staged reference
    holds raw UTF-8 (as the channel sends it), so json.dumps gives back other bytes."""
    report = _run(serve_receiver, ReceiverDefect.VERIFIES_RESERIALISED_JSON.value, probe=False,
                  within_s=QUICK_S)
    raw = _check(report, "raw-body-signature")
    assert raw.verdict is Verdict.FAIL
    assert "answered 401" in raw.reason and "\\\\u00dc" in raw.reason
    assert _check(report, "valid-delivery").verdict is Verdict.PASS  # the ASCII one


def test_a_receiver_that_acknowledges_first_and_processes_after_passes(
        serve_receiver: Serve) -> None:
    """Guarantee 3: it fetches before it changes its state, after it answered. It passes every
    check (it failed fetch-before-answer before); answering first is advice, not a failure,
    and the evidence credits its GETs by their own instants, after the answers."""
    report = _run(serve_receiver, "ack-first", probe=True, within_s=PROCESS_WITHIN_S)
    assert [c.id for c in report.checks] == list(CHECKS)
    assert all(c.verdict is Verdict.PASS for c in report.checks), [
        (c.id, c.reason) for c in report.checks if c.verdict is not Verdict.PASS]
    advice = [n for n in report.notes if n.startswith("advice: ")]
    assert len(advice) == 1 and "answered 2xx before the receiver fetched" in advice[0]
    retried = _check(report, "fetch-failure-retried")  # it answered 2xx: it retried itself
    assert [e.status for e in retried.evidence.exchanges if e.method == "POST"] == [200]
    assert any("-> 503 at" in n for n in retried.evidence.notes)


@pytest.mark.slow
@pytest.mark.parametrize("defect", [ReceiverDefect.RECORDS_ID_BEFORE_VERIFYING,
                                    ReceiverDefect.RECORDS_ID_BEFORE_FETCH])
def test_without_a_probe_the_defects_fail_on_their_fetches(
        serve_receiver: Serve, defect: ReceiverDefect) -> None:
    """Without --probe-url, "processed" is a GET of the transaction (200) after the delivery
    (or after the kit's 503): the valid retry taken for a duplicate makes none."""
    report = _run(serve_receiver, defect.value, probe=False, within_s=QUICK_S)
    caught = _check(report, DEFECTS[defect].caught_by)
    assert caught.verdict is Verdict.FAIL
    assert _check(report, "fetch-after-delivery").verdict is Verdict.FAIL


@pytest.mark.slow
def test_without_a_probe_the_ack_first_receiver_passes(serve_receiver: Serve) -> None:
    report = _run(serve_receiver, "ack-first", probe=False, within_s=PROCESS_WITHIN_S)
    assert report.passed, [(c.id, c.reason) for c in report.checks]


def _section(title: str) -> str:
    text = (Path(__file__).parents[2] / "docs" / "conformance.md").read_text(encoding="utf-8")
    start = text.index(f"### {title}")
    return text[start:text.index("\n### ", start + 1)]


def test_the_docs_list_every_check_and_every_defect_as_the_code_does() -> None:
    """docs/conformance.md's check table names ``CHECKS`` in order, and its defect table
    each ``DEFECTS`` row with the check that catches it first."""
    rows = [line for line in _section("What the kit does").splitlines()
            if line.startswith("| `")]
    named = [n for row in rows for n in re.findall(r"`([a-z0-9-]+)`", row.split(" | ")[0])]
    assert named == list(CHECKS)
    defects = {}
    for line in _section("The reference receivers").splitlines():
        cells = line.split(" | ")
        if line.startswith("| `") and len(cells) == 4:
            defects[cells[0].strip("| `")] = re.findall(r"`([a-z-]+)`", cells[3])[0]
    assert defects == {d.value: info.caught_by for d, info in DEFECTS.items()}
