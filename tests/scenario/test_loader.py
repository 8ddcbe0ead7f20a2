"""The loader: semantic checks the schema cannot make, typed values, files and folders."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest

from clearing_sim.domain.latency import Fixed
from clearing_sim.domain.profile import SettlementMode
from clearing_sim.scenario.errors import ScenarioInvalid, ScenarioNotFound, ScenarioUnreadable
from clearing_sim.scenario.expectations import Fact, ResponseStatus, TimePoint
from clearing_sim.scenario.loader import collect, load_scenario, validate_paths
from clearing_sim.scenario.model import Advance, Call, Resolve, SetIssuerBehaviour, WaitUntil
from tests.scenario.kit import BASE, load, problems, with_steps

Write = Callable[[str, str | bytes], Path]


def test_a_valid_file_becomes_typed_values() -> None:
    scenario = load(with_steps(
        "  - wait_until: {fact: {transaction: '${tx}', record: saga.instruction_sent}, "
        "timeout: 5m}\n"
        "  - advance: {to: {fact: {transaction: '${tx}', event: transaction.parked, nth: last},"
        " minus: 1ms}}\n"
        "  - operator: {resolve: '${tx}'}\n"
        "  - operator: {issuer_behaviour: {issuer: etherpound, latency: {ack: 2s},"
        " outcomes: {rejected: 0.5}}}\n"))
    assert scenario.name == "base" and scenario.world.seed == 1
    (member,), (issuer,) = scenario.members, scenario.issuers
    assert member.wallets == (("GBPE", Decimal("1000.00")),)
    assert issuer.profile is not None and issuer.profile.mode is SettlementMode.MODE_2
    call = scenario.steps[0].action
    assert isinstance(call, Call) and call.as_ == "northbank" and call.has_body
    assert scenario.steps[0].expectations[0] == ResponseStatus(
        scenario.steps[0].expectations[0].site, scenario.steps[0].expectations[0].matcher)
    wait, advance, resolve, behave = (s.action for s in scenario.steps[1:])
    assert isinstance(wait, WaitUntil) and wait.timeout_ms == 300_000
    assert isinstance(wait.condition, Fact) and wait.condition.record == "saga.instruction_sent"
    assert isinstance(advance, Advance) and isinstance(advance.to, TimePoint)
    assert advance.to.offset_ms == -1 and advance.to.fact is not None
    assert advance.to.fact.nth == -1
    assert resolve == Resolve("${tx}")
    assert behave == SetIssuerBehaviour("etherpound", (("ack_latency", Fixed(2000)),
                                                       ("p_rejected", 0.5)))


def test_unknown_participant_names_are_reported_with_the_closest_name() -> None:
    text = with_steps("  - call: {as: nortbank, method: GET, path: /api/v1/transactions}\n"
                      "  - arm: {transaction: '${tx}', scenario: silence, as: bank}\n")
    assert problems(text) == [
        "s.yaml:34:16: steps[1].call.as: unknown participant or agent 'nortbank' (did you mean "
        "northbank?); expected one of: etherpound, northbank",
        "s.yaml:35:56: steps[2].arm.as: unknown participant 'bank' (did you mean northbank?); "
        "expected one of: "
        "etherpound, northbank"]


def test_a_reference_before_any_save_defines_it_is_reported() -> None:
    text = BASE.replace("paymentReference: INV-1", "paymentReference: '${tx}'") + (
        "  - call: {as: northbank, method: GET, path: '/api/v1/transactions/${txid}'}\n"
        "    expect: {body: {data.id: '${tx}'}}\n")
    assert problems(text) == [
        "s.yaml:29:27: steps[0].call.body.paymentReference: ${tx} is not defined: no earlier "
        "step saves 'tx'; expected a name from an earlier step's save, a name of the world "
        "with an attribute, or now",
        "s.yaml:34:46: steps[1].call.path: ${txid} is not defined: no earlier step saves 'txid' "
        "(did you mean tx?); expected a name from an earlier step's save, a name of the world "
        "with an attribute, or now"]


def test_a_steps_own_save_is_visible_to_its_expect_but_not_its_call() -> None:
    text = with_steps("  - call: {as: northbank, method: GET, path: /api/v1/transactions}\n"
                      "    save: {first: 'data[0].id'}\n"
                      "    expect: {transaction: {id: '${first}', fields: {terminal: false}}}\n")
    assert load(text).steps[1].saves[0].name == "first"


def test_world_attributes_and_now_are_checked() -> None:
    text = with_steps("  - call: {as: northbank, method: PUT, path: "
                      "'/api/v1/issuers/${etherpound.id}/capabilities', headers: "
                      "{X-At: '${now+24h}', X-Bad: '${northbank.account}', X-Worse: '${now+}'}}\n")
    assert problems(text) == [
        "s.yaml:34:132: steps[1].call.headers.X-Bad: ${northbank.account}: northbank is a member;"
        " expected ${northbank.id}, ${northbank.name}",
        "s.yaml:34:165: steps[1].call.headers.X-Worse: malformed reference ${now+}: expected "
        "${name}, ${name.path} or ${now+DURATION}"]


def test_duplicate_names_shadowing_and_reserved_names() -> None:
    text = BASE.replace("issuers:\n", "  now: {}\n  etherpound: {}\nissuers:\n") + (
        "  - call: {as: northbank, method: GET, path: /}\n    save: {northbank: data}\n"
        "  - name: initiate\n    advance: 1s\n")
    assert problems(text) == [
        "s.yaml:7:3: members.now: 'now' is reserved; expected another name",
        "s.yaml:10:3: issuers.etherpound: duplicate name 'etherpound' (first at line 8); "
        "expected each member, issuer, agent, webhook and asset code to have its own name",
        "s.yaml:37:12: steps[1].save.northbank: 'northbank' is already a name of the world; "
        "expected a name of its own for a saved value",
        "s.yaml:38:11: steps[2].name: duplicate step name 'initiate' (first at line 24); "
        "expected each step name once"]


def test_profiles_and_behaviours_are_checked_by_the_engines_own_rules() -> None:
    text = BASE.replace("      apiBaseUrl: https://issuer.example/api\n", "").replace(
        "    assets: [GBPE]\n", "    assets: [GBPE]\n    behaviour: {outcomes: {rejected: 0.6, "
        "failed: 0.6}}\n")
    assert problems(text) == [
        "s.yaml:12:27: issuers.etherpound.behaviour.outcomes: expected outcome probabilities "
        "that add up to 1 at most: outcome probabilities add up to more than 1",
        "s.yaml:14:7: issuers.etherpound.profile.apiBaseUrl: invalid profile (required): "
        "apiBaseUrl is required for Modes 2 and 3 (commitPoint ON_INSTRUCTION)"]


def test_semantic_rules_on_steps() -> None:
    text = with_steps(
        "  - advance: {to: '2025-12-31T23:59:59Z'}\n"
        "  - expect: {status: 200, balances: {northbank: {GBPX: '1.00'}}}\n"
        "  - advance: 1s\n    save: {x: data}\n"
        "  - wait_until: {fact: {step: later}, timeout: 1m}\n"
        "  - expect: {log: {record: saga.step, count: {matches: '('}}}\n"
        "  - call: {credential: admin, method: GET, path: /}\n")
    assert [line.split(": ", 2)[:2] for line in problems(text)] == [
        ["s.yaml:34:19", "steps[1].advance.to"],
        ["s.yaml:35:14", "steps[2].expect.status"],
        ["s.yaml:35:50", "steps[2].expect.balances.northbank.GBPX"],
        ["s.yaml:37:11", "steps[3].save"],
        ["s.yaml:38:31", "steps[4].wait_until.fact.step"],
        ["s.yaml:39:56", "steps[5].expect.log.count.matches"],
        ["s.yaml:40:24", "steps[6].call.credential"]]


def test_every_problem_of_a_file_is_reported_sorted_by_line() -> None:
    text = with_steps("  - advance: 60\n", BASE.replace("ledger: evm", "ledger: ethereum")
                      .replace("as: northbank", "as: ghost"))
    lines = problems(text)
    assert [int(line.split(":")[1]) for line in lines] == [18, 24, 34]


def test_files_and_folders_are_collected_in_order(write: Write, tmp_path: Path) -> None:
    write("b/2.yml", BASE)
    write("b/1.yaml", BASE)
    write("b/.hidden/3.yaml", BASE)
    write("b/notes.md", "# not a scenario")
    write("empty/readme.txt", "")
    found = collect([str(tmp_path / "b"), str(tmp_path / "empty"), str(tmp_path / "nope")])
    assert found[:2] == [str(tmp_path / "b/1.yaml"), str(tmp_path / "b/2.yml")]
    assert [type(f) for f in found[2:]] == [ScenarioNotFound, ScenarioNotFound]
    checks = validate_paths([str(tmp_path / "b")])
    assert [c.lines() for c in checks] == [[f"{tmp_path / 'b/1.yaml'}: ok"],
                                           [f"{tmp_path / 'b/2.yml'}: ok"]]


def test_unreadable_files_are_scenario_errors(write: Write, tmp_path: Path) -> None:
    with pytest.raises(ScenarioUnreadable, match="is not UTF-8"):
        load_scenario(write("latin.yaml", "scenario: caf\xe9\n".encode("latin-1")))
    with pytest.raises(ScenarioUnreadable, match="is a folder"):
        load_scenario(tmp_path)
    with pytest.raises(ScenarioNotFound):
        load_scenario(tmp_path / "missing.yaml")
    with pytest.raises(ScenarioInvalid):
        load_scenario(write("list.yaml", "- 1\n- 2\n"))


def test_an_issuer_gateway_is_read_and_refused_for_mode_1_at_its_line() -> None:
    gateway = "    gateway: {apiBaseUrl: 'https://127.0.0.1:8443', bearer: t, patienceMs: 50}\n"
    text = BASE.replace("      approvalSlaSeconds: 600\n",
                        "      approvalSlaSeconds: 600\n" + gateway)
    (issuer,) = load(text).issuers
    assert dict(issuer.gateway) == {"apiBaseUrl": "https://127.0.0.1:8443", "bearer": "t",
                                    "patienceMs": 50}
    mode_1 = text.replace("commitPoint: ON_INSTRUCTION", "commitPoint: ON_OBSERVATION") \
        .replace("      preBurnTransferRequired: false\n", "") \
        .replace("      apiBaseUrl: https://issuer.example/api\n", "")
    assert any("gateway" in line and "ON_INSTRUCTION" in line for line in problems(mode_1))
    bad = text.replace("'https://127.0.0.1:8443'", "'ftp://x'")
    assert any("gateway.apiBaseUrl" in line for line in problems(bad))
