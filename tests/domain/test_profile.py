"""The issuer capability profile (spec, "Issuer capability profile" and "Settlement modes")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.domain.profile import (
    APPROVAL_SLA_S_DEFAULT,
    CommitPoint,
    CustodyModel,
    FeedbackChannel,
    FiatLeg,
    IssuerProfile,
    Ledger,
    SettlementMode,
    derive_mode,
    parse_profile,
)
from tests.strategies import BAD_PROFILE_VALUES, profile_bodies

REQUIRED = ["commitPoint", "custodyModel", "feedbackChannel", "fiatLeg", "ledger"]

MODE_1_BODY: dict[str, Any] = {
    "commitPoint": "ON_OBSERVATION",
    "custodyModel": "POOLED_ISSUER_WALLET",
    "feedbackChannel": ["POLLABLE_RESOURCE"],
    "fiatLeg": "NUVANTE_SETTLES_RTGS",
    "ledger": "stellar",
}
MODE_2_BODY: dict[str, Any] = {
    "commitPoint": "ON_INSTRUCTION",
    "preBurnTransferRequired": False,
    "custodyModel": "PER_MEMBER_ISSUER_WALLET",
    "feedbackChannel": ["SIGNED_WEBHOOK", "POLLABLE_RESOURCE"],
    "fiatLeg": "ISSUER_SETTLES_RTGS",
    "ledger": "evm",
    "apiBaseUrl": "https://issuer.example/api",
    "webhookUrl": "https://service.example/issuer-webhooks",
}


def refusal(body: object) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as info:
        parse_profile(body)
    return info.value


def params(body: object) -> list[str | None]:
    return [p.param for p in refusal(body).problems]


def codes(body: object) -> dict[str | None, str]:
    return {p.param: p.code for p in refusal(body).problems}


# -- valid bodies -----------------------------------------------------------------------------

def test_a_full_mode_2_body_parses_every_field() -> None:
    body = {**MODE_2_BODY, "mintDeliveryTarget": "REGISTERED_HANDLE",
            "finalityClass": "DETERMINISTIC", "amountPrecision": 6, "approvalSlaSeconds": 60}
    assert parse_profile(body) == IssuerProfile(
        commit_point=CommitPoint.ON_INSTRUCTION,
        custody_model=CustodyModel.PER_MEMBER_ISSUER_WALLET,
        feedback_channel=(FeedbackChannel.SIGNED_WEBHOOK, FeedbackChannel.POLLABLE_RESOURCE),
        fiat_leg=FiatLeg.ISSUER_SETTLES_RTGS,
        ledger=Ledger.EVM,
        pre_burn_transfer_required=False,
        api_base_url="https://issuer.example/api",
        mint_delivery_target="REGISTERED_HANDLE",
        finality_class="DETERMINISTIC",
        amount_precision=6,
        approval_sla_s=60,
        webhook_url="https://service.example/issuer-webhooks",
    )


def test_optional_fields_take_their_defaults() -> None:
    profile = parse_profile(MODE_1_BODY)
    assert profile.amount_precision == 2
    assert profile.approval_sla_s == APPROVAL_SLA_S_DEFAULT == 900
    assert profile.approval_sla_ms == 900_000
    assert profile.api_base_url is None
    assert profile.webhook_url is None
    assert profile.mint_delivery_target is None
    assert profile.finality_class is None


@settings(max_examples=60)
@given(profile_bodies())
def test_every_valid_body_parses_and_keeps_its_values(body: dict[str, Any]) -> None:
    profile = parse_profile(body)
    assert profile.commit_point.value == body["commitPoint"]
    assert profile.custody_model.value == body["custodyModel"]
    assert [c.value for c in profile.feedback_channel] == body["feedbackChannel"]
    assert profile.fiat_leg.value == body["fiatLeg"]
    assert profile.ledger.value == body["ledger"]
    assert profile.api_base_url == body.get("apiBaseUrl")
    assert profile.webhook_url == body.get("webhookUrl")
    assert profile.amount_precision == body.get("amountPrecision", 2)
    assert profile.approval_sla_s == body.get("approvalSlaSeconds", 900)


def test_fiat_leg_uses_the_wire_value_as_the_interface_defines_it() -> None:
    assert {f.value for f in FiatLeg} == {"NUVANTE_SETTLES_RTGS", "ISSUER_SETTLES_RTGS"}


# -- settlement mode derivation ----------------------------------------------------------------

@pytest.mark.parametrize("pre_burn", [True, False, None])
def test_on_observation_is_mode_1_whatever_pre_burn_transfer_required_says(
        pre_burn: bool | None) -> None:
    body = dict(MODE_1_BODY)
    if pre_burn is not None:
        body["preBurnTransferRequired"] = pre_burn
    profile = parse_profile(body)
    assert profile.mode is SettlementMode.MODE_1
    assert profile.mode.value == "MODE_1_DELEGATED_SIGNING"
    assert profile.pre_burn_transfer_required is False


def test_on_instruction_without_pre_burn_transfer_is_mode_2_two_phase() -> None:
    assert parse_profile(MODE_2_BODY).mode is SettlementMode.MODE_2
    assert SettlementMode.MODE_2.value == "MODE_2_TWO_PHASE"


def test_on_instruction_with_pre_burn_transfer_is_mode_3() -> None:
    profile = parse_profile({**MODE_2_BODY, "preBurnTransferRequired": True})
    assert profile.mode is SettlementMode.MODE_3
    assert profile.mode.value == "MODE_3_PRE_BURN_TRANSFER"


@pytest.mark.parametrize(("commit", "pre_burn", "mode"), [
    (CommitPoint.ON_OBSERVATION, False, SettlementMode.MODE_1),
    (CommitPoint.ON_OBSERVATION, True, SettlementMode.MODE_1),
    (CommitPoint.ON_INSTRUCTION, False, SettlementMode.MODE_2),
    (CommitPoint.ON_INSTRUCTION, True, SettlementMode.MODE_3),
])
def test_derive_mode_table(commit: CommitPoint, pre_burn: bool, mode: SettlementMode) -> None:
    assert derive_mode(commit, pre_burn) is mode


@settings(max_examples=50)
@given(profile_bodies())
def test_mode_follows_the_derivation_table_for_every_body(body: dict[str, Any]) -> None:
    profile = parse_profile(body)
    if body["commitPoint"] == "ON_OBSERVATION":
        expected = SettlementMode.MODE_1
    elif body["preBurnTransferRequired"]:
        expected = SettlementMode.MODE_3
    else:
        expected = SettlementMode.MODE_2
    assert profile.mode is expected


def test_mode_numbers_and_instruction_step() -> None:
    """Rule 1: Mode 1 transactions have no issuer instruction step."""
    assert [m.number for m in SettlementMode] == [1, 2, 3]
    assert not SettlementMode.MODE_1.has_instructions
    assert SettlementMode.MODE_2.has_instructions
    assert SettlementMode.MODE_3.has_instructions


# -- refund endpoint (Mode 3) --------------------------------------------------------------------

@pytest.mark.parametrize("base", ["https://issuer.example/api", "https://issuer.example/api/"])
def test_refund_endpoint_defaults_to_api_base_url_treasury_refunds(base: str) -> None:
    profile = parse_profile({**MODE_2_BODY, "preBurnTransferRequired": True, "apiBaseUrl": base})
    assert profile.refund_endpoint == "https://issuer.example/api/treasury/refunds"


def test_refund_endpoint_prefers_an_explicit_refund_url() -> None:
    profile = parse_profile({**MODE_2_BODY, "preBurnTransferRequired": True,
                             "refundUrl": "https://refunds.example/r"})
    assert profile.refund_endpoint == "https://refunds.example/r"


def test_refund_endpoint_is_none_without_api_base_url() -> None:
    assert parse_profile(MODE_1_BODY).refund_endpoint is None


# -- required fields ----------------------------------------------------------------------------

def test_an_empty_body_names_every_required_field_at_once_in_table_order() -> None:
    error = refusal({})
    assert [p.param for p in error.problems] == REQUIRED
    assert {p.code for p in error.problems} == {"required"}


@pytest.mark.parametrize("name", REQUIRED)
def test_each_required_field_is_required(name: str) -> None:
    body = {k: v for k, v in MODE_1_BODY.items() if k != name}
    assert codes(body) == {name: "required"}
    assert codes({**MODE_1_BODY, name: None}) == {name: "required"}


@settings(max_examples=50)
@given(profile_bodies(), st.sampled_from(REQUIRED))
def test_removing_a_required_field_names_it(body: dict[str, Any], name: str) -> None:
    del body[name]
    assert name in params(body)


def test_on_instruction_requires_pre_burn_transfer_required_and_api_base_url() -> None:
    body = {k: v for k, v in MODE_2_BODY.items()
            if k not in ("preBurnTransferRequired", "apiBaseUrl")}
    assert codes(body) == {"preBurnTransferRequired": "required", "apiBaseUrl": "required"}


def test_signed_webhook_requires_webhook_url_on_instruction() -> None:
    body = {k: v for k, v in MODE_2_BODY.items() if k != "webhookUrl"}
    assert codes(body) == {"webhookUrl": "required"}
    polled = {**body, "feedbackChannel": ["POLLABLE_RESOURCE"]}
    assert parse_profile(polled).webhook_url is None


def test_on_instruction_conditional_fields_refuse_an_explicit_null() -> None:
    body = {**MODE_2_BODY, "preBurnTransferRequired": None, "apiBaseUrl": None,
            "webhookUrl": None}
    assert set(params(body)) == {"preBurnTransferRequired", "apiBaseUrl", "webhookUrl"}


# -- field values --------------------------------------------------------------------------------

@settings(max_examples=60)
@given(profile_bodies(), st.sampled_from(sorted(BAD_PROFILE_VALUES)), st.data())
def test_each_invalid_field_is_named_by_exactly_one_problem(
        body: dict[str, Any], name: str, data: st.DataObject) -> None:
    body[name] = data.draw(st.sampled_from(BAD_PROFILE_VALUES[name]), label=name)
    error = refusal(body)
    assert [p.param for p in error.problems] == [name]
    assert error.problems[0].code in ("invalid_value", "invalid_type", "invalid_url")


@pytest.mark.parametrize(("name", "value"), [
    ("commitPoint", "on_instruction"),
    ("custodyModel", "self-custody"),  # the participant-level model, distinct from this one
    ("fiatLeg", "OPERATOR_SETTLES_RTGS"),
    ("ledger", "canton"),              # a chain of the integration-path tool, not a ledger here
    ("mintDeliveryTarget", "WALLET"),
    ("finalityClass", "PROBABILISTIC"),
])
def test_enum_fields_refuse_values_outside_the_table(name: str, value: str) -> None:
    assert codes({**MODE_1_BODY, name: value}) == {name: "invalid_value"}


@pytest.mark.parametrize("channels", [
    [], ["EMAIL"], ["POLLABLE_RESOURCE", "POLLABLE_RESOURCE"], "POLLABLE_RESOURCE", [None],
])
def test_feedback_channel_is_a_non_empty_list_of_distinct_values(channels: object) -> None:
    assert codes({**MODE_1_BODY, "feedbackChannel": channels}) == {
        "feedbackChannel": "invalid_value"}


@pytest.mark.parametrize(("value", "ok"), [
    (1, False), (2, True), (6, True), (18, True), (19, False), (-1, False),
    (True, False), (False, False), (2.0, False), ("6", False),
])
def test_amount_precision_is_an_integer_from_2_to_18(value: object, ok: bool) -> None:
    body = {**MODE_1_BODY, "amountPrecision": value}
    if ok:
        assert parse_profile(body).amount_precision == value
    else:
        assert codes(body) == {"amountPrecision": "invalid_value"}


@pytest.mark.parametrize(("value", "ok"), [
    (0, False), (1, True), (900, True), (604_800, True), (604_801, False), (-900, False),
    (True, False), (900.0, False), ("900", False),
])
def test_approval_sla_seconds_is_an_integer_from_1_to_604800(value: object, ok: bool) -> None:
    body = {**MODE_1_BODY, "approvalSlaSeconds": value}
    if ok:
        assert parse_profile(body).approval_sla_s == value
    else:
        assert codes(body) == {"approvalSlaSeconds": "invalid_value"}


@pytest.mark.parametrize("value", [1, 0, "true", "yes"])
def test_pre_burn_transfer_required_is_a_boolean_not_an_integer(value: object) -> None:
    assert codes({**MODE_2_BODY, "preBurnTransferRequired": value}) == {
        "preBurnTransferRequired": "invalid_type"}


@pytest.mark.parametrize("name", ["apiBaseUrl", "webhookUrl", "refundUrl"])
@pytest.mark.parametrize("url", [
    "issuer.example/api", "ftp://issuer.example/api", "https://", "https:// issuer.example",
    "https://issuer.example/a b", "", 42, "https://issuer.example/" + "a" * 2048,
])
def test_url_fields_must_be_absolute_http_urls(name: str, url: object) -> None:
    assert codes({**MODE_2_BODY, name: url}) == {name: "invalid_url"}


@pytest.mark.parametrize("url", ["https://issuer.example", "http://localhost:8080/api",
                                 "https://issuer.example/api/v1?tenant=7"])
def test_url_fields_accept_absolute_http_urls(url: str) -> None:
    assert parse_profile({**MODE_2_BODY, "apiBaseUrl": url}).api_base_url == url


def test_url_fields_refuse_a_trailing_newline() -> None:
    assert codes({**MODE_2_BODY, "apiBaseUrl": "https://issuer.example/api\n"}) == {
        "apiBaseUrl": "invalid_url"}


@pytest.mark.parametrize("name", ["mode", "issuerId", "profileVersion", "commitpoint", "custody"])
def test_unknown_fields_are_refused(name: str) -> None:
    """The mode is derived, never set; the body holds only the profile table's fields."""
    assert codes({**MODE_1_BODY, name: "x"}) == {name: "unknown_field"}


