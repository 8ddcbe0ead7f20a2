"""Conformance reporting shared by every kit: checks, verdicts, evidence and four writers.

Public names: ``EXIT_FAILED``, ``EXIT_PASSED``, ``EXIT_USAGE``, ``Check``, ``Evidence``,
``Exchange``, ``Report``, ``Score``, ``Verdict``, ``dumps``, ``exit_code``, ``html_page``,
``junit_xml``, ``text_lines``, ``to_json``.

This module knows nothing about receivers or issuers: a kit (``clearing-sim conformance
receiver``, ``clearing-sim conformance issuer``) runs its checks, builds one ``Report`` and
hands it to the writers. The API, in full::

    Exchange(method, url, request_headers, request_body, status, response_headers,
             response_body, elapsed_ms, error)   # one HTTP request and its answer (or error)
    Evidence(exchanges=(...), notes=(...))        # what a verdict rests on, in order
    Check(id, title, rule, verdict, evidence, reason, duration_ms, virtual_ms)
    Report(kit, target, checks, notes, duration_ms, virtual_ms)
                                                  # .passed, .counts(), .score()
    Verdict.PASS / FAIL / SKIP                    # SKIP: not applicable to this target
    Score(passed, applicable, not_applied)        # checks passed / checks applicable, and
                                                  # each skipped check's id and reason

    text_lines(report) -> list[str]   # one line per check: "PASS  id  title", reasons indented;
                                      # identical exchanges in a row folded into one (×n)
    to_json(report) -> dict           # the whole report, every exchange with headers and bodies
    dumps(report) -> str              # to_json as indented JSON text
    junit_xml(report) -> bytes        # one testsuite (the kit), one testcase per check
    html_page(report) -> str          # one self-contained page (inline CSS, no scripts)
    exit_code(report) -> int          # EXIT_PASSED (0) all pass or skip, EXIT_FAILED (1) else

Every writer carries the score (a conformance suite's score, as Microcks reports one): the
checks passed over the checks applicable, and the checks that could not be applied with the
reason each gave. ``EXIT_USAGE`` (2) is for the door to return on bad usage or an
unreachable target, before any report exists. Header values of ``Authorization``,
``Proxy-Authorization`` and ``Cookie`` are masked by every writer (the scheme word is
kept: ``Bearer ***``); bodies are kept as text (UTF-8, undecodable bytes replaced) up to
``BODY_LIMIT`` characters each. Durations are measured by the kit that ran the check; this
module never reads a clock. ``duration_ms`` is wall time, the JUnit ``time`` attributes a CI
dashboard adds up; a kit that runs on a simulated clock also gives ``virtual_ms``, the span of
virtual time, written as the ``virtualSeconds`` property (JUnit) and ``virtualMs`` (JSON).
"""

from __future__ import annotations

import enum
import html
import json
import re
from collections.abc import Iterable
from typing import Any
from xml.etree import ElementTree

from attrs import field, frozen

__all__ = ["EXIT_FAILED", "EXIT_PASSED", "EXIT_USAGE", "Check", "Evidence", "Exchange",
           "Report", "Score", "Verdict", "dumps", "exit_code", "html_page", "junit_xml",
           "text_lines", "to_json"]

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
BODY_LIMIT = 65_536
MASKED_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})

HeaderPairs = tuple[tuple[str, str], ...]


