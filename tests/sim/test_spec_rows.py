"""Spec rows the p21c audit found pinned only relative to our own constants, or not at all
(docs/spec-coverage.md). Every number here is the spec's, written out, never read from the
code under test: a test that computes its boundary from ``DISABLE_AFTER_MS`` passes whatever
that constant says.

Rows: Events table (the ``lifecycleStatus`` column and ``parked`` / ``terminal`` of each
event's payload); Events guarantee 5 and Limits "Webhook auto-disable: 72 hours"; Events,
the ``evt_`` id; Issuer-side contract, status webhook signed "with the same scheme as
outgoing webhooks" (the 300-s replay window at the service's inbox); States and transitions,
received → in-flight; States and transitions, the silence row at the tie (an answer
learned at exactly the deadline is not "within" it).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.latency import Fixed
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.domain.profile import Ledger
from clearing_sim.domain.signing import signature_header
from clearing_sim.sim.examples import Cast, example_world, redeem
from clearing_sim.sim.issuer import IssuerBehaviour
from clearing_sim.sim.receivers import ReceiverBehaviour
from clearing_sim.sim.subscriptions import SubscriptionStatus
from clearing_sim.sim.world import WorldConfig
from tests.sim.simkit import step_until

URL = "https://hooks.northbank.example/clearing"
HOUR_MS = 3_600_000
#: Events table: event type → (lifecycleStatus, parked, terminal) its payload carries.
#: ``terminal`` follows the Transaction field ("true when the transaction will not change
#: without action outside the API") and the States table ("terminal true" on every row into
#: settled, cancelled, failed).
EVENTS_TABLE: dict[str, tuple[str, bool, bool]] = {
    "transaction.received": ("received", False, False),
    "transaction.in_flight": ("in-flight", False, False),
    "transaction.settled": ("settled", False, True),
    "transaction.cancelled": ("cancelled", False, True),
    "transaction.parked": ("failed", True, True),
    "transaction.failed": ("failed", False, True),
}
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _subscribed(seed: int = 0) -> Cast:
    cast = example_world(seed)
    cast.world.subscriptions.create(cast.member.id, URL, tuple(EventType))
    cast.world.webhooks.set_receiver(URL, ReceiverBehaviour(latency=Fixed(0)))
    return cast


def _payloads(cast: Cast) -> list[dict[str, Any]]:
    return [json.loads(event.body()) for event in cast.world.webhooks.events]


def _drive(cast: Cast, mode: int, ending: str) -> str:
    """One redeem driven to ``ending``: settled, cancelled, rejected, failed, silence, fixed."""
    world = cast.world
    tx_id = world.initiate(cast.member.id, redeem(cast.asset(mode))).id
    if ending in ("cancelled", "cancelled_in_flight"):
        # still received (intake is 200 ms): cancel is allowed on every path and seed; at
        # 300 ms a Mode 2 (evm) lock is still being written, so it is allowed in flight too
        world.advance(100 if ending == "cancelled" else 300)
        world.cancel(tx_id)
    elif ending in ("rejected", "failed", "silence", "fixed"):
        outcome = {"rejected": Outcome.REJECTED, "silence": Outcome.SILENCE}.get(
            ending, Outcome.FAILED)
        world.arm(tx_id, outcome)
        if ending == "fixed":
            step_until(world, "transaction.state", transactionId=tx_id,
                       event="transaction.parked")
            world.resolve(tx_id)
    world.run_all()
    return tx_id


@pytest.mark.parametrize(("mode", "ending", "types"), [
    (1, "settled", ["received", "in_flight", "settled"]),
    (2, "cancelled", ["received", "cancelled"]),
    (2, "cancelled_in_flight", ["received", "in_flight", "cancelled"]),
    (2, "rejected", ["received", "in_flight", "failed"]),
    (3, "failed", ["received", "in_flight", "parked"]),
    (2, "silence", ["received", "in_flight", "parked"]),
    (2, "fixed", ["received", "in_flight", "parked", "in_flight", "settled"]),
])
def test_events_table_each_payload_carries_its_rows_lifecycle_status_parked_and_terminal(
        mode: int, ending: str, types: list[str]) -> None:
    """Events table, column lifecycleStatus (and the States table's "terminal true"): the
    delivered body of each of the six events says what the table says, e.g.
    ``transaction.parked`` → failed, parked true, terminal true; ``transaction.failed`` →
    failed, parked false, terminal true."""
    cast = _subscribed()
    tx_id = _drive(cast, mode, ending)
    payloads = _payloads(cast)
    assert [p["type"] for p in payloads] == [f"transaction.{t}" for t in types]
    for payload in payloads:
        data = payload["data"]
        assert data["transactionId"] == tx_id
        assert (data["lifecycleStatus"], data["parked"], data["terminal"]) == \
            EVENTS_TABLE[payload["type"]], payload


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), mode=st.sampled_from([1, 2, 3]),
       ending=st.sampled_from(["settled", "cancelled", "rejected", "failed", "silence",
                               "fixed"]))
def test_events_table_holds_for_every_path_and_the_payload_is_the_state_at_the_event(
        seed: int, mode: int, ending: str) -> None:
    """For any seed, mode and ending: every event's payload is its Events-table row, and
    it equals the transaction's public state recorded at the event's instant (guarantee 3:
    the payload is small but true)."""
    if mode == 1 and ending not in ("settled", "cancelled"):
        ending = "settled"  # States rule 1: Mode 1 cannot be armed
    cast = _subscribed(seed)
    _drive(cast, mode, ending)
    states = cast.world.log.select("transaction.state")
    events = cast.world.webhooks.events
    assert len(events) == len(states)
    for event, state in zip(events, states, strict=True):
        data = json.loads(event.body())["data"]
        assert (data["lifecycleStatus"], data["parked"], data["terminal"]) == \
            EVENTS_TABLE[event.type.value]
        assert (event.type.value, event.created_at_ms) == (state["event"], state.at_ms)
        assert (data["lifecycleStatus"], data["parked"], data["terminal"]) == (
            state["lifecycleStatus"], state["parked"], state["terminal"])


def test_event_ids_are_evt_and_a_uuid_and_the_webhook_id_header_repeats_it() -> None:
    """Events, delivery body: ``id`` string (prefix ``evt_``); headers: Service-Webhook-Id
    equals the event id, on every attempt."""
    cast = _subscribed()
    cast.world.webhooks.set_receiver(URL, ReceiverBehaviour.failing(500, latency=Fixed(0)))
    _drive(cast, 1, "settled")
    attempts = cast.world.log.select("webhook.attempt")
    assert len(attempts) == 3 * 7
    for attempt in attempts:
        event_id = str(attempt["eventId"])
        assert re.fullmatch(f"evt_{_UUID}", event_id)
        headers: Any = attempt["headers"]
        assert dict(headers)["Service-Webhook-Id"] == event_id


# Guarantee 5 / Limits: 72 hours, written out ----------------------------------------------
_72H_MS = 259_200_000  # 72 × 3 600 000


def test_rule_5_disable_at_exactly_259_200_000_ms_of_failure_not_one_ms_before() -> None:
    """Guarantee 5: "when every delivery to a subscription fails for 72 hours continuously,
    the subscription becomes disabled". With the streak starting at 0 ms, a failure learned
    at 259 199 999 ms leaves it active and one learned at 259 200 000 ms disables it."""
    cast = example_world(0)
    world = cast.world
    sub = world.subscriptions.create(cast.member.id, URL, (EventType.RECEIVED,))
    world.webhooks.set_receiver(URL, ReceiverBehaviour.failing(500, latency=Fixed(0)))
    world.initiate(cast.member.id, redeem(cast.asset(1), reference="T0"))
    world.run_until(_72H_MS - 1)
    world.initiate(cast.member.id, redeem(cast.asset(1), reference="T1"))
    world.run_until(_72H_MS - 1)
    assert sub.status is SubscriptionStatus.ACTIVE
    assert not world.log.select("webhook.disabled")
    world.run_until(_72H_MS)
    world.initiate(cast.member.id, redeem(cast.asset(1), reference="T2"))
    world.run_until(_72H_MS)
    assert sub.status is SubscriptionStatus.DISABLED
    (disabled,) = world.log.select("webhook.disabled")
    assert disabled.at_ms == _72H_MS


# Issuer status webhooks: the same 300-s window at the service's inbox ---------------------
@pytest.mark.parametrize(("skew_s", "accepted"), [(0, True), (-300, True), (300, True),
                                                  (-301, False), (301, False)])
def test_issuer_webhook_replay_window_is_300_s_either_side_at_the_inbox(
        skew_s: int, accepted: bool) -> None:
    """Issuer-side contract: the status webhook "is signed with the same scheme as outgoing
    webhooks" (Events: reject when |now − t| exceeds 300 s); "a delivery unsigned or with a
    wrong signature is dropped, logged and not retried". Exactly 300 s is inside."""
    cast = example_world(0)
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(2)))
    record = step_until(world, "issuer.instruction", transactionId=tx.id,
                        status="PENDING_APPROVAL")
    instruction_id = str(record["instructionId"])
    gateway: Any = world.issuers[cast.issuers[2].id]
    raw = json.dumps({"finalizedAt": world.iso(), "instructionId": instruction_id,
                      "onchain": {"ledgerSequence": 1, "txHash": "0x" + "ab" * 32},
                      "status": "PENDING_APPROVAL"}, sort_keys=True,
                     separators=(",", ":")).encode()
    now_s = (world.epoch_ms + world.now_ms) // 1000
    header = signature_header(gateway.webhook_secret, now_s + skew_s, raw)
    assert world.issuer_inbox.receive(cast.issuers[2].id, header, raw) is accepted
    (verdict,) = [r for r in world.log.select("issuer.webhook")
                  if r["instructionId"] == instruction_id and r.at_ms == world.now_ms][-1:]
    assert (verdict["verified"], verdict["outcome"]) == (
        (True, "prompt") if accepted else (False, "dropped"))


