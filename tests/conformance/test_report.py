"""The shared conformance reporting: verdict lines, JSON, JUnit XML, HTML and exit codes."""

from __future__ import annotations

import json
from xml.etree import ElementTree

from attrs import evolve
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.conformance.report import (
    EXIT_FAILED,
    EXIT_PASSED,
    Check,
    Evidence,
    Exchange,
    Report,
    Verdict,
    dumps,
    exit_code,
    html_page,
    junit_xml,
    text_lines,
    to_json,
)

POST = Exchange("POST", "http://127.0.0.1:9/hook",
                (("Service-Signature", "t=1,v1=ab"), ("Authorization", "Bearer sk_live_x")),
                b'{"id":"evt_1"}', 400, (("content-type", "text/plain"),), b"bad <sig>",
                elapsed_ms=3.2)


def _report(*verdicts: Verdict) -> Report:
    checks = [Check(f"c{i}", f"title {i}", "Events, guarantee 3", v,
                    Evidence((POST,), ("a note",)), reason="why" if v is not Verdict.PASS else "",
                    duration_ms=5.0) for i, v in enumerate(verdicts)]
    return Report("receiver", "http://127.0.0.1:9/hook", checks, ("shim at http://x",))


def test_exit_code_is_0_when_nothing_failed_skips_included() -> None:
    assert exit_code(_report(Verdict.PASS, Verdict.SKIP)) == EXIT_PASSED
    assert exit_code(_report(Verdict.PASS, Verdict.FAIL)) == EXIT_FAILED
    assert exit_code(_report()) == EXIT_PASSED


def test_text_has_one_line_per_check_with_its_verdict_and_failure_detail() -> None:
    lines = text_lines(_report(Verdict.PASS, Verdict.FAIL, Verdict.SKIP))
    verdict_lines = [ln for ln in lines if ln[:6] in ("PASS  ", "FAIL  ", "SKIP  ")]
    assert [ln.split()[:2] for ln in verdict_lines] == [["PASS", "c0"], ["FAIL", "c1"],
                                                        ["SKIP", "c2"]]
    assert "      reason: why" in lines
    assert any("POST http://127.0.0.1:9/hook -> 400 (3 ms)" in ln for ln in lines)
    assert lines[-1] == "FAILED: 1 passed, 1 failed, 1 skipped"


def test_json_holds_every_exchange_with_headers_and_bodies_and_masks_authorization() -> None:
    document = json.loads(dumps(_report(Verdict.FAIL)))
    assert document == to_json(_report(Verdict.FAIL))
    assert document["exitCode"] == 1 and document["counts"] == {"pass": 0, "fail": 1, "skip": 0}
    exchange = document["checks"][0]["evidence"]["exchanges"][0]
    assert exchange["request"]["body"] == '{"id":"evt_1"}'
    assert ["Authorization", "Bearer ***"] in exchange["request"]["headers"]
    assert exchange["response"] == {"status": 400, "headers": [["content-type", "text/plain"]],
                                    "body": "bad <sig>"}
    assert "sk_live_x" not in dumps(_report(Verdict.FAIL))


def test_an_exchange_that_got_no_answer_has_its_error_and_no_response() -> None:
    refused = Exchange("POST", "http://127.0.0.1:9/", error="connection refused")
    assert refused.summary() == "POST http://127.0.0.1:9/ -> error: connection refused"
    check = Check("x", "x", "r", Verdict.FAIL, Evidence((refused,)))
    exchange = to_json(Report("k", "t", [check]))["checks"][0]["evidence"]["exchanges"][0]
    assert exchange["response"] is None and exchange["error"] == "connection refused"


def test_junit_has_one_testcase_per_check_with_failures_and_skips_marked() -> None:
    root = ElementTree.fromstring(junit_xml(_report(Verdict.PASS, Verdict.FAIL, Verdict.SKIP)))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["c0: title 0", "c1: title 1", "c2: title 2"]
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message") == "why"
    assert "> Service-Signature: t=1,v1=ab" in (failure.text or "")
    assert cases[2].find("skipped") is not None and cases[0].find("failure") is None


