"""The simulated issuer gateway against the spec's "Issuer-side contract" and "Conformance".

Burn/mint instructions with idempotent replay, Mode 2's stop at PENDING_APPROVAL until
execute, APPROVED as progress only, armed outcomes on the next instruction event, signed
status webhooks that are only prompts (a bad signature is dropped, logged and changes
nothing), and the Mode 3 refund endpoint's response.
"""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.errors import NotAllowed
from clearing_sim.domain.ids import instruction_idempotency_key
from clearing_sim.domain.instruction import InstructionStatus, Outcome
from clearing_sim.domain.money import Money
from clearing_sim.domain.profile import FeedbackChannel, Ledger, SettlementMode
from clearing_sim.domain.signing import signature_header
from clearing_sim.sim.examples import Cast, example_world, redeem, swap
from clearing_sim.sim.issuer import (
    IdempotencyConflict,
    IssuerBehaviour,
    IssuerGateway,
    webhook_body,
)
from tests.sim.simkit import call, instruction_ids, log_without, step_until

REFERENCE = uuid.UUID(int=0x5EED).hex  # the issuer only needs a transaction reference

POLL = (FeedbackChannel.POLLABLE_RESOURCE,)


def _burn_body(cast: Cast, mode: int = 2, amount: str = "5.00") -> dict[str, str]:
    world = cast.world
    ledger = cast.issuers[mode].profile.ledger
    return {"idempotencyKey": str(uuid.uuid5(uuid.UUID(int=1), "burn")),
            "reference": REFERENCE, "sourceWalletId": world.wallet(cast.member, ledger),
            "amount": amount, "assetCode": cast.asset(mode).code}


def _lock_for(cast: Cast, body: dict[str, str], mode: int = 2) -> None:
    """Lock the burn's tokens as the saga would: a Mode 2 issuer burns only what is locked."""
    ledger = cast.world.ledgers[cast.issuers[mode].profile.ledger]
    money = Money.of(body["amount"], cast.asset(mode))
    tx_id = str(uuid.UUID(hex=body["reference"]))
    call(cast.world, ledger.lock(tx_id, body["sourceWalletId"], money))


def test_mode_2_issuer_refuses_to_burn_what_the_service_did_not_lock(cast: Cast) -> None:
    """A Mode 2 burn consumes the service's lock; with no lock the issuer reports FAILED and
    nothing leaves the member's wallet (no double burn after an operator fix)."""
    world, gateway = cast.world, _gateway(cast, 2)
    body = _burn_body(cast)
    before = world.ledgers[Ledger.EVM].balance(body["sourceWalletId"], cast.asset(2))
    ins = call(world, gateway.post_instruction("burn", body, SettlementMode.MODE_2, POLL))
    call(world, gateway.execute(ins.instruction_id))
    world.run_all()
    assert _statuses(cast, ins.instruction_id)[-1] == "FAILED"
    assert world.ledgers[Ledger.EVM].balance(body["sourceWalletId"], cast.asset(2)) == before


def _gateway(cast: Cast, mode: int) -> IssuerGateway:
    return cast.world.issuers[cast.issuers[mode].id]


def _statuses(cast: Cast, instruction_id: str) -> list[str]:
    return [str(r["status"]) for r in cast.world.log.select("issuer.instruction",
                                                             instructionId=instruction_id)]


# idempotency ------------------------------------------------------------------------------
def test_replay_with_the_same_key_and_body_returns_the_original_instruction(cast: Cast) -> None:
    """Replaying the same idempotency key and body returns the original result and creates
    no second instruction."""
    world, gateway = cast.world, _gateway(cast, 2)
    body = _burn_body(cast)
    first = call(world, gateway.post_instruction("burn", body, SettlementMode.MODE_2, POLL))
    again = call(world, gateway.post_instruction("burn", dict(body), SettlementMode.MODE_2, POLL))
    assert again.instruction_id == first.instruction_id
    assert list(gateway.instructions) == [first.instruction_id]
    assert len(world.log.select("issuer.instruction", status="RECEIVED")) == 1
    [replay] = world.log.select("issuer.replay")
    assert replay["instructionId"] == first.instruction_id