@pytest.mark.parametrize("body", [None, [], "profile", 42])
def test_a_body_that_is_not_an_object_is_refused(body: object) -> None:
    error = refusal(body)
    assert [(p.param, p.code) for p in error.problems] == [(None, "invalid_body")]


def test_every_problem_is_reported_at_once_with_its_param() -> None:
    body = {
        "commitPoint": "ON_INSTRUCTION",
        "preBurnTransferRequired": "yes",
        "custodyModel": "mpc",
        "feedbackChannel": [],
        "ledger": "canton",
        "apiBaseUrl": "not a url",
        "amountPrecision": True,
        "approvalSlaSeconds": 0,
        "mode": "MODE_2_TWO_PHASE",
    }
    assert codes(body) == {
        "mode": "unknown_field",
        "preBurnTransferRequired": "invalid_type",
        "custodyModel": "invalid_value",
        "feedbackChannel": "invalid_value",
        "fiatLeg": "required",
        "ledger": "invalid_value",
        "apiBaseUrl": "invalid_url",
        "amountPrecision": "invalid_value",
        "approvalSlaSeconds": "invalid_value",
    }
    assert params(body)[0] == "mode"  # unknown fields first, then the table's order


@settings(max_examples=50)
@given(profile_bodies(), st.lists(st.sampled_from(sorted(BAD_PROFILE_VALUES)), min_size=2,
                                  max_size=5, unique=True), st.data())
def test_several_invalid_fields_are_all_named(
        body: dict[str, Any], names: list[str], data: st.DataObject) -> None:
    for name in names:
        body[name] = data.draw(st.sampled_from(BAD_PROFILE_VALUES[name]), label=name)
    assert set(names) <= set(params(body))