class Verdict(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


def _pairs(headers: Iterable[tuple[str, str]] | None) -> HeaderPairs:
    return tuple((str(k), str(v)) for k, v in (headers or ()))


def _text(body: bytes | str | None) -> str:
    if body is None:
        return ""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if len(text) > BODY_LIMIT:
        return text[:BODY_LIMIT] + f"... ({len(text) - BODY_LIMIT} more characters)"
    return text


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@frozen
class Exchange:
    """One HTTP request and what came back: a status with headers and body, or an error."""

    method: str
    url: str
    request_headers: HeaderPairs = field(default=(), converter=_pairs)
    request_body: str = field(default="", converter=_text)
    status: int | None = None
    response_headers: HeaderPairs = field(default=(), converter=_pairs)
    response_body: str = field(default="", converter=_text)
    elapsed_ms: float | None = None
    error: str | None = None

    def summary(self) -> str:
        """``POST http://... -> 400 (12 ms)``, or ``-> error: ...``."""
        answer = f"error: {self.error}" if self.status is None else str(self.status)
        took = "" if self.elapsed_ms is None else f" ({self.elapsed_ms:.0f} ms)"
        return f"{self.method} {self.url} -> {answer}{took}"


def _exchanges(values: Iterable[Exchange]) -> tuple[Exchange, ...]:
    return tuple(values)


@frozen
class Evidence:
    exchanges: tuple[Exchange, ...] = field(default=(), converter=_exchanges)
    notes: tuple[str, ...] = field(default=(), converter=_strings)


@frozen
class Check:
    """A check's result: ``rule`` cites the spec; ``reason`` says why it did not pass."""

    id: str
    title: str
    rule: str
    verdict: Verdict
    evidence: Evidence = Evidence()
    reason: str = ""
    duration_ms: float = 0.0  # wall time
    virtual_ms: float | None = None  # virtual time, for a kit on a simulated clock


def _checks(values: Iterable[Check]) -> tuple[Check, ...]:
    return tuple(values)


@frozen
class Score:
    """Checks passed over checks applicable; ``not_applied``: (id, reason) of each skip."""

    passed: int
    applicable: int
    not_applied: tuple[tuple[str, str], ...] = ()

    def percent(self) -> float | None:
        """The share passed, 0 to 100 (one decimal); None when no check applied."""
        return None if not self.applicable else round(100 * self.passed / self.applicable, 1)

    def line(self) -> str:
        """``score: 5/6 applicable checks passed (83.3%); not applied: id (reason)``."""
        percent = self.percent()
        text = f"score: {self.passed}/{self.applicable} applicable checks passed" + (
            "" if percent is None else f" ({percent:g}%)")
        if self.not_applied:
            text += "; not applied: " + ", ".join(
                f"{check} ({reason or 'no reason given'})" for check, reason in self.not_applied)
        return text


@frozen
class Report:
    kit: str
    target: str
    checks: tuple[Check, ...] = field(converter=_checks)
    notes: tuple[str, ...] = field(default=(), converter=_strings)
    duration_ms: float | None = None  # the run's wall time; None: the checks' sum
    virtual_ms: float | None = None  # the run's virtual time, for a kit on a simulated clock

    def wall_ms(self) -> float:
        """The run's wall time: as measured, else the checks' durations added up."""
        return self.duration_ms if self.duration_ms is not None \
            else sum(c.duration_ms for c in self.checks)

    @property
    def passed(self) -> bool:
        return all(c.verdict is not Verdict.FAIL for c in self.checks)

    def counts(self) -> dict[str, int]:
        return {v.value: sum(c.verdict is v for c in self.checks) for v in Verdict}

    def score(self) -> Score:
        skipped = [c for c in self.checks if c.verdict is Verdict.SKIP]
        return Score(sum(c.verdict is Verdict.PASS for c in self.checks),
                     len(self.checks) - len(skipped),
                     tuple((c.id, c.reason) for c in skipped))


def exit_code(report: Report) -> int:
    """0 when no check failed (skips do not fail a run), 1 when one did."""
    return EXIT_PASSED if report.passed else EXIT_FAILED


def _masked(headers: HeaderPairs) -> list[list[str]]:
    out = []
    for name, value in headers:
        if name.lower() in MASKED_HEADERS:
            scheme = value.split(" ", 1)[0] if " " in value else ""
            value = f"{scheme} ***".strip()
        out.append([name, value])
    return out


def text_lines(report: Report, *, verbose: bool = False) -> list[str]:
    """One line per check with its verdict; failures (all checks when ``verbose``) then
    show the reason, the notes and a summary of each exchange, indented."""
    width = max((len(c.id) for c in report.checks), default=0)
    lines = [f"{report.kit} conformance: {report.target}"]
    for check in report.checks:
        lines.append(f"{check.verdict.name:<4}  {check.id:<{width}}  {check.title}")
        if check.verdict is Verdict.FAIL or verbose:
            detail = ([f"reason: {check.reason}"] if check.reason else [])
            detail += [f"rule: {check.rule}"] if check.verdict is Verdict.FAIL else []
            detail += list(check.evidence.notes)
            detail += _folded(check.evidence.exchanges)
            lines += [f"      {item}" for item in detail]
    lines += [f"note: {n}" for n in report.notes]
    lines.append(report.score().line())
    counts = report.counts()
    lines.append(f"{'PASSED' if report.passed else 'FAILED'}: {counts['pass']} passed, "
                 f"{counts['fail']} failed, {counts['skip']} skipped")
    return lines


def _folded(exchanges: Iterable[Exchange]) -> list[str]:
    """One summary line per exchange, identical ones in a row (a poll answered the same
    way each time: same request, same answer) folded into one line with their count."""
    lines: list[str] = []
    run: list[Exchange] = []

    def flush() -> None:
        if not run:
            return
        first = run[0]
        if len(run) == 1:
            lines.append(first.summary())
            return
        took = [e.elapsed_ms for e in run if e.elapsed_ms is not None]
        answer = f"error: {first.error}" if first.status is None else str(first.status)
        span = f", {min(took):.0f}-{max(took):.0f} ms" if took else ""
        lines.append(f"{first.method} {first.url} -> {answer} (×{len(run)} identical{span})")

    for exchange in exchanges:
        if run and _same(run[0], exchange):
            run.append(exchange)
            continue
        flush()
        run = [exchange]
    flush()
    return lines


def _same(a: Exchange, b: Exchange) -> bool:
    return (a.method, a.url, a.request_body, a.status, a.response_body, a.error) == \
        (b.method, b.url, b.request_body, b.status, b.response_body, b.error)


def _score_json(score: Score) -> dict[str, Any]:
    return {"passed": score.passed, "applicable": score.applicable,
            "percent": score.percent(),
            "notApplied": [{"id": check, "reason": reason}
                           for check, reason in score.not_applied]}


def _exchange_json(exchange: Exchange) -> dict[str, Any]:
    return {
        "request": {"method": exchange.method, "url": exchange.url,
                    "headers": _masked(exchange.request_headers), "body": exchange.request_body},
        "response": None if exchange.status is None else {
            "status": exchange.status, "headers": _masked(exchange.response_headers),
            "body": exchange.response_body},
        "elapsedMs": exchange.elapsed_ms, "error": exchange.error}


def _check_json(check: Check) -> dict[str, Any]:
    return {"id": check.id, "title": check.title, "rule": check.rule,
            "verdict": check.verdict.value, "reason": check.reason,
            "durationMs": round(check.duration_ms, 3), "virtualMs": check.virtual_ms,
            "evidence": {"notes": list(check.evidence.notes),
                         "exchanges": [_exchange_json(e) for e in check.evidence.exchanges]}}


def to_json(report: Report) -> dict[str, Any]:
    """The whole report as one JSON document (``--json``)."""
    return {"kit": report.kit, "target": report.target, "passed": report.passed,
            "exitCode": exit_code(report), "counts": report.counts(),
            "score": _score_json(report.score()), "notes": list(report.notes),
            "durationMs": round(report.wall_ms(), 3), "virtualMs": report.virtual_ms,
            "checks": [_check_json(c) for c in report.checks]}


def _exchange_text(exchange: Exchange) -> str:
    lines = [f"> {exchange.method} {exchange.url}"]
    lines += [f"> {k}: {v}" for k, v in _masked(exchange.request_headers)]
    lines += [f"> {exchange.request_body}"] if exchange.request_body else []
    if exchange.status is None:
        lines.append(f"< error: {exchange.error}")
    else:
        lines.append(f"< {exchange.status}")
        lines += [f"< {k}: {v}" for k, v in _masked(exchange.response_headers)]
        lines += [f"< {exchange.response_body}"] if exchange.response_body else []
    return "\n".join(lines)


def _evidence_text(check: Check) -> str:
    parts = [f"rule: {check.rule}"] + [f"reason: {check.reason}"] * bool(check.reason)
    parts += list(check.evidence.notes)
    parts += [_exchange_text(e) for e in check.evidence.exchanges]
    return "\n".join(parts)


_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(root: ElementTree.Element) -> None:
    """Replace the characters XML 1.0 cannot hold (control bytes in a body) with U+FFFD."""
    for node in root.iter():
        node.attrib = {k: _XML_INVALID.sub("\ufffd", v) for k, v in node.attrib.items()}
        if node.text:
            node.text = _XML_INVALID.sub("\ufffd", node.text)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.6f}"