def test_same_key_with_another_body_is_an_idempotency_conflict(cast: Cast) -> None:
    world, gateway = cast.world, _gateway(cast, 2)
    first = call(world, gateway.post_instruction("burn", _burn_body(cast),
                                                 SettlementMode.MODE_2, POLL))
    with pytest.raises(IdempotencyConflict):
        call(world, gateway.post_instruction("burn", _burn_body(cast, amount="6.00"),
                                             SettlementMode.MODE_2, POLL))
    assert list(gateway.instructions) == [first.instruction_id]
    assert gateway.instructions[first.instruction_id].body["amount"] == "5.00"
    assert len(world.log.select("issuer.idempotency_conflict")) == 1


@pytest.mark.parametrize(("source", "target"), [(2, None), (3, None), (2, 3), (1, 2)])
def test_saga_keys_instructions_by_command_and_leg_and_references_the_transaction(
        cast: Cast, source: int, target: int | None) -> None:
    """idempotencyKey is the UUIDv5 of the command id and the leg; reference is the service
    transaction reference (≤ 35 characters) the issuer stores to match the transaction."""
    world = cast.world
    request = redeem(cast.asset(source)) if target is None \
        else swap(cast.asset(source), cast.asset(target))
    tx = world.initiate(cast.member.id, request)
    world.run_all()
    sent = world.log.select("saga.instruction_sent", transactionId=tx.id)
    assert sent
    for record in sent:
        key = instruction_idempotency_key(tx.command_id, str(record["leg"]))
        assert record["idempotencyKey"] == key
        [post] = world.log.select("issuer.request", idempotencyKey=key)
        assert post["reference"] == uuid.UUID(tx.id).hex
        assert len(str(post["reference"])) <= 35
    for instruction_id in instruction_ids(world, tx.id):
        assert world.log.select("issuer.instruction", instructionId=instruction_id)[0][
            "transactionId"] == tx.id


# Mode 2 two-phase -------------------------------------------------------------------------
_HELD = {"RECEIVED": ["RECEIVED"], "PENDING_APPROVAL": ["RECEIVED", "PENDING_APPROVAL"],
         "APPROVED": ["RECEIVED", "PENDING_APPROVAL", "APPROVED"]}


@pytest.mark.parametrize("hold_at", [None, *_HELD])
def test_mode_2_instruction_holds_until_execute(hold_at: str | None) -> None:
    """Spec: "In Mode 2 the issuer stops at RECEIVED or PENDING_APPROVAL and does not execute
    until the execute call arrives", however long that takes. By default it holds at
    PENDING_APPROVAL and decides (APPROVED) only after execute; ``hold_at`` APPROVED votes
    first, RECEIVED does not even acknowledge (docs/semantics.md)."""
    behaviour = IssuerBehaviour() if hold_at is None \
        else IssuerBehaviour(hold_at=InstructionStatus(hold_at))
    cast = example_world(0, behaviours={2: behaviour})
    world, gateway = cast.world, _gateway(cast, 2)
    body = _burn_body(cast)
    _lock_for(cast, body)
    ins = call(world, gateway.post_instruction("burn", body, SettlementMode.MODE_2, POLL))
    world.advance(10 * 3600 * 1000)
    held = _HELD[hold_at or "PENDING_APPROVAL"]
    assert _statuses(cast, ins.instruction_id) == held
    assert gateway.instructions[ins.instruction_id].status is InstructionStatus(held[-1])
    assert not world.log.select("ledger.burn")
    call(world, gateway.execute(ins.instruction_id))
    world.run_all()
    assert _statuses(cast, ins.instruction_id) == ["RECEIVED", "PENDING_APPROVAL", "APPROVED",
                                                   "EXECUTING", "COMPLETED"]
    snap = call(world, gateway.get(ins.instruction_id))
    [burn] = world.log.select("ledger.burn")
    assert (snap.status, snap.tx_hash) == (InstructionStatus.COMPLETED, burn["txHash"])
    assert burn["account"] == body["sourceWalletId"] and burn["amount"] == "5.00"
    assert world.ledgers[Ledger.EVM].balance(body["sourceWalletId"], cast.asset(2)).amount \
        == Decimal("9995.00")


