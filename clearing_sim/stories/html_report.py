"""Self-contained HTML pages of scenario runs: the console's story view as a CI artifact.

Public names: ``index_page``, ``page_name``, ``scenario_page``, ``story_data``,
``embedded_data``.

``clearing-sim run DIR --html OUTDIR`` writes one page per scenario and an ``index.html``
(pass/fail per scenario); ``clearing-sim timeline FILE --transaction NAME --html FILE`` one
page for one transaction (issue 28 §3). A page holds everything it needs and fetches
nothing: the console's stylesheet and its renderer (``story.js``, the same file the console
serves) with its report host (``report.js``) inlined, and the data as JSON in a
``<script type="application/json" id="report-data">``: the scenario's verdicts and the
stories of its transactions (``clearing_sim.stories.story.build_story``).

Each verdict is marked on every story's time axis at the instant it was judged: the virtual
time its step ended (``Stage.step_end_ms``; an ``nth: last`` timing, judged at the end of the
run, is marked there too: its step's end is the instant its wait ended). A check of the
world file (step -1) has no instant and is listed, not marked.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.scenario.results import CheckResult, ScenarioResult
from clearing_sim.scenario.stage import Stage
from clearing_sim.stories.assets import asset_text
from clearing_sim.stories.story import build_story

__all__ = ["embedded_data", "index_page", "page_name", "scenario_page", "story_data"]

_DATA_ID = "report-data"
_DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def page_name(result: ScenarioResult) -> str:
    """The page's file name: the scenario file's stem, made safe (``x.html``)."""
    stem = re.sub(r"\.ya?ml$", "", result.path.replace("\\", "/").rsplit("/", 1)[-1])
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") + ".html"


def _script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` left as such."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def embedded_data(page: str) -> Any:
    """The JSON a page carries (tests and tools read a report back with it)."""
    found = _DATA.search(page)
    if found is None:
        raise ValueError("not a clearing-sim report page: no report-data")
    return parse_untrusted(found.group(1))


def _verdict(stage: Stage, check: CheckResult, path: str) -> dict[str, Any]:
    at_ms = stage.step_end_ms.get(check.step) if check.step >= 0 else None
    return {"label": check.case_name(), "field": check.field, "passed": check.passed,
            "expected": check.expected, "actual": check.actual,
            "where": f"{path}:{check.line}", "atMs": at_ms,
            "at": None if at_ms is None else stage.world.iso(at_ms)}


def story_data(result: ScenarioResult, stage: Stage, names: Mapping[str, str],
               transaction_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """What a page carries: the verdicts and the stories (every transaction of the world,
    in initiation order, unless ``transaction_ids`` names them)."""
    world = stage.world
    ids = list(transaction_ids) if transaction_ids is not None else [
        tx.id for tx in world.transactions]
    verdicts = [_verdict(stage, c, result.path) for c in (*result.results, *result.skipped)]
    return {"scenario": result.name, "path": result.path, "passed": result.passed,
            "seed": result.seed, "digest": result.digest, "records": result.records,
            "end": world.iso(result.virtual_ms), "verdicts": verdicts,
            "names": {i: names[i] for i in ids if i in names},
            "stories": [build_story(world, i, names=names) for i in ids]}


def _page(title: str, heading: str, body: str, data: dict[str, Any] | None) -> str:
    scripts = "" if data is None else (
        f'<script type="application/json" id="{_DATA_ID}">{_script_json(data)}</script>\n'
        f"<script>{asset_text('story.js')}</script>\n"
        f"<script>{asset_text('report.js')}</script>\n")
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>{asset_text('console.css')}</style>\n"
            f"</head>\n<body>\n<header class=\"top\"><h1>{heading}</h1></header>\n{body}\n"
            f"{scripts}</body>\n</html>\n")


def scenario_page(result: ScenarioResult, stage: Stage, names: Mapping[str, str],
                  transaction_ids: Sequence[str] | None = None) -> str:
    """One scenario's page: its verdicts and its transactions' stories."""
    data = story_data(result, stage, names, transaction_ids)
    verdict = "PASS" if result.passed else "FAIL"
    facts = (f"<p>{html.escape(result.path)} — seed {result.seed}, virtual end "
             f"{html.escape(data['end'])}, {result.records} records, digest "
             f"<code>{result.digest}</code>. <a href=\"index.html\">All scenarios</a></p>")
    failed = sum(not v["passed"] for v in data["verdicts"])
    summary = (f"<p><strong>{verdict}</strong>: {len(data['verdicts']) - failed} of "
               f"{len(data['verdicts'])} expectation(s) held.</p>")
    return _page(f"{verdict} {result.name}", f"{verdict} — {html.escape(result.name)}",
                 f'{facts}{summary}<main id="report"></main>', data)


def index_page(pages: Sequence[tuple[ScenarioResult, str]]) -> str:
    """The run's index: one row per scenario, PASS or FAIL in words, linking its page."""
    rows = []
    for result, name in pages:
        verdict = "PASS" if result.passed else "FAIL"
        held = sum(r.passed for r in result.results)
        rows.append(
            f'<tr><td class="verdict-{verdict.lower()}">{verdict}</td>'
            f'<td><a href="{html.escape(name)}">{html.escape(result.name)}</a></td>'
            f"<td>{html.escape(result.path)}</td><td class=\"num\">{held} of "
            f"{len(result.results) + len(result.skipped)}</td>"
            f'<td class="num">{result.seed}</td><td><code>{result.digest[:16]}</code></td></tr>')
    failed = sum(not r.passed for r, _ in pages)
    table = ('<main class="report-index"><p>' f"{len(pages)} scenario(s): "
             f"{len(pages) - failed} passed, {failed} failed.</p>"
             '<div class="scroll"><table><thead><tr><th scope="col">Verdict</th>'
             '<th scope="col">Scenario</th><th scope="col">File</th>'
             '<th scope="col">Expectations held</th><th scope="col">Seed</th>'
             '<th scope="col">Digest</th></tr></thead><tbody>'
             + "".join(rows) + "</tbody></table></div></main>")
    return _page("clearing-sim run", "clearing-sim run", table, None)
