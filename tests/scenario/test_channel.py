"""The webhook side of scenario files: receiver settings, fault steps, attempt facts, and the
``deliveries`` and ``receiver`` expectations (spec, Events guarantees 1-5; Limits: the retry
schedule), each failing with expected vs actual at its line."""

from __future__ import annotations

from clearing_sim.scenario.results import ScenarioResult
from clearing_sim.scenario.runner import run_scenario
from tests.scenario.kit import BASE, load, problems

HOOKS = """\
webhooks:
  hooks:
    participant: northbank
    url: https://hooks.northbank.example/in
    events: [transaction.in_flight, transaction.settled]
    receiver: {RECEIVER}
steps:"""
SETTLED = "  - wait_until: {transaction: {id: '${tx}', fields: {terminal: true}}, timeout: 1h}\n"


def _with_hooks(receiver: str, steps: str) -> str:
    return BASE.replace("steps:", HOOKS.replace("{RECEIVER}", receiver), 1) + SETTLED + steps


def _run(receiver: str, steps: str) -> ScenarioResult:
    return run_scenario(load(_with_hooks(receiver, steps)))


def _failures(result: ScenarioResult) -> list[str]:
    return [r.render("s.yaml") for r in result.failures]


def test_an_outage_then_recovery_follows_the_retry_schedule_to_the_millisecond() -> None:
    """Limits: retries after 1 min, 5 min, 30 min (offsets 0, 60, 360, 2160 s)."""
    result = _run("{status: 503, until: 30m, then: 200}",
                  "  - advance: 2h\n"
                  "    expect:\n"
                  "      deliveries:\n"
                  "        - {webhook: hooks, transaction: '${tx}', event: transaction.settled,\n"
                  "           attempts: 4, offsets: [0s, 60s, 360s, 2160s],\n"
                  "           statuses: [503, 503, 503, 200], outcome: delivered}\n"
                  "        - {webhook: hooks, transaction: '${tx}',\n"
                  "           types: [transaction.in_flight, transaction.settled]}\n"
                  "      timing:\n"
                  "        - of: {webhook: hooks, attempt: 4, transaction: '${tx}', nth: last}\n"
                  "          after: {webhook: hooks, attempt: 1, transaction: '${tx}', nth: last}\n"
                  "          equals: 2160s\n")
    assert result.passed, _failures(result)


def test_a_wrong_delivery_expectation_says_expected_and_actual() -> None:
    result = _run("{status: 503}",
                  "  - advance: 10m\n"
                  "    expect:\n"
                  "      deliveries: {webhook: hooks, transaction: '${tx}', "
                  "event: transaction.settled, statuses: [503, 200], outcome: delivered}\n")
    (line,) = _failures(result)
    assert "expected statuses [503, 200]; outcome delivered, got statuses [503, 503, 503]; " \
           "outcome pending" in line
    assert line.startswith("s.yaml:")


def test_attempt_details_need_the_filters_to_pick_exactly_one_delivery() -> None:
    result = _run("{status: 200}",
                  "  - advance: 1m\n    expect: {deliveries: {webhook: hooks, attempts: 1}}\n")
    (line,) = _failures(result)
    assert "expected exactly one delivery to hooks, got 2 deliveries" in line


def test_a_fault_step_takes_the_receiver_down_and_network_loss_has_no_status() -> None:
    result = _run("{status: 200}",
                  "  - fault: {network: {webhook: hooks, loss: 1.0}}\n"
                  "  - call:\n"
                  "      as: northbank\n"
                  "      method: POST\n"
                  "      path: /api/v1/transactions\n"
                  "      body: {useCase: redeem, paymentReference: INV-2,\n"
                  "             source: {amount: '1.00', asset: '${GBPE}'},\n"
                  "             target: {amount: '1.00', asset: {code: GBP}}}\n"
                  "    save: {tx2: data.id}\n"
                  "  - advance: 2m\n"
                  "    expect:\n"
                  "      deliveries: {webhook: hooks, transaction: '${tx2}', "
                  "event: transaction.in_flight, attempts: 2, statuses: [null, null]}\n"
                  "  - fault: {receiver_outage: {webhook: hooks, status: 500, for: 1h}}\n"
                  "  - fault: {network: {webhook: hooks, loss: 0.0}}\n"
                  "  - advance: 5m\n"
                  "    expect:\n"
                  "      deliveries: {webhook: hooks, transaction: '${tx2}', "
                  "event: transaction.in_flight, statuses: [null, null, 500]}\n")
    assert result.passed, _failures(result)


def test_the_reference_receiver_view_and_counts_are_checked() -> None:
    result = _run("{app: reference, network: {duplicate: 1.0}}",
                  "  - advance: 1m\n"
                  "    expect:\n"
                  "      receiver:\n"
                  "        webhook: hooks\n"
                  "        transaction: '${tx}'\n"
                  "        state: {lifecycleStatus: settled, terminal: true}\n"
                  "        counts: {accepted: 2, duplicates: 2, rejected: 0}\n"
                  "  - expect:\n"
                  "      receiver: {webhook: hooks, counts: {accepted: 3}}\n")
    (line,) = _failures(result)
    assert "expected accepted 3, got accepted=2" in line


def test_receiver_expectations_need_a_reference_receiver_and_known_counts() -> None:
    found = problems(_with_hooks("{status: 200}",
                                 "  - expect:\n"
                                 "      receiver: {webhook: hooks, counts: {seen: 1}}\n"))
    assert any("receiver.webhook: hooks has no reference receiver; expected receiver: "
               "{app: reference} on webhooks.hooks" in p for p in found), found
    assert any("receiver.counts.seen: unknown count 'seen'" in p for p in found), found


def test_a_forged_webhook_before_any_instruction_stops_the_run_saying_why() -> None:
    text = BASE + ("  - fault: {forged_issuer_webhook: {issuer: etherpound, "
                   "transaction: '${tx}'}}\n")
    result = run_scenario(load(text))
    (line,) = _failures(result)
    assert "etherpound holds no instruction of" in line and "wait_until" in line


def test_yaml_merge_keys_may_be_overridden_but_explicit_keys_not_repeated() -> None:
    call = ("  - call: &again\n      as: northbank\n      method: GET\n"
            "      path: /api/v1/transactions/${tx}\n    expect: {status: 200}\n"
            "  - call:\n      <<: *again\n      path: /api/v1/transactions/nope\n"
            "    expect: {status: 404}\n")
    result = run_scenario(load(BASE + call))
    assert result.passed, _failures(result)
    twice = BASE + ("  - call:\n      as: northbank\n      method: GET\n      method: POST\n"
                    "      path: /x\n")
    assert any("duplicate key 'method'" in p for p in problems(twice))


def test_events_and_log_take_lists_one_expectation_each() -> None:
    result = _run("{status: 200}",
                  "  - expect:\n"
                  "      events:\n"
                  "        - {transaction: '${tx}', includes: [transaction.settled]}\n"
                  "        - {transaction: '${tx}', excludes: [transaction.parked]}\n"
                  "      log:\n"
                  "        - {record: transaction.state, count: 3}\n"
                  "        - {record: webhook.event, count: {ge: 2}}\n")
    assert result.passed, _failures(result)
    assert len(result.results) == 5  # the 201, two events, two counts