def test_a_hold_point_outside_the_spec_is_refused() -> None:
    """A simulated issuer holds at RECEIVED, PENDING_APPROVAL or APPROVED; any later status
    would have moved the asset before execute."""
    for status in ("EXECUTING", "COMPLETED", "REJECTED", "FAILED"):
        with pytest.raises(ValueError):
            IssuerBehaviour(hold_at=InstructionStatus(status))


@pytest.mark.parametrize("hold_at", [*_HELD])
@pytest.mark.parametrize(("source", "target"), [(2, None), (2, 3), (3, 2), (1, 2), (2, 1)])
def test_mode_2_redeems_and_swaps_settle_whatever_the_hold_point(
        hold_at: str, source: int, target: int | None) -> None:
    """One saga for every issuer: execute goes out once the instruction is created, wherever
    the issuer holds, and every Mode 2 leg settles."""
    behaviour = IssuerBehaviour(hold_at=InstructionStatus(hold_at))
    cast = example_world(0, behaviours={2: behaviour})
    world = cast.world
    request = redeem(cast.asset(source)) if target is None \
        else swap(cast.asset(source), cast.asset(target))
    tx = world.initiate(cast.member.id, request)
    world.run_all()
    assert world.transactions[tx.id].lifecycle_status.value == "settled"
    for instruction_id in instruction_ids(world, tx.id):
        statuses = _statuses(cast, instruction_id)
        assert statuses[-1] == "COMPLETED"


def test_mode_3_instruction_runs_without_execute(cast: Cast) -> None:
    world, gateway = cast.world, _gateway(cast, 3)
    ins = call(world, gateway.post_instruction("burn", _burn_body(cast, 3),
                                               SettlementMode.MODE_3, POLL))
    world.run_all()
    assert _statuses(cast, ins.instruction_id)[-1] == "COMPLETED"
    assert not world.log.select("issuer.request", route="POST /instructions/{id}/execute")


def test_a_read_answers_the_instructions_status_and_receipt_as_they_are_now(cast: Cast) -> None:
    """GET /instructions/{id} (Issuer-side contract): the snapshot follows every status
    change and the receipt; unchanged, two reads answer the same value (it is kept)."""
    world, gateway = cast.world, _gateway(cast, 3)
    posted = call(world, gateway.post_instruction("burn", _burn_body(cast, 3),
                                                  SettlementMode.MODE_3, POLL))
    ins = gateway.instructions[posted.instruction_id]
    first = ins.snapshot()
    assert first is ins.snapshot() and first.status is InstructionStatus.RECEIVED
    step_until(world, "issuer.instruction", instructionId=ins.id, status="PENDING_APPROVAL")
    assert ins.snapshot().status is InstructionStatus.PENDING_APPROVAL
    world.run_all()
    snap = ins.snapshot()
    assert ins.receipt is not None
    assert (snap.status, snap.tx_hash, snap.ledger_sequence, snap.finalized_at_ms) == (
        InstructionStatus.COMPLETED, ins.receipt.tx_hash, ins.receipt.ledger_sequence,
        ins.receipt.finalized_at_ms)
    ins.status = InstructionStatus.FAILED  # a real gateway's client sets it directly
    assert ins.snapshot().status is InstructionStatus.FAILED


def _readers(by_event: bool) -> list[str]:
    """Three pollers wake at one instant, each reads one instruction and then waits on the
    answer (``read``) or on a ``get`` process; what each learned, when, in what order."""
    cast = example_world(5)
    world, gateway = cast.world, _gateway(cast, 3)
    posted = [call(world, gateway.post_instruction(
        "burn", {**_burn_body(cast, 3), "idempotencyKey": str(uuid.UUID(int=n))},
        SettlementMode.MODE_3, POLL)) for n in range(3)]
    seen: list[str] = []

    def poller(n: int) -> Any:
        yield world.env.timeout(1_000)
        instruction_id = posted[n].instruction_id
        answer = gateway.read(instruction_id) if by_event \
            else world.env.process(gateway.get(instruction_id))
        snap = yield answer
        seen.append(f"{n} {snap.status} at {world.now_ms}")

    for n in range(3):
        world.env.process(poller(n))
    world.run_all()
    return seen + list(world.log.lines())


