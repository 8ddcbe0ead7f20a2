"""Timing rules to the millisecond (DESIGN.md, "Fidelity").

Spec, "States and transitions": silence parks when no issuer answer arrives within
``approvalSlaSeconds`` (Conformance: "integration does not time out before the SLA");
``received`` → ``in-flight`` once initial validation passes; settlement moves forward only
after proof-backed issuer events; Issuer-side contract: execute is sent only after the RTGS
earmark is confirmed.
"""

from __future__ import annotations

import pytest

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.latency import Fixed
from clearing_sim.domain.profile import Ledger
from clearing_sim.sim.examples import Cast, example_world, redeem, swap
from clearing_sim.sim.issuer import IssuerBehaviour
from clearing_sim.sim.world import WorldConfig
from tests.sim.simkit import INTAKE_MS, instruction_ids, step_until, step_until_deadline

WEBHOOK, POLL = ("SIGNED_WEBHOOK",), ("POLLABLE_RESOURCE",)
BOTH = ("SIGNED_WEBHOOK", "POLLABLE_RESOURCE")


def _silenced(cast: Cast, source: int, target: int | None = None) -> tuple[str, int]:
    """Initiate, arm silence, run to the request the SLA counts from (docs/semantics.md:
    a Mode 2 leg's execute call, a Mode 3 leg's instruction); return the id and its
    deadline."""
    world = cast.world
    request = redeem(cast.asset(source)) if target is None \
        else swap(cast.asset(source), cast.asset(target))
    tx = world.initiate(cast.member.id, request)
    world.arm(tx.id, Outcome.SILENCE)
    sent = step_until_deadline(world, tx.id)
    return tx.id, int(str(sent["deadlineMs"]))


def _assert_silence_parks_exactly_at_deadline(cast: Cast, tx_id: str, deadline: int) -> None:
    world = cast.world
    world.run_until(deadline - 1)
    tx = world.transactions[tx_id]
    assert (tx.lifecycle_status.value, tx.parked, tx.terminal) == ("in-flight", False, False)
    assert not world.log.select("transaction.state", transactionId=tx_id,
                                event="transaction.parked")
    world.run_until(deadline)
    tx = world.transactions[tx_id]
    assert (tx.lifecycle_status.value, tx.parked, tx.terminal) == ("failed", True, True)
    assert tx.reason_code == "approval_sla_exceeded"
    [parked] = world.log.select("transaction.state", transactionId=tx_id,
                                event="transaction.parked")
    [silence] = world.log.select("saga.event", transactionId=tx_id, event="ParkedOnSilence")
    assert parked.at_ms == silence.at_ms == deadline
    assert tx.updated_at_ms == deadline


@pytest.mark.parametrize("sla_s", [900, 37])
@pytest.mark.parametrize("feedback", [WEBHOOK, POLL, BOTH], ids=["webhook", "poll", "both"])
@pytest.mark.parametrize("mode", [2, 3])
def test_silence_is_in_flight_at_sla_minus_1ms_and_parked_at_sla(
        mode: int, feedback: tuple[str, ...], sla_s: int) -> None:
    """Silence: still in-flight at deadline − 1 ms, parked (failed, parked, terminal, event
    transaction.parked) at exactly the SLA after the request it counts from: Mode 2's
    ``saga.execute_sent`` (the issuer holds until execute), Mode 3's
    ``saga.instruction_sent``, + approvalSlaSeconds × 1000."""
    cast = example_world(0, approval_sla_s=sla_s, feedback={mode: feedback})
    tx_id, deadline = _silenced(cast, mode)
    kind = "saga.execute_sent" if mode == 2 else "saga.instruction_sent"
    [sent] = cast.world.log.select(kind, transactionId=tx_id)
    assert deadline == sent.at_ms + sla_s * 1000
    _assert_silence_parks_exactly_at_deadline(cast, tx_id, deadline)


@pytest.mark.parametrize(("source", "target"), [(1, 2), (1, 3), (2, 3), (3, 2)])
def test_silence_on_either_leg_parks_exactly_at_its_deadline(source: int, target: int) -> None:
    cast = example_world(0)
    tx_id, deadline = _silenced(cast, source, target)
    _assert_silence_parks_exactly_at_deadline(cast, tx_id, deadline)


@pytest.mark.parametrize(("seed", "mode"), [
    (1, 3), (7, 2), (20, 3), (0, 2), (0, 3),
])
def test_polled_silence_parks_exactly_at_sla_whatever_the_seed(seed: int, mode: int) -> None:
    """The conformance silence scenario with POLLABLE_RESOURCE feedback: seeds 1, 7 and 20
    have a status read in flight at the deadline; the read is abandoned and the
    transaction parks at exactly the deadline (regression: it used to park 5-124 ms late)."""
    cast = example_world(seed, feedback={mode: POLL})
    tx_id, deadline = _silenced(cast, mode)
    _assert_silence_parks_exactly_at_deadline(cast, tx_id, deadline)


def _straddling_world(approval_ms: int) -> Cast:
    """Fixed latencies so that a poll's status read leaves 50 ms before the 20 s deadline
    and returns 50 ms after it. Mode 3 polling every 950 ms, requests 100 ms, chain 400 ms:
    the instruction is sent at 1 100 ms, deadline 21 100 ms, a read runs 21 050 → 21 150."""
    finality = dict(WorldConfig().finality)
    finality[Ledger.SOLANA] = Fixed(400)
    config = WorldConfig(seed=0, poll_interval_ms=950, rtgs_latency=Fixed(100),
                         finality=finality)
    behaviour = IssuerBehaviour(request_latency=Fixed(100), ack_latency=Fixed(100),
                                approval_latency=Fixed(approval_ms),
                                execution_latency=Fixed(20))
    return example_world(0, approval_sla_s=20, behaviours={3: behaviour}, config=config)


