"""Identifier derivations (spec, "Issuer-side contract": ``idempotencyKey`` is a UUIDv5 derived
from command id and leg; Limits: instruction ``reference`` at most 35 characters)."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.ids import (
    CommandId,
    TransactionId,
    instruction_idempotency_key,
    instruction_reference,
    transaction_id_of_reference,
)

COMMAND = CommandId("6f1c2e9a-3b4d-4c5e-8f70-112233445566")


def test_idempotency_key_is_uuid5_of_command_id_namespace_and_leg_name() -> None:
    key = instruction_idempotency_key(COMMAND, "burn")
    assert key == str(uuid.uuid5(uuid.UUID(COMMAND), "burn"))
    assert key == "ae332aab-8bf0-5192-9c23-f969ed77c64a"  # fixed vector
    assert uuid.UUID(key).version == 5
    assert instruction_idempotency_key(COMMAND, "mint") == "38ae90dc-5a94-5277-8be4-107680929f06"


@settings(max_examples=50)
@given(st.uuids(), st.sampled_from(["burn", "mint"]))
def test_idempotency_key_is_stable_across_replays(command: uuid.UUID, leg: str) -> None:
    command_id = CommandId(str(command))
    first = instruction_idempotency_key(command_id, leg)
    assert first == instruction_idempotency_key(command_id, leg)
    assert first == str(uuid.uuid5(command, leg))


@settings(max_examples=50)
@given(st.uuids())
def test_idempotency_key_differs_between_burn_and_mint(command: uuid.UUID) -> None:
    command_id = CommandId(str(command))
    assert instruction_idempotency_key(command_id, "burn") != instruction_idempotency_key(
        command_id, "mint")


@settings(max_examples=50)
@given(st.uuids(), st.uuids())
def test_idempotency_key_differs_between_commands(a: uuid.UUID, b: uuid.UUID) -> None:
    if a != b:
        assert instruction_idempotency_key(CommandId(str(a)), "burn") != \
            instruction_idempotency_key(CommandId(str(b)), "burn")


def test_idempotency_key_needs_a_uuid_command_id() -> None:
    with pytest.raises(ValueError):
        instruction_idempotency_key(CommandId("not-a-uuid"), "burn")


@settings(max_examples=100)
@given(st.uuids())
def test_instruction_reference_is_at_most_35_characters(tx: uuid.UUID) -> None:
    reference = instruction_reference(TransactionId(str(tx)))
    assert len(reference) <= 35
    assert reference == tx.hex
    assert reference == instruction_reference(TransactionId(str(tx)))


def test_instruction_reference_identifies_the_transaction() -> None:
    a = instruction_reference(TransactionId("f03848e1-1f13-4be1-80d9-d189cdc28f2f"))
    assert a == "f03848e11f134be180d9d189cdc28f2f"
    assert uuid.UUID(a) == uuid.UUID("f03848e1-1f13-4be1-80d9-d189cdc28f2f")


@settings(max_examples=100)
@given(st.uuids(), st.sampled_from(["burn", "mint", "", "é"]),
       st.sampled_from([str, lambda u: str(u).upper(), lambda u: f"{{{u}}}",
                        lambda u: u.urn, lambda u: u.hex]))
def test_the_derivations_read_any_form_uuid_reads(command: uuid.UUID, leg: str,
                                                  form: object) -> None:
    """The fast path for the id factory's form gives what the uuid module gives for any form."""
    text = form(command)  # type: ignore[operator]
    assert instruction_idempotency_key(CommandId(text), leg) == str(uuid.uuid5(command, leg))
    assert instruction_reference(TransactionId(text)) == command.hex
    assert transaction_id_of_reference(command.hex) == str(command)


@pytest.mark.parametrize("text", ["", "not-a-uuid", "0" * 31, "g" * 32])
def test_a_reference_that_is_no_uuid_is_refused_as_uuid_refuses_it(text: str) -> None:
    with pytest.raises(ValueError):
        transaction_id_of_reference(text)
    with pytest.raises(ValueError):
        instruction_reference(TransactionId(text))