def test_a_read_answers_as_a_get_process_would_at_the_same_instant_in_the_same_order() -> None:
    """``read`` (no process) draws each request latency where ``env.process(get(...))``
    would, so answers, records and the issuer's later draws keep their order (issue 18:
    the log stays byte for byte)."""
    assert _readers(by_event=True) == _readers(by_event=False)


@pytest.mark.parametrize("mode", [2, 3])
def test_approved_alone_is_progress_only_and_never_settles(cast: Cast, mode: int) -> None:
    """An issuer's intermediate authorisation is progress only: an instruction that stops
    after APPROVED leaves the transaction in flight until it parks on silence."""
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(mode)))
    approved = step_until(world, "issuer.instruction", transactionId=tx.id, status="APPROVED")
    world.arm(tx.id, Outcome.SILENCE)  # nothing follows APPROVED
    world.advance(60_000)
    now = world.transactions[tx.id]
    assert (now.lifecycle_status.value, now.saga.current.name.value) == ("in-flight",
                                                                         "Burning")
    reads = world.log.select("issuer.request", route="GET /instructions/{id}",
                             instructionId=approved["instructionId"])
    assert any(r.seq > approved.seq for r in reads)  # the saga did see APPROVED
    world.run_all()
    tx_end = world.transactions[tx.id]
    assert (tx_end.lifecycle_status.value, tx_end.parked, tx_end.reason_code) == (
        "failed", True, "approval_sla_exceeded")
    assert not world.log.select("saga.event", transactionId=tx.id, event="Burned")
    assert not world.log.select("rtgs.settle", transactionId=tx.id)


# arming -----------------------------------------------------------------------------------
STAGES = {"before": ["RECEIVED"], "PENDING_APPROVAL": ["RECEIVED", "PENDING_APPROVAL"],
          "APPROVED": ["RECEIVED", "PENDING_APPROVAL", "APPROVED"]}


@pytest.mark.parametrize(("stage", "outcome"),
                         [(stage, outcome) for stage in STAGES
                          for outcome in (Outcome.REJECTED, Outcome.FAILED)
                          if (stage, outcome) != ("APPROVED", Outcome.REJECTED)])
@pytest.mark.parametrize("mode", [2, 3])
def test_armed_outcome_applies_to_the_next_instruction_event(
        cast: Cast, mode: int, stage: str, outcome: Outcome) -> None:
    """Conformance: the scenario's effect lands on the next issuer instruction event after
    arming, once."""
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(mode)))
    if stage != "before":
        step_until(world, "issuer.instruction", transactionId=tx.id, status=stage)
    world.arm(tx.id, outcome)
    world.run_all()
    [instruction] = instruction_ids(world, tx.id)
    final = "REJECTED" if outcome is Outcome.REJECTED else "FAILED"
    assert _statuses(cast, instruction) == [*STAGES[stage], final]
    [applied] = world.log.select("issuer.armed_applied", instructionId=instruction)
    assert applied["outcome"] == outcome.value
    assert tx.id not in _gateway(cast, mode).armed  # consumed: it applies once
    assert world.transactions[tx.id].parked is (outcome is Outcome.FAILED)


@pytest.mark.parametrize("mode", [2, 3])
def test_rejected_cannot_be_armed_once_the_issuer_approved(cast: Cast, mode: int) -> None:
    """Ours (docs/semantics.md): REJECTED is the issuer's decision and never follows
    APPROVED, so arming ``rejected`` on a transaction whose every issuer approved is refused
    (409 ``issuer_decided``), changes nothing, and the transaction settles."""
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(mode)))
    step_until(world, "issuer.instruction", transactionId=tx.id, status="APPROVED")
    with pytest.raises(NotAllowed) as refused:
        world.arm(tx.id, Outcome.REJECTED)
    assert refused.value.problems[0].code == "issuer_decided"
    assert not world.log.select("issuer.armed")
    world.run_all()
    assert world.transactions[tx.id].lifecycle_status.value == "settled"


# status webhooks --------------------------------------------------------------------------
def _forged_completed(instruction_id: str, at_iso: str) -> bytes:
    body = {"instructionId": instruction_id, "status": "COMPLETED",
            "onchain": {"txHash": "0x" + "ab" * 32, "ledgerSequence": 19_000_001},
            "finalizedAt": at_iso}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def _waiting_mode_2(cast: Cast) -> tuple[str, str]:
    """A Mode 2 redeem whose instruction just reached PENDING_APPROVAL."""
    tx = cast.world.initiate(cast.member.id, redeem(cast.asset(2)))
    record = step_until(cast.world, "issuer.instruction", transactionId=tx.id,
                        status="PENDING_APPROVAL")
    return tx.id, str(record["instructionId"])