def test_silence_parks_at_sla_even_with_a_status_read_in_flight() -> None:
    """The issuer stays at PENDING_APPROVAL; a read in flight across the deadline must not
    postpone parking (the engine parks at 21 150 instead of 21 100)."""
    cast = _straddling_world(approval_ms=10**8)
    tx = cast.world.initiate(cast.member.id, redeem(cast.asset(3)))
    sent = step_until(cast.world, "saga.instruction_sent", transactionId=tx.id)
    assert sent["deadlineMs"] == 21_100
    _assert_silence_parks_exactly_at_deadline(cast, tx.id, 21_100)


def test_an_answer_after_the_sla_does_not_settle() -> None:
    """The issuer completes at 21 120 ms, 20 ms after the deadline: no answer arrived within
    approvalSlaSeconds, so the transaction parks at 21 100 (the engine settles at 21 250)."""
    cast = _straddling_world(approval_ms=19_400)
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(3)))
    world.run_all()
    [completed] = world.log.select("issuer.instruction", transactionId=tx.id,
                                   status="COMPLETED")
    assert completed.at_ms == 21_120
    states = world.log.select("transaction.state", transactionId=tx.id)
    assert (states[-1]["event"], states[-1].at_ms) == ("transaction.parked", 21_100)


@pytest.mark.parametrize("start_ms", [0, 12_345])
@pytest.mark.parametrize("mode", [1, 2, 3])
def test_received_until_intake_then_in_flight_at_t_plus_200(mode: int, start_ms: int) -> None:
    """received → in-flight when the saga passes initial validation: 200 ms after initiation,
    not a millisecond earlier."""
    cast = example_world(0)
    world = cast.world
    world.run_until(start_ms)
    tx = world.initiate(cast.member.id, redeem(cast.asset(mode)))
    assert tx.initiated_at_ms == start_ms
    world.run_until(start_ms + INTAKE_MS - 1)
    assert world.transactions[tx.id].lifecycle_status.value == "received"
    assert not world.log.select("transaction.state", transactionId=tx.id,
                                event="transaction.in_flight")
    world.run_until(start_ms + INTAKE_MS)
    assert world.transactions[tx.id].lifecycle_status.value == "in-flight"
    [in_flight] = world.log.select("transaction.state", transactionId=tx.id,
                                   event="transaction.in_flight")
    assert in_flight.at_ms == start_ms + INTAKE_MS


HAPPY = [(1, None), (2, None), (3, None), (2, 3), (3, 2), (1, 2), (2, 1), (1, 3), (3, 1)]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("source", "target"), HAPPY)
def test_settlement_never_precedes_the_proof_backed_events(seed: int, source: int,
                                                           target: int | None) -> None:
    """Settlement moves forward only after proof-backed issuer events (Burned, and Minted
    for a swap); an intermediate authorisation (APPROVED) is progress only."""
    cast = example_world(seed)
    world = cast.world
    request = redeem(cast.asset(source)) if target is None \
        else swap(cast.asset(source), cast.asset(target))
    tx = world.initiate(cast.member.id, request)
    world.run_all()
    [settle] = world.log.select("rtgs.settle", transactionId=tx.id)
    [settled] = world.log.select("transaction.state", transactionId=tx.id,
                                 event="transaction.settled")
    proofs = world.log.select("saga.event", transactionId=tx.id)
    assert sorted(p["event"] for p in proofs) == (["Burned"] if target is None
                                                  else ["Burned", "Minted"])
    assert all(p.seq < settle.seq < settled.seq for p in proofs)
    assert all(p.at_ms <= settle.at_ms for p in proofs)
    for leg in ("burn", "mint"):
        for done in world.log.select(f"ledger.{leg}", transactionId=tx.id):
            assert done.seq < settle.seq


MODE_2_LEGS = [(2, None), (2, 3), (2, 1), (3, 2), (1, 2)]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("source", "target"), MODE_2_LEGS)
def test_mode_2_execute_is_sent_only_after_the_earmark(seed: int, source: int,
                                                       target: int | None) -> None:
    """Issuer-side contract: execute is the irrevocable signal, sent only after the RTGS
    earmark is confirmed; the (default) issuer holds at PENDING_APPROVAL until it arrives
    and decides only then (spec: "In Mode 2 the issuer stops at RECEIVED or
    PENDING_APPROVAL and does not execute until the execute call arrives"); nothing moves
    on chain before it."""
    cast = example_world(seed)
    world = cast.world
    request = redeem(cast.asset(source)) if target is None \
        else swap(cast.asset(source), cast.asset(target))
    tx = world.initiate(cast.member.id, request)
    world.run_all()
    [earmark] = world.log.select("rtgs.earmark", transactionId=tx.id)
    mode_2 = cast.issuers[2].id
    ids = [i for i in instruction_ids(world, tx.id)
           if world.log.select("issuer.instruction", instructionId=i, issuerId=mode_2)]
    assert len(ids) == 1
    [execute] = world.log.select("issuer.request", route="POST /instructions/{id}/execute",
                                 instructionId=ids[0])
    [approved] = world.log.select("issuer.instruction", instructionId=ids[0],
                                  status="APPROVED")
    [executing] = world.log.select("issuer.instruction", instructionId=ids[0],
                                   status="EXECUTING")
    assert earmark.seq < execute.seq < approved.seq < executing.seq
    assert earmark.at_ms <= execute.at_ms
