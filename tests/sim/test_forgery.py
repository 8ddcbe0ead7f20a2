"""Forged issuer status webhooks change nothing (spec, Issuer-side contract: "A delivery
unsigned or with a wrong signature is dropped, logged and not retried. The service treats each
such webhook only as a prompt and calls GET {apiBaseUrl}/instructions/{id} after every
delivery before acting"; issue: "a fault that injects forged issuer webhooks (for example a
forged COMPLETED) must change nothing")."""

from __future__ import annotations

import pytest

from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.sim.examples import Cast, example_world, redeem
from clearing_sim.sim.forgery import Forgery, forge_issuer_webhook, forged_issuer_webhooks
from tests.sim.simkit import holdings, step_until

BAD = [Forgery.UNSIGNED, Forgery.WRONG_SIGNATURE, Forgery.WRONG_SECRET, Forgery.STALE]


def _pending_burn(seed: int = 0) -> tuple[Cast, str, str]:
    """A Mode 2 redeem (signed webhooks) whose burn instruction awaits approval."""
    cast = example_world(seed)
    tx_id = cast.world.initiate(cast.member.id, redeem(cast.asset(2))).id
    record = step_until(cast.world, "issuer.instruction", transactionId=tx_id,
                        status="PENDING_APPROVAL")
    return cast, tx_id, str(record["instructionId"])


@pytest.mark.parametrize("forgery", BAD)
def test_a_forged_completed_without_a_valid_signature_is_dropped_logged_and_changes_nothing(
        forgery: Forgery) -> None:
    cast, tx_id, instruction_id = _pending_burn()
    world, issuer_id = cast.world, cast.issuers[2].id
    tx, before = world.transactions[tx_id], holdings(cast)
    reads = len(world.log.select("issuer.request", route="GET /instructions/{id}"))
    assert forge_issuer_webhook(world, issuer_id, instruction_id, forgery) is False
    (fault,) = world.log.select("fault.issuer_webhook")
    assert (fault["forgery"], fault["claimedStatus"]) == (forgery.value, "COMPLETED")
    last = world.log.select("issuer.webhook")[-1]
    assert (last.seq, last["verified"], last["outcome"]) == (fault.seq + 1, False, "dropped")
    world.advance(50)  # less than a read's round trip; no prompt was raised anyway
    assert world.transactions[tx_id] == tx and holdings(cast) == before
    assert len(world.log.select("issuer.request", route="GET /instructions/{id}")) == reads
    assert not world.log.select("ledger.burn")


@pytest.mark.parametrize("claimed", [InstructionStatus.COMPLETED, InstructionStatus.FAILED,
                                     InstructionStatus.REJECTED])
def test_a_correctly_signed_lying_webhook_is_only_a_prompt_the_saga_acts_on_the_true_status(
        claimed: InstructionStatus) -> None:
    cast, tx_id, instruction_id = _pending_burn()
    world, issuer_id = cast.world, cast.issuers[2].id
    before = holdings(cast)
    assert forge_issuer_webhook(world, issuer_id, instruction_id, Forgery.LYING_BODY,
                                claimed) is True
    fault = world.log.select("fault.issuer_webhook")[-1]
    read = step_until(world, "issuer.request", route="GET /instructions/{id}",
                      instructionId=instruction_id)
    assert read.seq > fault.seq  # the saga read the instruction before acting
    world.advance(1_000)
    truth = world.issuers[issuer_id].instructions[instruction_id].status
    assert truth not in (InstructionStatus.COMPLETED, claimed)
    tx = world.transactions[tx_id]
    assert (tx.lifecycle_status.value, tx.parked) == ("in-flight", False)
    assert holdings(cast) == before and not world.log.select("ledger.burn")


def test_after_every_forgery_the_run_ends_as_it_would_have_without_them() -> None:
    control = example_world(0)
    control_tx = control.world.initiate(control.member.id, redeem(control.asset(2))).id
    control.world.run_all()
    cast, tx_id, instruction_id = _pending_burn()
    cast.world.env.process(forged_issuer_webhooks(cast.world, cast.issuers[2].id,
                                                  instruction_id, [*BAD, Forgery.LYING_BODY],
                                                  gap_ms=100))
    cast.world.run_all()
    assert len(cast.world.log.select("fault.issuer_webhook")) == 5
    assert cast.world.transactions[tx_id].lifecycle_status.value == "settled"
    assert control.world.transactions[control_tx].lifecycle_status.value == "settled"
    assert holdings(cast) == holdings(control)
    genuine = cast.world.log.select("issuer.webhook", verified=True)
    assert len(genuine) == len(control.world.log.select("issuer.webhook", verified=True)) + 1
