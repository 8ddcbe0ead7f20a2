"""The shipped JSON Schema and its readable errors: unknown keys, types, missing fields, unions."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from jsonschema import Draft202012Validator

from clearing_sim.scenario.schema import SCHEMA
from tests.scenario.kit import BASE, problems, with_steps

ROOT = Path(__file__).resolve().parents[2]


def test_the_schema_is_valid_draft_2020_12_and_shipped_as_package_data() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    on_disk = json.loads((ROOT / "clearing_sim/scenario/schema.json").read_text())
    assert on_disk == SCHEMA
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "scenario/schema.json" in project["tool"]["setuptools"]["package-data"]["clearing_sim"]
    assert any(d.startswith("jsonschema") for d in project["project"]["dependencies"])


def test_an_unknown_key_is_reported_at_the_key_with_the_closest_allowed_one() -> None:
    text = with_steps("  - advance: 1s\n    expcet: {conservation: true}\n")
    assert problems(text) == [
        "s.yaml:35:5: steps[1].expcet: unknown field 'expcet' (did you mean expect?); expected "
        "one of: advance, arm, call, expect, fault, name, operator, save, wait_until"]


def test_wrong_types_say_what_was_expected_and_what_was_found() -> None:
    text = with_steps("  - advance: 90\n  - call: {as: northbank, method: GET, path: /x}\n"
                      "    expect: {status: '200'}\n")
    assert problems(text) == [
        "s.yaml:34:14: steps[1].advance: expected a duration (90s) or {to: TIME}, got the "
        "number 90",
        "s.yaml:36:22: steps[2].expect.status: expected an HTTP status (201) or a mapping of "
        "checks ({in: [200, 201]}), got the string \"200\""]


def test_a_missing_field_is_named_at_its_parent() -> None:
    text = BASE.replace("scenario: base\n", "") + "  - wait_until: {fact: {step: initiate}}\n"
    assert problems(text) == [
        "s.yaml:1:1: scenario: missing required field 'scenario'",
        "s.yaml:33:17: steps[1].wait_until.timeout: missing required field 'timeout'"]


def test_bad_durations_and_a_union_of_the_right_type_explain_the_inner_problem() -> None:
    text = with_steps("  - advance: 90 s\n  - advance: {to: {fact: {step: initiate}, plus: 1y}}\n")
    assert problems(text) == [
        "s.yaml:34:14: steps[1].advance: expected a duration like 250ms, 90s, 15m, 72h or 2d, "
        "got the string \"90 s\"",
        "s.yaml:35:50: steps[2].advance.to.plus: expected a duration like 250ms, 90s, 15m, 72h "
        "or 2d, got the string \"1y\""]


def test_a_step_with_two_actions_or_none_is_one_problem_at_the_step() -> None:
    text = with_steps("  - advance: 1s\n    call: {method: GET, path: /}\n  - name: empty\n")
    lines = problems(text)
    assert lines[0].startswith("s.yaml:34:5: steps[1]: expected a step with one action")
    assert lines[0].endswith("got keys: advance, call")
    assert lines[1].endswith("got keys: name")


def test_enum_values_suggest_the_closest_one() -> None:
    text = BASE.replace("ledger: evm", "ledger: ethereum").replace("world: {seed: 1}",
                                                                    "world: {seed: -2}")
    assert problems(text) == [
        "s.yaml:2:15: world.seed: expected a number ≥ 0, got the number -2",
        "s.yaml:18:15: issuers.etherpound.profile.ledger: expected one of: stellar, evm, "
        "solana; got the string \"ethereum\""]


def test_amounts_must_be_strings_and_names_must_be_names() -> None:
    text = BASE.replace('{GBPE: "1000.00"}', "{GBPE: 1000.00}").replace("  northbank:\n",
                                                                          "  north bank:\n")
    lines = problems(text)
    assert lines[0] == ("s.yaml:4:3: members.north bank: key 'north bank': expected a name: "
                        "a letter, then letters, digits, _ or -")
    assert lines[1] == ("s.yaml:6:21: members.north bank.wallets.GBPE: expected a decimal "
                        "amount written as a string, like \"100.00\", got the number 1000.0")
