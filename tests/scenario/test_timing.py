"""``timing`` expectations cannot pass wrongly (issue 26, section 5): a negative interval fails
naming both instants unless the check says ``allow_negative: true``, and ``nth: last`` is the
run's last match, judged when the run ends (docs/scenarios.md, "On timing")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.cli import main
from clearing_sim.scenario.results import CheckResult, ScenarioResult
from clearing_sim.scenario.runner import run_scenario
from tests.scenario.kit import BASE, load, problems, with_steps

INPUTS = Path(__file__).parent / "inputs"
HOOKS = BASE.replace("steps:\n", """webhooks:
  hooks:
    participant: northbank
    url: https://hooks.northbank.example/clearing
    events: [transaction.received, transaction.in_flight, transaction.failed]
    receiver: {latency: 80ms}
steps:
""")
SETTLED = ("  - wait_until: {fact: {transaction: '${tx}', event: transaction.settled}, "
           "timeout: 1h}\n")
FAILED = ("  - arm: {transaction: '${tx}', scenario: rejected}\n"
          "  - wait_until: {fact: {transaction: '${tx}', event: transaction.failed}, "
          "timeout: 1h}\n")
LAST_DELIVERY = ("    expect:\n      timing:\n"
                 "        - of: {webhook: hooks, attempt: 1, transaction: '${tx}', nth: last}\n"
                 "          after: {transaction: '${tx}', event: transaction.failed}\n"
                 "          at_most: 2s\n")
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def _run(steps: str, head: str = BASE) -> ScenarioResult:
    return run_scenario(load(with_steps(steps, head)))


def _timings(result: ScenarioResult) -> list[CheckResult]:
    return [r for r in result.results if ".timing[" in r.field]


def _names_both_instants(check: CheckResult) -> None:
    """The failure names ``of``'s and ``after``'s instants, ISO and ms, and they are the
    instants the JSON carries."""
    value = check.actual_value
    of, after = value["of"], value["after"]
    assert value["ms"] == of["atMs"] - after["atMs"] < 0
    assert (f"of at {of['at']} ({of['atMs']} ms since the start) is before after at "
            f"{after['at']} ({after['atMs']} ms since the start)") in check.actual
    assert re.fullmatch(ISO, of["at"]) and re.fullmatch(ISO, after["at"])


def test_received_at_most_1s_after_settled_fails_it_came_56s_before() -> None:
    """Reproduced from the issue: ``of: received, after: settled, at_most: 1s`` passed."""
    result = _run(SETTLED + "    expect:\n      timing:\n"
                  "        - of: {transaction: '${tx}', event: transaction.received}\n"
                  "          after: {transaction: '${tx}', event: transaction.settled}\n"
                  "          at_most: 1s\n")
    (check,) = _timings(result)
    assert not check.passed and not result.passed
    assert check.expected == "at most 1s, of no earlier than after"
    _names_both_instants(check)


def test_nth_last_before_the_last_delivery_was_sent_fails_naming_both_instants() -> None:
    """Reproduced from the issue: the run ends as the transaction fails, before its
    transaction.failed delivery is sent; the run's last delivery is an earlier one, so
    the interval is negative and the check fails (it passed, at −1 m 32 s)."""
    result = _run(FAILED + LAST_DELIVERY, HOOKS)
    (check,) = _timings(result)
    assert not check.passed
    _names_both_instants(check)


def test_nth_last_is_the_runs_last_so_a_check_written_before_it_happened_sees_it() -> None:
    """The same check, in a run that goes on past the delivery: judged when the run ends,
    ``nth: last`` is the transaction.failed delivery, sent as the event happened."""
    result = _run(FAILED + LAST_DELIVERY + "  - advance: 1m\n    expect: {conservation: true}\n",
                  HOOKS)
    (check,) = _timings(result)
    assert check.passed, check.render("s.yaml")
    assert check.actual_value["ms"] == 0
    # in its step's place: after the arm's 200, before the advance step's conservation
    assert [r.field for r in result.results][2:] == ["steps[2].expect.timing[0]",
                                                     "steps[3].expect.conservation"]


def test_a_check_judged_at_the_end_keeps_the_saved_value_of_its_step() -> None:
    """``${tx}`` is resolved when the step runs: a later save of ``tx`` does not move it."""
    again = ("  - call:\n      as: northbank\n      method: POST\n"
             "      path: /api/v1/transactions\n      body: {useCase: redeem, paymentReference: "
             "INV-2, source: {amount: '1.00', asset: '${GBPE}'}, target: {amount: '1.00', "
             "asset: {code: GBP}}}\n    save: {tx: data.id}\n  - advance: 5m\n")
    result = _run(FAILED + LAST_DELIVERY + "  - advance: 1m\n" + again, HOOKS)
    (check,) = _timings(result)
    assert check.passed and check.actual_value["ms"] == 0


def test_a_run_that_stops_never_reaches_the_end_an_nth_last_check_is_judged_at() -> None:
    result = _run(FAILED + LAST_DELIVERY + "  - advance: {to: 0ms}\n", HOOKS)
    assert not _timings(result)
    (skipped,) = [s for s in result.skipped if ".timing[" in s.field]
    assert skipped.actual.startswith("not checked: the run stopped at steps[3].advance (line ")
    assert skipped.actual.endswith("before the end of the run that nth: last is judged at")


def test_allow_negative_accepts_of_before_after_and_still_holds_it_to_at_most() -> None:
    """``allow_negative: true`` with ``at_most``: "no later than"; the signed interval is
    held to the bound, so ``of`` too long after ``after`` still fails."""
    def check(of: str, after: str, at_most: str) -> CheckResult:
        result = _run(SETTLED + "    expect:\n      timing:\n"
                      f"        - of: {{transaction: '${{tx}}', event: {of}}}\n"
                      f"          after: {{transaction: '${{tx}}', event: {after}}}\n"
                      f"          at_most: {at_most}\n          allow_negative: true\n")
        return _timings(result)[0]

    before = check("transaction.received", "transaction.settled", "0ms")
    assert before.passed and before.actual_value["ms"] < 0
    assert before.expected_value == {"atMostMs": 0, "allowNegative": True}
    assert not check("transaction.settled", "transaction.received", "1s").passed


def test_allow_negative_beside_at_least_or_equals_is_refused_it_could_never_pass() -> None:
    for bound in ("at_least: 0ms", "equals: 1s"):
        text = with_steps("  - expect:\n      timing:\n"
                          "        - of: {step: initiate}\n"
                          f"          {bound}\n          allow_negative: true\n")
        assert problems(text) == [
            "s.yaml:38:27: steps[1].expect.timing[0].allow_negative: a negative interval is "
            "never at least or equal to a duration, so allow_negative could never let this "
            "check pass; expected at_most alone beside allow_negative: true"]


EVENTS = ("transaction.received", "transaction.in_flight", "transaction.settled")


@settings(max_examples=15, deadline=None)
@given(pair=st.sampled_from([(0, 1), (0, 2), (1, 2)]),
       bound=st.sampled_from(["at_most", "at_least", "equals"]),
       bound_ms=st.integers(0, 10**9))
def test_whatever_the_bound_of_before_after_fails(pair: tuple[int, int], bound: str,
                                                  bound_ms: int) -> None:
    """The class: any two of a transaction's events measured the wrong way round (``of`` the
    earlier) fail, whichever bound and however wide; only ``allow_negative`` accepts it."""
    first, later = EVENTS[pair[0]], EVENTS[pair[1]]
    result = _run(SETTLED + "    expect:\n      timing:\n"
                  f"        - of: {{transaction: '${{tx}}', event: {first}}}\n"
                  f"          after: {{transaction: '${{tx}}', event: {later}}}\n"
                  f"          {bound}: {bound_ms}ms\n")
    (check,) = _timings(result)
    assert not check.passed
    _names_both_instants(check)


def test_the_new_users_scenario_fails_each_reversed_check_naming_both_instants() -> None:
    """tests/scenario/inputs/new-user-reversed-timing.yaml, as a user runs it."""
    path = INPUTS / "new-user-reversed-timing.yaml"
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 1, result.output
    failures = [ln.strip() for ln in result.output.splitlines() if "expected" in ln]
    assert [ln.split(": expected")[0] for ln in failures] == [
        f"{path}:51:11: steps[1].expect.timing[0]", f"{path}:70:11: steps[4].expect.timing[0]"]
    for line in failures:
        assert re.search(rf"of at {ISO} \(\d+ ms since the start\) is before after at {ISO} "
                         r"\(\d+ ms since the start\)", line), line
    doc = json.loads(CliRunner().invoke(main, ["run", str(path), "--json"]).output)
    bad = [r for r in doc["scenarios"][0]["results"] if not r["passed"]]
    assert all(r["actual"]["ms"] < 0 and r["actual"]["of"]["atMs"] < r["actual"]["after"]["atMs"]
               for r in bad) and len(bad) == 2
