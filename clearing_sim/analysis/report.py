"""A sweep's results as one self-contained HTML page: key tables, figures, and how to replay.

Public names: ``DEFAULT_NAME``, ``REPLAY_ID``, ``build_report``, ``read_replay``,
``report_figures``, ``write_report``.

``write_report(DIR)`` reads a sweep's output folder (``load_results``, which checks the
results' manifests) and writes one HTML file (default ``DIR/report.html``, inside the results
folder) with everything inline — figures as PNG data URIs, no scripts or styles fetched from
anywhere. It holds: the command, version, seeds and parameter sets that replay it;
settlement latency percentiles by mode, parking rates by issuer and by cause, webhook
delivery figures, each a parameter set's mean over its seeds with its 95 % t-interval, in
human labels and units (``report_tables``); the figures of ``plots`` (``report_figures``),
each captioned with what it shows and from which runs; every run's digest; the sweep and
workload files as they were; and the results' manifest in the footer.

Every fact on the page is about the runs in the results files (``runs.parquet``,
``metrics.parquet``), never the plan in ``sweep.json`` alone: when the sweep last started in
the folder asks for runs the results lack (it was interrupted), the page says how many of its
runs the results hold and the command that resumes it.

The replay facts are also embedded as JSON (``<script type="application/json"
id="clearing-sim-replay">``): ``read_replay(html)`` answers them, which is how a test checks
that rerunning a committed report's sweep gives the same digests. The page contains no wall
clock: the same results give the same page.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
from matplotlib.figure import Figure

from clearing_sim.analysis import plots
from clearing_sim.analysis.metrics import across_seeds
from clearing_sim.analysis.report_tables import (
    INTERVAL_NOTE,
    interval_table,
    params_table,
    runs_table,
)
from clearing_sim.analysis.resultfiles import ResultsFileMissing
from clearing_sim.analysis.sweepfile import format_seeds
from clearing_sim.analysis.sweeps import SweepResult, load_results

__all__ = ["DEFAULT_NAME", "REPLAY_ID", "build_report", "read_replay", "report_figures",
           "write_report"]

REPLAY_ID = "clearing-sim-replay"
#: The report's file name inside the results folder when no path is given.
DEFAULT_NAME = "report.html"
_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#1d2a33;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccd;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
th,td{border:1px solid #ccd;padding:.25em .55em;text-align:right}
th{background:#eef1f5}td:first-child,th:first-child{text-align:left}
pre{background:#f5f7f9;padding:.8em;overflow:auto;font-size:.8em}
code{background:#f0f2f5;padding:0 .2em}figure{margin:1em 0}img{max-width:100%}
.note{color:#56636d;font-size:.9em}
"""