def _header(cast: Cast, forgery: str, raw: bytes) -> str | None:
    world = cast.world
    now_s = (world.epoch_ms + world.now_ms) // 1000
    secret = _gateway(cast, 2).webhook_secret
    return {"bad_v1": f"t={now_s},v1=bad",
            "unsigned": None,
            "wrong_secret": signature_header("whsec_" + "0" * 48, now_s, raw),
            "stale": signature_header(secret, now_s - 301, raw),
            "other_body": signature_header(secret, now_s, raw + b" ")}[forgery]


@pytest.mark.parametrize("forgery", ["bad_v1", "unsigned", "wrong_secret", "stale",
                                     "other_body"])
def test_issuer_webhook_without_a_valid_signature_is_dropped_and_changes_nothing(
        forgery: str) -> None:
    """A delivery unsigned or with a wrong signature (or outside the 300 s window) is
    dropped, logged and not retried. Proof of "changes nothing": a twin world of the same
    seed that never received it logs exactly the same run."""
    forged, twin = example_world(0), example_world(0)
    tx_id, instruction_id = _waiting_mode_2(forged)
    _waiting_mode_2(twin)
    raw = _forged_completed(instruction_id, forged.world.iso())
    before = forged.world.transactions[tx_id]
    accepted = forged.world.issuer_inbox.receive(forged.issuers[2].id,
                                                 _header(forged, forgery, raw), raw)
    assert accepted is False
    [dropped] = forged.world.log.select("issuer.webhook", verified=False)
    assert (dropped["instructionId"], dropped["outcome"]) == (instruction_id, "dropped")
    assert forged.world.transactions[tx_id] == before
    forged.world.run_all()
    twin.world.run_all()
    assert log_without(forged.world, dropped) == log_without(twin.world)
    assert forged.world.log.select("issuer.webhook", verified=False) == [dropped]  # no retry


def test_validly_signed_webhook_is_only_a_prompt(cast: Cast) -> None:
    """The service treats a webhook only as a prompt and reads the instruction before acting:
    a correctly signed but false COMPLETED does not settle anything."""
    world = cast.world
    tx_id, instruction_id = _waiting_mode_2(cast)
    raw = _forged_completed(instruction_id, world.iso())
    now_s = (world.epoch_ms + world.now_ms) // 1000
    header = signature_header(_gateway(cast, 2).webhook_secret, now_s, raw)
    mark = len(world.log)
    assert world.issuer_inbox.receive(cast.issuers[2].id, header, raw) is True
    world.advance(2_000)
    reads = [r for r in world.log.select("issuer.request", route="GET /instructions/{id}",
                                         instructionId=instruction_id) if r.seq >= mark]
    assert reads  # prompted, it read the instruction
    assert world.transactions[tx_id].lifecycle_status.value == "in-flight"
    assert not world.log.select("saga.event", transactionId=tx_id)
    world.run_all()
    [burned] = world.log.select("saga.event", transactionId=tx_id, event="Burned")
    [burn] = world.log.select("ledger.burn", transactionId=tx_id)
    assert burned["txHash"] == burn["txHash"] != "0x" + "ab" * 32


def test_signed_webhook_issuer_prompts_on_every_status_change(cast: Cast) -> None:
    """SIGNED_WEBHOOK: one signed, verified delivery per status change after RECEIVED."""
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(2)))
    world.run_all()
    changes = [r for r in world.log.select("issuer.instruction", transactionId=tx.id)
               if r["status"] != "RECEIVED"]
    hooks = world.log.select("issuer.webhook", issuerId=cast.issuers[2].id)
    assert len(hooks) == len(changes) == 4
    assert all(h["verified"] is True and h["outcome"] == "prompt" for h in hooks)


