"""The runner: steps on virtual time, saves and references, expectations with expected vs
actual and the line, and steps that cannot be carried out stop the run, saying why."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from clearing_sim.scenario import runner
from clearing_sim.scenario.results import ScenarioResult
from clearing_sim.scenario.runner import run_scenario
from clearing_sim.sim.collector import YOUNG_THRESHOLD
from tests.scenario.kit import BASE, load, with_steps

SLA_MS = 600_000
AT_SENT = "{fact: {transaction: '${tx}', record: saga.execute_sent}"  # Mode 2: the SLA's start


def _run(steps: str, head: str = BASE) -> ScenarioResult:
    return run_scenario(load(with_steps(steps, head)))


def _lines(result: ScenarioResult) -> list[str]:
    return [r.render("s.yaml") for r in result.results]


def test_silence_parks_at_the_sla_and_not_a_millisecond_before() -> None:
    result = _run(
        "  - arm: {transaction: '${tx}', scenario: silence}\n"
        f"  - wait_until: {{fact: {AT_SENT[7:]}, timeout: 5m}}\n"
        f"  - advance: {{to: {AT_SENT}, plus: 600s, minus: 1ms}}}}\n"
        "    expect: {transaction: {id: '${tx}', fields: {lifecycleStatus: in-flight}}}\n"
        "  - advance: 1ms\n"
        "    expect: {transaction: {id: '${tx}', fields: {lifecycleStatus: failed, parked: "
        "true}}}\n")
    assert result.passed, _lines(result)
    assert len(result.results) == 4  # 201, the implicit 200 of arm, two states


def test_a_failed_expectation_says_expected_and_actual_at_its_line_and_the_run_goes_on() -> None:
    result = _run(
        "  - expect:\n      transaction: {id: '${tx}', fields: {lifecycleStatus: settled, "
        "parked: false}}\n"
        "  - wait_until: {transaction: {id: '${tx}', fields: {terminal: true}}, timeout: 1h}\n"
        "    expect: {transaction: {id: '${tx}', fields: {lifecycleStatus: settled}}}\n")
    assert not result.passed
    assert _lines(result)[1] == ('s.yaml:35:20: steps[1].expect.transaction: expected '
                                 'lifecycleStatus "settled", got lifecycleStatus="received"')
    assert result.results[2].passed and not result.results[2].stopped


def test_a_wait_past_its_deadline_stops_the_run_with_a_clear_message() -> None:
    result = _run("  - wait_until: {transaction: {id: '${tx}', fields: {lifecycleStatus: "
                  "cancelled}}, timeout: 10m}\n  - advance: 1s\n")
    last = result.results[-1]
    assert last.stopped and not last.passed and last.field == "steps[1].wait_until"
    assert last.actual.startswith("wait_until: the condition did not hold within 10m "
                                  "(deadline 2026-01-01T00:10:00.000Z); last seen: "
                                  'lifecycleStatus="settled"')
    assert result.virtual_ms == 600_000  # and the advance after it never ran


def test_wait_until_stops_at_the_first_event_where_the_condition_holds() -> None:
    result = _run("  - wait_until: {fact: {transaction: '${tx}', event: transaction.in_flight},"
                  " timeout: 1h}\n")
    assert result.passed
    assert result.virtual_ms == 200  # the saga's intake: received → in-flight


def test_advance_into_the_past_and_a_missing_save_stop_the_run() -> None:
    past = _run("  - advance: 1h\n  - advance: {to: 30m}\n")
    assert past.results[-1].actual == ("advance to 30m: the clock is already at "
                                       "1h, and virtual time never moves backwards")
    missing = _run("  - call: {as: northbank, method: GET, path: /api/v1/transactions/nope}\n"
                   "    save: {x: data.id}\n    expect: {status: 200}\n")
    assert [r.passed for r in missing.results] == [True, False, False]
    assert missing.results[1].actual == "404 transaction_not_found"
    assert missing.results[2].actual == ("save x: the response (status 404) has no data.id")


def test_response_headers_errors_resources_and_log_counts() -> None:
    result = _run(
        "  - call: {as: northbank, method: POST, path: '/api/v1/transactions/${tx}/cancel'}\n"
        "    expect:\n      status: 200\n"
        "      headers: {Service-Version: {matches: '^20'}, Idempotent-Replayed: {exists: false}}\n"
        "      body: {data.saga.steps: {length: 5}, data.details.reason.code: operator_cancelled}\n"
        "  - call: {as: northbank, method: POST, path: '/api/v1/transactions/${tx}/cancel'}\n"
        "    expect: {status: 409, error: already_cancelled}\n"
        "  - expect:\n"
        "      resource: {get: '/api/v1/transactions?limit=5', as: northbank, status: 200,\n"
        "                 fields: {'data[0].id': '${tx}', meta.nextCursor: null}}\n"
        "      log: {record: api.request, where: {status: 409}, count: 1}\n"
        "      events: {transaction: '${tx}', includes: [transaction.cancelled]}\n"
        "      balances: {northbank: {GBPE: '1000.00'}}\n"
        "      conservation: true\n")
    assert result.passed, _lines(result)


def test_operator_resolve_re_enters_in_flight_and_behaviour_changes_apply() -> None:
    result = _run(
        "  - arm: {transaction: '${tx}', scenario: failed}\n"
        "  - wait_until: {transaction: {id: '${tx}', fields: {parked: true}}, timeout: 1h}\n"
        "  - operator: {resolve: '${tx}'}\n"
        "  - wait_until: {transaction: {id: '${tx}', fields: {terminal: true}}, timeout: 1h}\n"
        "    expect:\n      events:\n        transaction: '${tx}'\n        equals: "
        "[transaction.received, transaction.in_flight, transaction.parked, "
        "transaction.in_flight, transaction.settled]\n"
        "  - operator: {issuer_behaviour: {issuer: etherpound, outcomes: {rejected: 1.0}}}\n"
        "  - call:\n      as: northbank\n      method: POST\n      path: /api/v1/transactions\n"
        "      body: {useCase: redeem, paymentReference: INV-2, source: {amount: '1.00', "
        "asset: '${GBPE}'}, target: {amount: '1.00', asset: {code: GBP}}}\n"
        "    save: {second: data.id}\n"
        "  - wait_until: {transaction: {id: '${second}', fields: {terminal: true}}, timeout: 1h}\n"
        "    expect: {transaction: {id: '${second}', fields: {lifecycleStatus: failed, "
        "parked: false}}}\n")
    assert result.passed, _lines(result)


def test_arm_expects_200_unless_told_otherwise() -> None:
    mode1 = BASE.replace("commitPoint: ON_INSTRUCTION", "commitPoint: ON_OBSERVATION").replace(
        "ledger: evm", "ledger: stellar")
    result = _run("  - arm: {transaction: '${tx}', scenario: silence}\n", mode1)
    assert _lines(result)[1] == "s.yaml:34:5: steps[1].arm: expected 200, got 409 " \
                                "no_issuer_instruction"
    told = _run("  - arm: {transaction: '${tx}', scenario: silence}\n"
                "    expect: {status: 409, error: {code: no_issuer_instruction}}\n", mode1)
    assert told.passed


def test_agents_submit_with_their_mandate_and_the_cap_and_expiry_are_enforced() -> None:
    head = BASE.replace("steps:\n", "agents:\n  bot:\n    member: northbank\n    capabilities: "
                        "{initiateTransaction: true}\n    amount_cap_gbp: '50.00'\n"
                        "    expires_in: 1h\nsteps:\n")

    def submit(amount: str, expect: str) -> str:
        return ("  - call:\n      as: bot\n      method: POST\n      path: /api/v1/transactions\n"
                "      body: {useCase: redeem, paymentReference: AG, source: {amount: "
                f"'{amount}', asset: '${{GBPE}}'}}, target: {{amount: '{amount}', asset: "
                f"{{code: GBP}}}}}}\n    expect: {expect}\n")

    result = _run(submit("10.00", "{status: 201}")
                  + submit("90.00", "{status: 403, error: agent_amount_cap_exceeded}")
                  + "  - advance: 2h\n" + submit("10.00", "{status: 403, error: agent_expired}"),
                  head)
    assert result.passed, _lines(result)
    assert len(result.results) == 6


def test_a_world_the_api_refuses_stops_at_the_definition() -> None:
    head = BASE.replace("steps:\n", "webhooks:\n  hooks:\n    participant: northbank\n"
                        "    url: https://10.0.0.5/hooks\n    events: [transaction.settled]\n"
                        "steps:\n")
    result = _run("", head)
    (only,) = result.results
    assert only.stopped and only.field == "webhooks.hooks" and only.line == 23
    assert only.actual.startswith("the API refused to create webhook hooks: 400")


def test_production_worlds_answer_503_on_sandbox_routes() -> None:
    head = BASE.replace("world: {seed: 1}", "world: {seed: 1, environment: production}")
    result = _run("  - call: {as: northbank, credential: admin, method: GET, "
                  "path: /api/v1/sandbox/agents}\n"
                  "    expect: {status: 503, error: {code: sandbox_unavailable}}\n", head)
    assert result.passed, _lines(result)


def test_a_run_has_the_engine_s_collector_pace_throughout_and_gives_it_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only the clock's moves: every step (its request, its checks) runs with the young
    threshold raised (``sim.collector``), and the process's own comes back after."""
    seen: list[int] = []
    run_step = runner._run_step

    def watched(*args: Any) -> None:
        seen.append(gc.get_threshold()[0])
        run_step(*args)

    monkeypatch.setattr(runner, "_run_step", watched)
    before = gc.get_threshold()
    gc.set_threshold(700, *before[1:])
    try:
        assert _run("  - advance: 1s\n").passed
        assert seen == [YOUNG_THRESHOLD] * 2 and gc.get_threshold()[0] == 700
    finally:
        gc.set_threshold(*before)