def junit_xml(report: Report) -> bytes:
    """JUnit XML: one ``testsuite`` named after the kit, one ``testcase`` per check.

    ``time`` is wall seconds; virtual time, when the kit ran on a simulated clock, is the
    ``virtualSeconds`` property of the suite and of each testcase."""
    counts = report.counts()
    root = ElementTree.Element("testsuites", name=f"clearing-sim {report.kit} conformance",
                               tests=str(len(report.checks)), failures=str(counts["fail"]),
                               skipped=str(counts["skip"]))
    suite = ElementTree.SubElement(
        root, "testsuite", name=f"{report.kit} conformance", tests=str(len(report.checks)),
        failures=str(counts["fail"]), errors="0", skipped=str(counts["skip"]),
        time=_seconds(report.wall_ms()))
    properties = ElementTree.SubElement(suite, "properties")
    if report.virtual_ms is not None:
        ElementTree.SubElement(properties, "property", name="virtualSeconds",
                               value=_seconds(report.virtual_ms))
    ElementTree.SubElement(properties, "property", name="target", value=report.target)
    score = report.score()
    ElementTree.SubElement(properties, "property", name="score",
                           value=f"{score.passed}/{score.applicable}")
    ElementTree.SubElement(properties, "property", name="score.line", value=score.line())
    for skipped, why in score.not_applied:
        ElementTree.SubElement(properties, "property", name=f"notApplied.{skipped}",
                               value=why or "no reason given")
    for check in report.checks:
        case = ElementTree.SubElement(suite, "testcase", name=f"{check.id}: {check.title}",
                                      classname=f"conformance.{report.kit}",
                                      time=_seconds(check.duration_ms))
        if check.virtual_ms is not None:
            ElementTree.SubElement(ElementTree.SubElement(case, "properties"), "property",
                                   name="virtualSeconds", value=_seconds(check.virtual_ms))
        if check.verdict is Verdict.FAIL:
            failure = ElementTree.SubElement(case, "failure", type="conformance",
                                             message=check.reason or check.title)
            failure.text = _evidence_text(check)
        elif check.verdict is Verdict.SKIP:
            ElementTree.SubElement(case, "skipped", message=check.reason or "not applicable")
        else:
            ElementTree.SubElement(case, "system-out").text = _evidence_text(check)
    _xml_safe(root)
    ElementTree.indent(root)
    document: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


_STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:72em}
table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left}
.pass{color:#176f2c}.fail{color:#b00020}.skip{color:#777}
details{margin:.3em 0 .8em 1em}pre{background:#f4f4f4;padding:.6em;white-space:pre-wrap}"""


def _check_html(check: Check) -> str:
    esc = html.escape
    verdict = check.verdict.value
    body = "".join(f"<pre>{esc(_exchange_text(e))}</pre>" for e in check.evidence.exchanges)
    notes = "".join(f"<li>{esc(n)}</li>" for n in check.evidence.notes)
    reason = f"<p><b>Reason:</b> {esc(check.reason)}</p>" if check.reason else ""
    opened = " open" if check.verdict is Verdict.FAIL else ""
    return (f'<h3 id="{esc(check.id)}" class="{verdict}">{check.verdict.name} '
            f"{esc(check.id)}: {esc(check.title)}</h3><details{opened}><summary>evidence"
            f"</summary><p><b>Rule:</b> {esc(check.rule)}</p>{reason}<ul>{notes}</ul>{body}"
            "</details>")


def html_page(report: Report) -> str:
    """A self-contained HTML page: summary table, then each check with its evidence."""
    esc = html.escape
    counts = report.counts()
    title = f"{report.kit} conformance: {report.target}"
    rows = "".join(f'<tr><td class="{c.verdict.value}">{c.verdict.name}</td>'
                   f'<td><a href="#{esc(c.id)}">{esc(c.id)}</a></td><td>{esc(c.title)}</td></tr>'
                   for c in report.checks)
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    score = report.score()
    not_applied = "".join(f"<li>{esc(check)}: {esc(reason or 'no reason given')}</li>"
                          for check, reason in score.not_applied)
    score_html = (f'<p class="score"><b>Score:</b> {score.passed}/{score.applicable} '
                  "applicable checks passed" + ("" if score.percent() is None
                                                else f" ({score.percent():g}%)") + "</p>"
                  + (f"<p>Not applied:</p><ul>{not_applied}</ul>" if not_applied else ""))
    overall = "PASSED" if report.passed else "FAILED"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>{esc(title)}</h1><p class=\"{'pass' if report.passed else 'fail'}\">"
            f"<b>{overall}</b>: {counts['pass']} passed, {counts['fail']} failed, "
            f"{counts['skip']} skipped</p>{score_html}<ul>{notes}</ul><table><tr>"
            "<th>verdict</th>"
            f"<th>check</th><th>title</th></tr>{rows}</table>"
            + "".join(_check_html(c) for c in report.checks) + "</body></html>\n")


def dumps(report: Report) -> str:
    """``to_json`` as indented text, for ``--json``."""
    return json.dumps(to_json(report), indent=2) + "\n"
