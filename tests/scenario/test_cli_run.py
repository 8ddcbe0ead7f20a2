"""``clearing-sim run`` and ``clearing-sim timeline`` (issue: the runner and the CLI): one line
per scenario, failures with expected vs actual and the replay line, exit codes 0/1/2 with bad
input first, JUnit, JSON and the event log, and digests stable across processes."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

from click.testing import CliRunner, Result

from clearing_sim.cli import main
from tests.scenario.kit import BASE, with_steps

ROOT = Path(__file__).resolve().parents[2]
Write = Callable[[str, str | bytes], Path]

SETTLES = with_steps(
    "  - wait_until: {transaction: {id: '${tx}', fields: {terminal: true}}, timeout: 1h}\n"
    "    expect: {transaction: {id: '${tx}', fields: {lifecycleStatus: settled}}}\n")
WRONG = SETTLES.replace("scenario: base", "scenario: wrong").replace(
    "lifecycleStatus: settled", "lifecycleStatus: cancelled")
INVALID = BASE.replace("world: {seed: 1}", "world: {seed: one}")


def _invoke(*args: str) -> Result:
    result = CliRunner().invoke(main, ["run", *args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def test_a_passing_scenario_prints_one_line_and_exits_0(write: Write) -> None:
    path = write("ok.yaml", SETTLES)
    result = _invoke(str(path))
    assert result.exit_code == 0, result.output
    line, summary = result.output.splitlines()
    assert line.startswith("PASS  base  (") and "virtual " in line and "wall " in line
    assert "seed 1, digest " in line
    assert summary.startswith("1 scenario(s): 1 passed, 0 failed;")


def test_a_failed_expectation_shows_expected_actual_line_and_replay_and_exits_1(
        write: Write) -> None:
    path = write("wrong.yaml", WRONG)
    result = _invoke(str(path), "--seed", "4")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("FAIL  wrong  (")
    assert any(f"{path}:" in ln and 'expected lifecycleStatus "cancelled"' in ln
               and 'got lifecycleStatus="settled"' in ln for ln in lines)
    assert f"replay: clearing-sim run {path} --seed 4" in result.output


def test_bad_input_is_exit_2_before_anything_runs_even_beside_a_failing_file(
        write: Write) -> None:
    """Exit-code precedence: 2 (bad input) over 1 (failed expectation) over 0."""
    wrong, bad = write("a/wrong.yaml", WRONG), write("a/bad.yaml", INVALID)
    result = _invoke(str(wrong.parent))
    assert result.exit_code == 2
    assert f"{bad}:2:15: world.seed:" in result.output
    assert "FAIL" not in result.output and "nothing was run" in result.output
    missing = _invoke(str(wrong.parent / "nope.yaml"))
    assert missing.exit_code == 2 and "no such file or folder" in missing.output


def test_bad_options_exit_2_with_usage(write: Write) -> None:
    path = write("ok.yaml", SETTLES)
    for args in (["--seed", "x", str(path)], ["--bogus", str(path)], []):
        result = _invoke(*args)
        assert result.exit_code == 2 and "Error:" in result.output


def test_seed_replaces_the_files_and_changes_the_digest(write: Write) -> None:
    path = write("ok.yaml", SETTLES)
    runs = [json.loads(_invoke(str(path), "--json", *extra).output)["scenarios"][0]
            for extra in ([], ["--seed", "1"], ["--seed", "2"])]
    assert runs[0]["seed"] == runs[1]["seed"] == 1 and runs[2]["seed"] == 2
    assert runs[0]["digest"] == runs[1]["digest"] != runs[2]["digest"]


def test_json_holds_every_result_and_the_counts(write: Write) -> None:
    write("d/ok.yaml", SETTLES)
    wrong = write("d/wrong.yaml", WRONG)
    result = _invoke(str(wrong.parent), "--json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["counts"] == {"scenarios": 2, "passed": 1, "failed": 1}
    failed = next(s for s in doc["scenarios"] if not s["passed"])
    assert failed["replay"] == f"clearing-sim run {wrong} --seed 1"
    bad = [r for r in failed["results"] if not r["passed"]]
    assert bad and bad[0]["expected"] == {"status": {"equals": 200},
                                          "fields": {"lifecycleStatus": {"equals": "cancelled"}}}
    assert bad[0]["actual"] == {"status": 200, "fields": {"lifecycleStatus": "settled"}}
    assert bad[0]["message"].endswith(
        'expected lifecycleStatus "cancelled", got lifecycleStatus="settled"')


def test_junit_has_a_testcase_per_expectation(write: Write, tmp_path: Path) -> None:
    wrong = write("wrong.yaml", WRONG)
    target = tmp_path / "junit.xml"
    _invoke(str(wrong), "--junit", str(target))
    root = ElementTree.parse(target).getroot()
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "wrong"
    cases = suite.findall("testcase")
    assert len(cases) == 2  # the call's status, the transaction's state
    failures = [c for c in cases if c.find("failure") is not None]
    assert len(failures) == 1 and suite.get("failures") == "1"
    failure = failures[0].find("failure")
    assert failure is not None and "replay: clearing-sim run" in (failure.text or "")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["seed"] == "1" and len(props["digest"] or "") == 64


EVENTS_WRONG = SETTLES.replace("scenario: base", "scenario: events").replace(
    "    expect: {transaction: {id: '${tx}', fields: {lifecycleStatus: settled}}}\n",
    "    expect:\n      events: {transaction: '${tx}', equals: [transaction.received, "
    "transaction.settled], excludes: [transaction.in_flight]}\n"
    "      log: {record: transaction.state, where: {transactionId: '${tx}'}, count: 2}\n")


def test_json_and_junit_carry_values_not_python_reprs(write: Write, tmp_path: Path) -> None:
    """Issue 26: ``run --json`` said ``"exactly ['transaction.received', …]"``. Expected and
    actual are JSON values there; the text in JUnit writes its values as JSON."""
    path = write("events.yaml", EVENTS_WRONG)
    target = tmp_path / "junit.xml"
    doc = json.loads(_invoke(str(path), "--json", "--junit", str(target)).output)
    events, log = [r for r in doc["scenarios"][0]["results"] if not r["passed"]]
    seen = ["transaction.received", "transaction.in_flight", "transaction.settled"]
    assert events["expected"] == {"equals": ["transaction.received", "transaction.settled"],
                                  "excludes": ["transaction.in_flight"]}
    assert events["actual"] == seen
    assert log["expected"]["count"] == {"equals": 2} and log["actual"] == {"count": 3}
    status = doc["scenarios"][0]["results"][0]
    assert status["expected"] == {"equals": 201} and status["actual"] == 201
    messages = [f.get("message") or "" for f in ElementTree.parse(target).iter("failure")]
    assert messages[0] == ('expected exactly ["transaction.received", "transaction.settled"] '
                           'and none of ["transaction.in_flight"], got ' + json.dumps(seen))
    assert not any("['" in m for m in [*messages, events["message"], log["message"]])


def test_log_writes_the_canonical_event_log_whose_sha256_is_the_digest(
        write: Write, tmp_path: Path) -> None:
    path = write("ok.yaml", SETTLES)
    target = tmp_path / "run.jsonl"
    doc = json.loads(_invoke(str(path), "--json", "--log", str(target)).output)
    lines = target.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["kind"] == "world.created"
    assert hashlib.sha256("\n".join(lines).encode()).hexdigest() == \
        doc["scenarios"][0]["digest"]
    write("two/a.yaml", SETTLES)
    write("two/b.yaml", SETTLES.replace("scenario: base", "scenario: other"))
    _invoke(str(tmp_path / "two"), "--log", str(target))
    assert (tmp_path / "run.a.jsonl").exists() and (tmp_path / "run.b.jsonl").exists()


def test_k_selects_scenarios_by_name_or_path(write: Write) -> None:
    ok = write("k/ok.yaml", SETTLES)
    write("k/wrong.yaml", WRONG)
    result = _invoke(str(ok.parent), "-k", "ok.yaml")
    assert result.exit_code == 0 and "1 scenario(s)" in result.output


def test_the_library_runs_green_and_its_digest_is_stable_across_processes() -> None:
    """The run is deterministic: the same files give the same digests in a new process,
    whatever the interpreter's hash seed."""
    outputs = []
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-m", "clearing_sim", "run", "scenarios/", "--json"],
            cwd=ROOT, capture_output=True, text=True, check=False,
            env={"PYTHONHASHSEED": hash_seed, "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        outputs.append(json.loads(done.stdout))
    assert outputs[0]["digest"] == outputs[1]["digest"]
    assert [s["digest"] for s in outputs[0]["scenarios"]] == \
        [s["digest"] for s in outputs[1]["scenarios"]]


# timeline ------------------------------------------------------------------------------------
def test_timeline_tells_one_transactions_story_with_every_webhook_attempt() -> None:
    path = ROOT / "scenarios" / "webhook-retry-schedule.yaml"
    result = CliRunner().invoke(main, ["timeline", str(path), "--transaction", "tx"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    lanes = {line.split()[2] for line in lines[1:-1]}
    assert {"saga", "state", "ledger", "rtgs", "webhook"} <= lanes
    attempts = [ln for ln in lines if "  webhook  attempt " in ln]
    assert len(attempts) == 7 and "answered 503" in attempts[0]
    assert "next attempt 1m after this one was sent" in attempts[0]
    assert lines[-1].startswith("now ") and "scenario passed" in lines[-1]
    assert lines[1].split()[0] == "+0:00:00.000"


def test_timeline_of_an_unknown_name_is_exit_2_naming_the_saved_transactions() -> None:
    path = ROOT / "scenarios" / "webhook-retry-schedule.yaml"
    result = CliRunner().invoke(main, ["timeline", str(path), "--transaction", "nope"])
    assert result.exit_code == 2 and "saved transactions: tx" in result.output
    assert "Traceback" not in result.output


def test_timeline_of_a_bad_file_is_exit_2(write: Write) -> None:
    bad = write("bad.yaml", INVALID)
    result = CliRunner().invoke(main, ["timeline", str(bad), "--transaction", "tx"])
    assert result.exit_code == 2 and "world.seed" in result.output


def test_every_command_has_help_with_an_example() -> None:
    for command in ("demo", "validate", "run", "timeline"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "Example" in result.output, command


def test_k_selects_scenarios_by_tag_too(write: Write) -> None:
    write("t/tagged.yaml", SETTLES.replace("scenario: base", "scenario: one\ntags: [agents]"))
    write("t/plain.yaml", SETTLES.replace("scenario: base", "scenario: two"))
    result = _invoke(str(write("t/x.txt", "").parent), "-k", "agents")
    assert result.exit_code == 0 and "1 scenario(s)" in result.output, result.output
    assert "one" in result.output and "two" not in result.output


STOPS = with_steps(
    "  - name: settles\n"
    "    wait_until: {transaction: {id: '${tx}', fields: {lifecycleStatus: cancelled}},"
    " timeout: 1s}\n"
    "    expect: {transaction: {id: '${tx}', fields: {terminal: true}}}\n"
    "  - expect: {transaction: {id: '${tx}', fields: {lifecycleStatus: settled}}}\n")


def _junit(tmp_path: Path, *paths: Path) -> ElementTree.Element:
    target = tmp_path / "junit.xml"
    _invoke(*map(str, paths), "--junit", str(target))
    return ElementTree.parse(target).getroot()


def test_junit_names_cases_by_step_and_field_so_edits_elsewhere_keep_them(
        write: Write, tmp_path: Path) -> None:
    """Inserting lines above (a description) moves every line but renames no testcase."""
    before = _junit(tmp_path, write("a.yaml", WRONG))
    after = _junit(tmp_path, write("b.yaml", WRONG.replace(
        "scenario: wrong", "scenario: wrong\ndescription: |\n  one\n  two\n  three")))
    names = [c.get("name") for c in before.iter("testcase")]
    assert names == [c.get("name") for c in after.iter("testcase")]
    assert names == ["initiate: expect.status", "steps[1]: expect.transaction"]
    assert [c.get("line") for c in before.iter("testcase")] != \
        [c.get("line") for c in after.iter("testcase")]


def test_junit_reports_expectations_after_a_stopping_step_as_skipped_and_has_times(
        write: Write, tmp_path: Path) -> None:
    root = _junit(tmp_path, write("stops.yaml", STOPS))
    suite = root.find("testsuite")
    assert suite is not None
    skipped = [c for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["settles: expect.transaction",
                                                "steps[2]: expect.transaction"]
    mark = skipped[1].find("skipped")
    assert mark is not None and "the run stopped at steps[1].wait_until" in \
        (mark.get("message") or "")
    assert suite.get("skipped") == "2" and root.get("skipped") == "2"
    assert suite.get("tests") == "4" and suite.get("failures") == "1"
    for element in [root, suite, *suite.iter("testcase")]:
        assert float(element.get("time") or "x") >= 0
    assert float(root.get("time") or 0) > 0
    assert any(float(c.get("time") or 0) > 0 for c in suite.iter("testcase"))


def test_junit_for_an_invalid_file_is_an_error_testcase_naming_file_and_line(
        write: Write, tmp_path: Path) -> None:
    bad = write("bad.yaml", INVALID)
    target = tmp_path / "junit.xml"
    result = _invoke(str(bad), str(write("ok.yaml", SETTLES)), "--junit", str(target))
    assert result.exit_code == 2
    root = ElementTree.parse(target).getroot()
    assert root.get("errors") == "1"
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("file") == str(bad) and case.get("line") == "2"
    error = case.find("error")
    assert error is not None and \
        f"{bad}:2:15: world.seed: expected an integer" in (error.get("message") or "")


def test_json_on_an_invalid_file_is_json_with_every_problem_and_exit_2(write: Write) -> None:
    bad = write("bad.yaml", INVALID)
    result = _invoke(str(bad), "--json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["passed"] is False and doc["scenarios"] == []
    assert doc["errors"][0] == {"path": str(bad), "line": 2, "column": 15,
                                "field": "world.seed", "message": doc["errors"][0]["message"]}
    assert "integer" in doc["errors"][0]["message"]


def test_timeline_prints_the_files_names_not_ids() -> None:
    path = ROOT / "scenarios" / "failed-parks-and-is-never-retried.yaml"
    result = CliRunner().invoke(main, ["timeline", str(path), "--transaction", "tx"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split(": transaction ")[1].startswith("tx (")
    assert any("from northbank's wallet" in ln for ln in lines if "  ledger  " in ln)
    assert any("sent to issuer etherpound " in ln for ln in lines)
    assert any(re.search(r"account (northbank|etherpound)\b", ln) for ln in lines
               if "  rtgs  " in ln)