def _png(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="" src="data:image/png;base64,{data}">'


def _table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return '<p class="note">(nothing to show)</p>'
    return str(frame.to_html(index=False, na_rep="—", border=0))


def _summary(metrics: pd.DataFrame) -> pd.DataFrame:
    """Every metric over seeds per parameter set and group, in parameter order."""
    return across_seeds(metrics, params=["param_id", "param_label"])


def _frames(results: SweepResult, name: str) -> pd.DataFrame | None:
    """Frame ``name`` of every run, or None if the runs did not keep it (a damaged file is a
    ``ResultsFileError``)."""
    try:
        return results.frames(name)
    except (ResultsFileMissing, KeyError, AssertionError):
        return None


def _example_transaction(tx: pd.DataFrame) -> str:
    for wanted in (tx["ever_parked"], (tx["use_case"] == "swap")
                   & (tx["lifecycle_status"] == "settled")):
        chosen = tx[wanted]
        if len(chosen):
            return str(chosen["transaction_id"].iloc[0])
    return str(tx["transaction_id"].iloc[0])


def _runs_phrase(results: SweepResult, labels: Sequence[str] | None = None) -> str:
    """From which runs: "the 6 runs (2 parameter sets × seeds 0-2)"."""
    runs = results.runs if labels is None else \
        results.runs[results.runs["param_label"].isin(list(labels))]
    sets = runs["param_id"].nunique()
    seeds = tuple(dict.fromkeys(int(s) for s in runs["seed"]))
    return (f"the {len(runs)} run{'s' if len(runs) != 1 else ''} ({sets} parameter "
            f"set{'s' if sets != 1 else ''} × seed{'s' if len(seeds) != 1 else ''} "
            f"{format_seeds(seeds)})")


def report_figures(results: SweepResult) -> list[tuple[str, Figure]]:
    """(caption, figure) per figure of the report that the kept frames allow; each caption
    says what the figure shows and from which runs."""
    shown: list[tuple[str, Figure]] = []
    tx = _frames(results, "transactions")
    labels = list(results.params["param_label"])
    if tx is not None and len(tx):
        few = len(labels) <= 3
        by = ["param_label", "mode"] if few else ["mode"]
        pooled = tx if few else tx[tx["param_label"] == labels[0]]
        title = "Settlement latency by parameter set and mode" if few else \
            f"Settlement latency by mode ({labels[0]})"
        shown.append((f"Empirical distribution (CDF) of settlement latency, initiation to "
                      f"settled, of every settled transaction of "
                      f"{_runs_phrase(results, None if few else labels[:1])}, seeds pooled; "
                      "the legend gives each line's count and percentiles.",
                      plots.latency_cdf(pooled, by=by, order=labels, title=title)))
    shown.append(("p95 settlement latency per parameter set and mode: each point is the mean "
                  "of the runs' p95 over the set's seeds, its whisker the 95 % t-interval "
                  f"of that mean; from {_runs_phrase(results)}.",
                  plots.latency_spread(results.metrics)))
    shown.append(("Parking rate per issuer: bars at the mean over a parameter set's seeds, "
                  "whiskers its 95 % t-interval, dots the seeds' own rates; from "
                  f"{_runs_phrase(results)}.", plots.parking_by_issuer(results.metrics)))
    deliveries = _frames(results, "deliveries")
    if deliveries is not None and len(deliveries):
        shown.append(("Webhook deliveries by the number of attempts they took, stacked by "
                      "outcome, one panel per parameter set, seeds pooled; from "
                      f"{_runs_phrase(results)}.",
                      plots.attempts_histograms(deliveries, order=labels)))
    steps = _frames(results, "saga_steps")
    if tx is not None and steps is not None and len(tx):
        shown.append(_waterfall(results, tx, steps, deliveries))
    return shown


def _waterfall(results: SweepResult, tx: pd.DataFrame, steps: pd.DataFrame,
               deliveries: pd.DataFrame | None) -> tuple[str, Figure]:
    """The first run's first parked transaction (else its first settled swap) as a
    timeline."""
    first = results.runs.iloc[0]

    def mine(frame: pd.DataFrame | None) -> pd.DataFrame | None:
        if frame is None:
            return None
        return frame[(frame["param_id"] == first["param_id"])
                     & (frame["seed"] == first["seed"])]

    run_tx = mine(tx)
    assert run_tx is not None
    tid = _example_transaction(run_tx)
    figure = plots.waterfall(mine(steps), tid, mine(_frames(results, "instructions")),
                             mine(_frames(results, "attempts")), mine(deliveries), run_tx)
    return (f"One transaction's timeline, {tid}: its saga steps, issuer instruction statuses "
            f"and webhook attempts, in virtual time from its initiation; the first parked "
            f"transaction (else the first settled swap) of the run {first['param_label']}, "
            f"seed {first['seed']}.", figure)


def _replay(results: SweepResult) -> dict[str, Any]:
    meta = results.meta
    planned = {p["param_id"]: p for p in meta["params"]}
    params = [planned.get(row.param_id, {"param_id": row.param_id, "label": row.param_label})
              for row in results.params.itertuples()]
    return {"sweep": meta["sweep"], "version": meta["version"], "command": results.command,
            "sweepFile": meta["sweepFile"], "workloadFile": meta["workloadFile"],
            "seeds": list(results.seeds), "frames": meta["frames"],
            "params": [{key: p.get(key) for key in ("param_id", "label", "case", "values")
                        if key in p} for p in params],
            "runs": [{"param_id": r.param_id, "seed": int(r.seed), "digest": r.digest}
                     for r in results.runs.itertuples()],
            "runsPlanned": len(results.planned),
            "resume": meta["command"] if results.unfinished else None}


def _caveats(results: SweepResult) -> str:
    """What a reader must know when ``sweep.json`` asks for more than the results hold."""
    esc, notes = html.escape, []
    planned, missing = len(results.planned), len(results.unfinished)
    if missing:
        notes.append(f"<b>Unfinished sweep:</b> the sweep last started in this folder did not "
                     f"finish: these results hold {planned - missing} of its {planned} runs. "
                     f"Resume with: <code>{esc(results.meta['command'])}</code> (finished runs "
                     f"are not run again). This page shows only the {len(results.runs)} runs "
                     "in the results.")
    known = {p["param_id"] for p in results.meta["params"]}
    stale = [label for pid, label in zip(results.params["param_id"],
                                         results.params["param_label"], strict=True)
             if pid not in known]
    if stale:
        notes.append(f"Parameter set(s) {esc(', '.join(stale))} of these results are not in "
                     "the sweep file as last run here: the inputs below are the later ones.")
    return "".join(f'<p class="note">{note}</p>' for note in notes)


def _report_command(meta: dict[str, Any], target: str | None) -> str:
    words = ["clearing-sim", "report", str(meta.get("out") or "OUT")]
    return shlex.join(words if target is None else [*words, "--out", target])


def _footer(manifest: dict[str, Any] | None) -> str:
    """The results' manifest (version, inputs and their sha256, seeds, digests, record
    counts, command), or a note that they have none."""
    if manifest is None:
        return ("<footer><h2>Manifest</h2><p class=\"note\">None: these results were written "
                "before clearing-sim recorded manifests, so their versions and inputs were not "
                "checked.</p></footer>")
    inputs = " · ".join(f"{html.escape(name)} <code>{html.escape(item['file'])}</code> sha256 "
                        f"<code>{html.escape(item['sha256'])}</code>"
                        for name, item in manifest["inputs"].items())
    return (f"<footer><h2>Manifest</h2><p>clearing-sim {html.escape(manifest['version'])} · "
            f"{inputs} · {len(manifest['runs'])} runs, {manifest['records']:,} log records. "
            "The same manifest is in <code>manifest.json</code> and in the metadata of the "
            "results' Parquet files.</p>"
            f"<pre>{html.escape(json.dumps(manifest, indent=1, ensure_ascii=False))}</pre>"
            "</footer>")


def build_report(results: SweepResult, target: str | None = None) -> str:
    """The HTML page of a sweep's results; ``target``, the path the page is written to when
    one was given (the replay command names it), else the results folder's ``report.html``."""
    meta, summary = results.meta, _summary(results.metrics)
    esc = html.escape
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8>"
             f"<title>{esc(meta['sweep'])}: clearing-sim sweep report</title>"
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>Sweep <code>{esc(meta['sweep'])}</code></h1>",
             f"<p>{esc(meta['description'])}</p>" if meta["description"] else "",
             "<h2>Replay</h2><p>Every number on this page comes from the runs listed at the "
             "end; each run is one workload and one seed, and its event-log digest is its "
             "fingerprint. This command, with this version, reproduces them:</p>",
             f"<pre>{esc(results.command)}\n{esc(_report_command(meta, target))}</pre>",
             f"<p>clearing-sim <b>{esc(meta['version'])}</b> · sweep file "
             f"<code>{esc(meta['sweepFile'])}</code> · workload file "
             f"<code>{esc(meta['workloadFile'])}</code> · seeds "
             f"<code>{esc(format_seeds(results.seeds))}</code> ({len(results.seeds)}) · "
             f"{len(results.params)} parameter set(s) · {len(results.runs)} runs</p>",
             _caveats(results),
             "<h2>Parameter sets</h2>", _table(params_table(results.params)),
             f'<p class="note">{esc(INTERVAL_NOTE)}</p>',
             "<h2>Settlement latency by mode</h2>",
             _table(interval_table(summary, [f"settlement_latency_{q}_s"
                                             for q in ("p50", "p95", "p99")], ["mode"])),
             "<h2>Parking rate by issuer</h2><p class=\"note\">Share of the transactions "
             "that list the issuer on a leg which parked at it.</p>",
             _table(interval_table(summary, ["parking_rate"], ["issuer"])),
             "<h2>Parking rate by cause</h2><p class=\"note\">Share of all transactions.</p>",
             _table(interval_table(summary, ["parking_rate"], ["cause"])),
             "<h2>Webhook delivery</h2>",
             _table(interval_table(summary, ["deliveries", "delivery_success_rate",
                                             "first_attempt_success_rate", "attempts_mean",
                                             "delivery_latency_p99_s"], ["subscription"])),
             "<h3>Disabled subscriptions</h3>",
             _table(interval_table(summary, ["subscriptions_disabled"])),
             "<h3>Time to disable</h3><p class=\"note\">From the first failure of the streak "
             "to the disable, disabled subscriptions only.</p>",
             _table(interval_table(summary, ["time_to_disable_h"], ["subscription"])),
             "<h2>Figures</h2>"]
    parts += [f"<figure>{_png(figure)}<figcaption>{esc(caption)}</figcaption></figure>"
              for caption, figure in report_figures(results)]
    parts += ["<h2>Runs and their digests</h2>", _table(runs_table(results.runs)),
              "<h2>Inputs</h2><h3>Sweep file</h3>", f"<pre>{esc(meta['sweepText'])}</pre>",
              "<h3>Workload file</h3>", f"<pre>{esc(meta['workloadText'])}</pre>",
              _footer(results.manifest),
              f'<script type="application/json" id="{REPLAY_ID}">'
              + json.dumps(_replay(results), indent=1).replace("</", "<\\/") + "</script>",
              "</body></html>\n"]
    return "\n".join(part for part in parts if part)


def write_report(out: str | Path, target: str | Path | None = None) -> Path:
    """Write the report of the sweep results in ``out``; its path (default
    ``out/report.html``: inside the results folder, never a tracked file elsewhere).
    ``ResultsFileError`` names a results file that cannot be used (nothing is written)."""
    results = load_results(out)
    path = Path(target) if target is not None else Path(out) / DEFAULT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(build_report(results, None if target is None else str(target)),
                    encoding="utf-8")
    return path


_REPLAY = re.compile(rf'<script type="application/json" id="{REPLAY_ID}">(.*?)</script>', re.S)


def read_replay(page: str) -> dict[str, Any]:
    """The replay facts embedded in a report page (``ValueError`` if it has none)."""
    match = _REPLAY.search(page)
    if match is None:
        raise ValueError("no clearing-sim replay block in this page")
    facts: dict[str, Any] = json.loads(match.group(1).replace("<\\/", "</"))
    return facts
