"""JSON from outside the process is read by ``domain.jsontext.parse_untrusted`` (or the service's
own request-body gate), never by a bare ``json.loads`` or an HTTP client's ``.json()``.

Why a test of the source: ``json.loads`` raises ``RecursionError`` for a few thousand ``[``,
which is not a ``ValueError``; every caller that caught ``ValueError`` let it through. A lone
``[`` * 1000 to ``/issuer-webhooks/…`` was a 500 with a traceback, and a gateway answering it
killed the transaction's saga (it never parked). ``parse_untrusted`` refuses every bad text
with one ``ValueError``. This test keeps the bare calls to the places listed below, each
reading text this project wrote itself, with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "clearing_sim"

#: module -> why a bare ``json.loads``/``.json()`` there reads only this project's own text
TRUSTED = {
    "service/messages.py": "Response.json: the service's own answer",
    "service/idempotency.py": "a body the service's gate already read, and its own answer",
    "service/api.py": "the service's own answer",
    "service/auth.py": "claims of a portal token whose HMAC this world made verified first; "
                       "RecursionError caught",
    "http/journal.py": "a CRC-checked journal line; RecursionError caught (a damaged line)",
    "http/export.py": "answers the service gave again during the export's replay",
    "scenario/schema.py": "the package's own JSON Schema",
    "scenario/checks.py": "the in-process service's answer",
    "scenario/stage.py": "the in-process service's answer",
    "webhooks.py": "the in-process service's answer (the receivers' own GET)",
    "conformance/receiver_stage.py": "the kit's own in-process shim's answer",
    "analysis/schema.py": "the package's own JSON Schema",
    "analysis/driver.py": "the in-process service's answer",
    "analysis/frames.py": "an event log this package wrote",
    "analysis/report.py": "the facts a report of this package embedded",
}


def _bare_calls(path: Path) -> list[int]:
    """Lines with ``json.loads(...)`` or ``<anything>.json()`` (no arguments)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        func = node.func
        loads = func.attr == "loads" and isinstance(func.value, ast.Name) \
            and func.value.id == "json"
        dot_json = func.attr == "json" and not node.args and not node.keywords
        if loads or dot_json:
            lines.append(node.lineno)
    return lines


def test_json_from_outside_is_read_only_by_parse_untrusted() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        lines = _bare_calls(path)
        if lines and name not in TRUSTED:
            found[name] = lines
    assert not found, ("JSON read with json.loads or .json() outside the trusted list: use "
                       f"clearing_sim.domain.jsontext.parse_untrusted (file: lines) {found}")


def test_every_trusted_place_still_reads_json_so_the_list_stays_honest() -> None:
    stale = [name for name in TRUSTED if not _bare_calls(PACKAGE / name)]
    assert not stale, f"no bare JSON read left in {stale}: drop them from TRUSTED"


def test_the_scan_finds_both_forms(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("import json\nx = json.loads(b)\ny = response.json()\nz = r.json(a)\n")
    assert _bare_calls(source) == [2, 3]