# States and transitions: received → in-flight, written out -------------------------------
def test_received_to_in_flight_is_200_ms_after_initiation_written_out() -> None:
    """docs/semantics.md: received → in-flight 200 ms after initiation (``intake_ms``). The
    boundary is written out here, not read from the world's configuration."""
    cast = example_world(0)
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(1)))
    world.run_until(199)
    assert world.transactions[tx.id].lifecycle_status.value == "received"
    world.run_until(200)
    assert world.transactions[tx.id].lifecycle_status.value == "in-flight"


# States and transitions, silence: the answer that lands at exactly the deadline -----------
def test_silence_an_answer_learned_at_exactly_the_deadline_is_too_late_the_transaction_parks(
        ) -> None:
    """The silence row: "no issuer answer within approvalSlaSeconds" parks. The issuer
    completes at 20 530 ms; the saga's next status read (polling every 995 ms, requests
    110 ms) answers COMPLETED at exactly 21 100 ms, the deadline (instruction sent at
    1 100 ms + 20 s). docs/semantics.md: an answer counts only if learned strictly before
    the deadline, so the transaction parks at 21 100 and never settles (it settled at
    21 200 when the tie went to the answer)."""
    finality = dict(WorldConfig().finality)
    finality[Ledger.SOLANA] = Fixed(400)
    config = WorldConfig(seed=0, poll_interval_ms=995, rtgs_latency=Fixed(100),
                         finality=finality)
    behaviour = IssuerBehaviour(request_latency=Fixed(110), ack_latency=Fixed(100),
                                approval_latency=Fixed(18_800), execution_latency=Fixed(20))
    cast = example_world(0, approval_sla_s=20, behaviours={3: behaviour}, config=config)
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(3)))
    sent = step_until(world, "saga.instruction_sent", transactionId=tx.id)
    assert sent["deadlineMs"] == 21_100
    world.run_all()
    [completed] = world.log.select("issuer.instruction", transactionId=tx.id,
                                   status="COMPLETED")
    assert completed.at_ms == 20_530
    reads = [r.at_ms for r in world.log.select("issuer.request",
                                                 instructionId=completed["instructionId"])
             if r["route"] == "GET /instructions/{id}"]
    assert 21_100 in reads  # the read that answers at the deadline
    states = [(r["event"], r.at_ms) for r in world.log.select("transaction.state",
                                                               transactionId=tx.id)]
    assert states[2:] == [("transaction.parked", 21_100)]
    assert not world.log.select("saga.event", transactionId=tx.id, event="Burned")


# docs/semantics.md, the issuer side: POLLABLE_RESOURCE is read 5 s after each answer -------
def test_a_pollable_instruction_is_read_5_000_ms_after_each_answer_written_out() -> None:
    """docs/semantics.md: with POLLABLE_RESOURCE the saga reads the instruction 5 s after
    the previous answer (the POST's acknowledgement, then each read's). Requests take a
    fixed 100 ms here, so the answers come 5 100 ms apart, from the POST's at 2 825 ms."""
    behaviour = IssuerBehaviour(request_latency=Fixed(100), ack_latency=Fixed(100),
                                approval_latency=Fixed(10**8), execution_latency=Fixed(20))
    cast = example_world(0, behaviours={3: behaviour}, feedback={3: ("POLLABLE_RESOURCE",)})
    world = cast.world
    world.initiate(cast.member.id, redeem(cast.asset(3)))
    world.run_until(40_000)
    answers = [(r.at_ms, r["route"]) for r in world.log.select("issuer.request")]
    assert answers[0] == (2_825, "POST /burn-instructions")
    reads = [at for at, route in answers if route == "GET /instructions/{id}"]
    assert reads == [2_825 + 5_100 * k for k in range(1, 8)]