def test_junit_time_is_wall_time_and_virtual_time_a_property() -> None:
    """Issue 27: ``time`` is what a CI dashboard adds up, so wall seconds; a kit on a
    simulated clock gives virtual time too, written as the ``virtualSeconds`` property."""
    plain = _report(Verdict.PASS, Verdict.PASS)
    timed = evolve(plain, checks=[evolve(c, virtual_ms=900_000.0) for c in plain.checks],
                   duration_ms=7.5, virtual_ms=1_844_726.0)
    suite = ElementTree.fromstring(junit_xml(timed)).find("testsuite")
    assert suite is not None and suite.get("time") == "0.007500"
    assert suite.find("properties/property[@name='virtualSeconds']").get(  # type: ignore
        "value") == "1844.726000"
    for case in suite.findall("testcase"):
        assert case.get("time") == "0.005000"
        assert case.find("properties/property[@name='virtualSeconds']").get(  # type: ignore
            "value") == "900.000000"
    untimed = ElementTree.fromstring(junit_xml(plain)).find("testsuite")
    assert untimed is not None and untimed.get("time") == "0.010000"  # the checks' sum
    assert untimed.find("testcase/properties") is None
    assert to_json(timed)["virtualMs"] == 1_844_726.0 and to_json(plain)["virtualMs"] is None


def test_html_is_one_self_contained_page_with_escaped_evidence() -> None:
    page = html_page(_report(Verdict.FAIL))
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert "bad &lt;sig&gt;" in page and "bad <sig>" not in page
    assert "src=" not in page and "href=\"http" not in page  # nothing fetched from elsewhere


def test_long_bodies_are_cut_and_say_so() -> None:
    exchange = Exchange("GET", "u", response_body=b"x" * 70_000, status=200)
    assert exchange.response_body.endswith("(4464 more characters)")


@given(st.text(), st.binary())
def test_any_body_and_title_render_in_every_form(title: str, body: bytes) -> None:
    exchange = Exchange("POST", "u", request_body=body, status=500, response_body=title)
    report = Report("k", title, [Check(title or "id", title, title, Verdict.FAIL,
                                       Evidence((exchange,), (title,)), reason=title)])
    json.loads(dumps(report))
    ElementTree.fromstring(junit_xml(report))
    assert html_page(report).endswith("</html>\n")
    assert text_lines(report)[-1].startswith("FAILED")


def test_the_score_is_checks_passed_over_checks_applicable_in_every_format() -> None:
    """Microcks' conformance score: passed / applicable, and each check not applied with
    the reason it gave. A failed check counts against the score; a skipped one is out of it."""
    checks = [Check("a", "a", "r", Verdict.PASS), Check("b", "b", "r", Verdict.FAIL, reason="x"),
              Check("c", "c", "r", Verdict.PASS),
              Check("d", "d", "r", Verdict.SKIP, reason="not applicable: Mode 3 has no execute")]
    report = Report("issuer", "http://gw", checks)
    score = report.score()
    assert (score.passed, score.applicable, score.percent()) == (2, 3, 66.7)
    line = "score: 2/3 applicable checks passed (66.7%); not applied: d (not applicable: " \
           "Mode 3 has no execute)"
    assert line in text_lines(report)
    assert to_json(report)["score"] == {
        "passed": 2, "applicable": 3, "percent": 66.7,
        "notApplied": [{"id": "d", "reason": "not applicable: Mode 3 has no execute"}]}
    suite = ElementTree.fromstring(junit_xml(report)).find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["score"] == "2/3" and properties["score.line"] == line
    assert properties["notApplied.d"] == "not applicable: Mode 3 has no execute"
    page = html_page(report)
    assert "<b>Score:</b> 2/3 applicable checks passed (66.7%)" in page
    assert "<li>d: not applicable: Mode 3 has no execute</li>" in page


def test_a_score_with_nothing_applicable_has_no_percentage() -> None:
    report = Report("k", "t", [Check("s", "s", "r", Verdict.SKIP, reason="why")])
    assert report.score().percent() is None
    assert "score: 0/0 applicable checks passed; not applied: s (why)" in text_lines(report)
    assert to_json(report)["score"]["percent"] is None


def test_identical_polls_in_a_row_fold_into_one_line_with_their_count() -> None:
    """Forty reads answered alike are one line (×40), not forty; a different answer in
    between starts a new line, so the order of what the peer said is kept."""
    poll = Exchange("GET", "http://gw/instructions/i", status=200, response_body=b'{"s":1}',
                    elapsed_ms=2.0)
    moved = Exchange("GET", "http://gw/instructions/i", status=200, response_body=b'{"s":2}',
                     elapsed_ms=4.0)
    check = Check("c", "c", "r", Verdict.FAIL, Evidence((poll,) * 40 + (moved, poll)), "why")
    lines = text_lines(Report("k", "t", [check]))
    folded = [ln.strip() for ln in lines if "/instructions/i" in ln]
    assert folded == ["GET http://gw/instructions/i -> 200 (×40 identical, 2-2 ms)",
                      "GET http://gw/instructions/i -> 200 (4 ms)",
                      "GET http://gw/instructions/i -> 200 (2 ms)"]