def test_pollable_issuer_sends_no_webhooks_and_is_polled(cast: Cast) -> None:
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(3)))
    world.run_all()
    assert not world.log.select("issuer.webhook")
    [instruction] = instruction_ids(world, tx.id)
    reads = world.log.select("issuer.request", route="GET /instructions/{id}",
                             instructionId=instruction)
    assert len(reads) >= 2
    assert world.transactions[tx.id].lifecycle_status.value == "settled"


# Mode 3 refund ----------------------------------------------------------------------------
_BASE58 = set("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")


@pytest.mark.parametrize(("outcome", "reason"), [(Outcome.SILENCE, "instruction_expired"),
                                                 (Outcome.REJECTED, "instruction_rejected")])
def test_mode_3_refund_endpoint_answers_refunded_with_hash_and_time(
        cast: Cast, outcome: Outcome, reason: str) -> None:
    """POST /treasury/refunds with transactionId, reason and refundToWalletId; 200 returns
    transactionId, status refunded, refundTxHash and refundedAt."""
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(3)))
    world.arm(tx.id, outcome)
    world.run_all()
    member_wallet = world.wallet(cast.member, Ledger.SOLANA)
    [request] = world.log.select("issuer.request", route="POST /treasury/refunds")
    assert (request["transactionId"], request["reason"], request["refundToWalletId"]) == (
        tx.id, reason, member_wallet)
    [refund] = world.log.select("issuer.refund", transactionId=tx.id)
    back = [r for r in world.log.select("ledger.transfer", transactionId=tx.id)
            if r["toAccount"] == member_wallet]
    assert len(back) == 1
    expected: dict[str, Any] = {"transactionId": tx.id, "status": "refunded",
                                "refundTxHash": back[0]["txHash"],
                                "refundedAt": world.iso(back[0].at_ms),
                                "reason": reason, "refundToWalletId": member_wallet}
    assert {k: refund[k] for k in expected} == expected
    assert set(str(refund["refundTxHash"])) <= _BASE58
    assert str(refund["refundedAt"]).endswith("Z")
    assert world.ledgers[Ledger.SOLANA].balance(member_wallet, cast.asset(3)).amount \
        == Decimal("10000.00")


@settings(max_examples=200)
@given(st.text(), st.text(), st.one_of(st.none(), st.text()),
       st.one_of(st.none(), st.integers(0, 2**63)), st.one_of(st.none(), st.text()))
def test_a_status_webhook_body_is_the_sorted_compact_json_of_its_fields(
        instruction_id: str, status: str, tx_hash: str | None, sequence: int | None,
        finalized_at: str | None) -> None:
    """The simulated issuer writes its webhook body from a template (issue 18): the bytes are
    ``json.dumps``'s, sorted keys, compact, ASCII, whatever the strings hold."""
    body = {"instructionId": instruction_id, "status": status,
            "onchain": {"txHash": tx_hash, "ledgerSequence": sequence},
            "finalizedAt": finalized_at}
    expected = json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    assert webhook_body(instruction_id, status, tx_hash, sequence, finalized_at) \
        == expected.encode()


@pytest.mark.parametrize("forgery", ["bad_v1", "wrong_secret", "stale", "other_body", None])
def test_the_simulated_issuers_own_delivery_is_verified_as_any_other(
        forgery: str | None) -> None:
    """``IssuerInbox.deliver``, the simulated issuer's path, takes the instruction id as sent
    instead of parsing it back out of the body it has just encoded (issue 18), and checks
    the signature over that body as ``receive`` does: a wrong one is dropped and logged
    whatever id comes with it; a right one is a prompt."""
    cast = example_world(0)
    _, instruction_id = _waiting_mode_2(cast)
    world = cast.world
    raw = _forged_completed(instruction_id, world.iso())
    now_s = (world.epoch_ms + world.now_ms) // 1000
    header = signature_header(_gateway(cast, 2).webhook_secret, now_s, raw) \
        if forgery is None else _header(cast, forgery, raw)
    assert header is not None
    delivered = world.issuer_inbox.deliver(cast.issuers[2].id, header, raw, instruction_id)
    [record] = world.log.select("issuer.webhook", instructionId=instruction_id)
    assert delivered is (forgery is None)
    assert (record["verified"], record["outcome"]) == \
        ((True, "prompt") if forgery is None else (False, "dropped"))
    assert world.issuer_inbox.prompt(instruction_id).triggered is (forgery is None)
