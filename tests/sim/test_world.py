"""The world: determinism, isolation of worlds, and issuer profile versioning.

DESIGN.md "Determinism rules" and STYLE.md "No hidden global state": same seed ⇒ same
digest, in any process; two worlds in one process never touch. Spec, "Versioning" rule 3:
a profile update applies only to transactions started after the write; transactions in
flight keep the version they captured (and "Settlement modes": in a swap each leg captures
its own issuer's profile).
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import pytest

from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.profile import IssuerProfile, SettlementMode
from clearing_sim.sim.examples import Cast, example_world, issuer_profile, redeem, swap
from clearing_sim.sim.world import World
from tests.sim.simkit import INTAKE_MS, instruction_ids, step_until

BOTH = ("SIGNED_WEBHOOK", "POLLABLE_RESOURCE")


def _start(cast: Cast) -> None:
    """A small workload touching every mode, use case and outcome kind."""
    world, member = cast.world, cast.member.id
    world.initiate(member, redeem(cast.asset(1), reference="R1"))
    world.initiate(member, redeem(cast.asset(2), reference="R2"))
    silent = world.initiate(member, redeem(cast.asset(3), reference="R3"))
    world.arm(silent.id, Outcome.SILENCE)
    world.initiate(member, swap(cast.asset(3), cast.asset(1), reference="S31"))
    failed = world.initiate(member, swap(cast.asset(1), cast.asset(2), reference="S12"))
    world.arm(failed.id, Outcome.FAILED)
    rejected = world.initiate(member, swap(cast.asset(2), cast.asset(3), reference="S23"))
    world.arm(rejected.id, Outcome.REJECTED)


def _digest_alone(seed: int) -> str:
    cast = example_world(seed)
    _start(cast)
    cast.world.run_all()
    return cast.world.log.digest()


def test_same_seed_gives_the_same_digest_and_another_seed_another() -> None:
    assert _digest_alone(3) == _digest_alone(3)
    assert _digest_alone(3) != _digest_alone(4)


def test_two_worlds_interleaved_in_one_process_never_touch() -> None:
    """Advancing two worlds in alternation gives each the digest it has when run alone."""
    alone = {seed: _digest_alone(seed) for seed in (1, 2)}
    a, b = example_world(1), example_world(2)
    _start(a)
    _start(b)
    t = 0
    while a.world.env.peek() < math.inf or b.world.env.peek() < math.inf:
        t += 7_919
        a.world.run_until(t)
        b.world.run_until(t)
    assert (a.world.log.digest(), b.world.log.digest()) == (alone[1], alone[2])


def test_the_global_random_module_does_not_reach_a_world() -> None:
    """No global RNG: reseeding or drawing from ``random`` changes nothing in a run."""
    random.seed(1)
    first = _digest_alone(5)
    random.seed(99)
    random.random()
    assert _digest_alone(5) == first


_DIGEST_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from tests.sim.test_world import _digest_alone
print(_digest_alone(8))
"""


def test_digest_is_the_same_in_another_process_with_another_hash_seed() -> None:
    """Same seed ⇒ same digest in any process (no iteration over sets of strings)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = _DIGEST_SCRIPT.format(root=root)
    digests = set()
    for hash_seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                             capture_output=True, text=True)
        digests.add(out.stdout.strip())
    assert digests == {_digest_alone(8)}


def test_bare_worlds_share_nothing() -> None:
    """Drawing ids and random numbers in one world does not shift another's draws."""
    a, b = World(), World()
    assert a.log is not b.log and a.env is not b.env and a.rtgs is not b.rtgs
    drawn_a = [a.ids.uuid("transaction") for _ in range(3)]
    a.streams.get("rtgs").random()
    drawn_b = [b.ids.uuid("transaction") for _ in range(3)]
    assert drawn_a == drawn_b
    assert a.streams.get("rtgs").random() != b.streams.get("rtgs").random()
    assert a.log.digest() == b.log.digest()


# profile versioning -----------------------------------------------------------------------
def test_profile_version_increases_by_one_on_each_save(cast: Cast) -> None:
    world, issuer = cast.world, cast.issuers[2]
    assert issuer.profile_version == 1
    assert world.save_profile(issuer.id, issuer_profile(2, approval_sla_s=60)) == 2
    assert world.save_profile(issuer.id, issuer_profile(3, ledger="evm")) == 3
    saved = world.log.select("profile.saved", issuerId=issuer.id)
    assert [(r["profileVersion"], r["mode"]) for r in saved] == [
        (1, "MODE_2_TWO_PHASE"), (2, "MODE_2_TWO_PHASE"), (3, "MODE_3_PRE_BURN_TRANSFER")]


def test_an_issuer_cannot_move_its_assets_to_another_ledger(cast: Cast) -> None:
    with pytest.raises(InvalidRequest) as refused:
        cast.world.save_profile(cast.issuers[2].id, issuer_profile(2, ledger="solana"))
    assert refused.value.problems[0].code == "ledger_change"
    assert cast.issuers[2].profile_version == 1


def _two_redeems_around_a_save(cast: Cast, mode: int,
                               profile: IssuerProfile) -> tuple[str, str]:
    world = cast.world
    first = world.initiate(cast.member.id, redeem(cast.asset(mode), reference="BEFORE"))
    world.run_until(INTAKE_MS)
    assert world.transactions[first.id].lifecycle_status.value == "in-flight"
    world.save_profile(cast.issuers[mode].id, profile)
    second = world.initiate(cast.member.id, redeem(cast.asset(mode), reference="AFTER"))
    world.run_all()
    return first.id, second.id


def _executes(cast: Cast, tx_id: str) -> int:
    return sum(len(cast.world.log.select("issuer.request", instructionId=i,
                                         route="POST /instructions/{id}/execute"))
               for i in instruction_ids(cast.world, tx_id))


def test_mode_3_to_mode_2_save_mid_flight_keeps_the_pre_burn_transfer(cast: Cast) -> None:
    """The in-flight transaction keeps Mode 3 (transfer to the issuer treasury, then burn
    there, no execute); the one started after the save runs Mode 2 (execute, no transfer)."""
    world = cast.world
    before, after = _two_redeems_around_a_save(cast, 3, issuer_profile(2, ledger="solana"))
    tx_before, tx_after = world.transactions[before], world.transactions[after]
    assert (tx_before.legs[0].mode, tx_before.legs[0].profile_version) == (
        SettlementMode.MODE_3, 1)
    assert (tx_after.legs[0].mode, tx_after.legs[0].profile_version) == (
        SettlementMode.MODE_2, 2)
    assert tx_before.lifecycle_status.value == tx_after.lifecycle_status.value == "settled"
    [transfer] = world.log.select("ledger.transfer", transactionId=before)
    [burned] = world.log.select("saga.event", transactionId=before, event="Burned")
    [burn] = world.log.select("ledger.burn", transactionId=before)
    assert transfer.seq < burned.seq and burn["account"] == transfer["toAccount"]
    assert _executes(cast, before) == 0
    assert not world.log.select("ledger.transfer", transactionId=after)
    assert _executes(cast, after) == 1


def test_mode_2_to_mode_3_save_mid_flight_keeps_two_phase(cast: Cast) -> None:
    world = cast.world
    before, after = _two_redeems_around_a_save(cast, 2,
                                               issuer_profile(3, ledger="evm", feedback=BOTH))
    assert world.transactions[before].legs[0].mode is SettlementMode.MODE_2
    assert world.transactions[after].legs[0].mode is SettlementMode.MODE_3
    assert _executes(cast, before) == 1 and _executes(cast, after) == 0
    assert not world.log.select("ledger.transfer", transactionId=before)
    assert len(world.log.select("ledger.transfer", transactionId=after)) == 1
    assert {world.transactions[t].lifecycle_status.value for t in (before, after)} == {
        "settled"}


def test_in_flight_transaction_keeps_its_captured_approval_sla(cast: Cast) -> None:
    world = cast.world
    first = world.initiate(cast.member.id, redeem(cast.asset(2), reference="BEFORE"))
    world.arm(first.id, Outcome.SILENCE)
    world.run_until(INTAKE_MS)
    world.save_profile(cast.issuers[2].id, issuer_profile(2, approval_sla_s=60))
    second = world.initiate(cast.member.id, redeem(cast.asset(2), reference="AFTER"))
    world.arm(second.id, Outcome.SILENCE)
    world.run_all()
    for tx_id, sla_ms in ((first.id, 900_000), (second.id, 60_000)):
        [sent] = world.log.select("saga.execute_sent", transactionId=tx_id)  # Mode 2
        [parked] = world.log.select("transaction.state", transactionId=tx_id,
                                    event="transaction.parked")
        assert parked.at_ms == sent["deadlineMs"] == sent.at_ms + sla_ms


def test_swap_legs_capture_their_own_issuer_profiles(cast: Cast) -> None:
    """In a swap the source issuer's profile governs the burn and the target issuer's the
    mint, each captured at initiation: a later save for the target leaves the mint alone."""
    world = cast.world
    tx = world.initiate(cast.member.id, swap(cast.asset(3), cast.asset(2)))
    world.run_until(INTAKE_MS)
    world.save_profile(cast.issuers[2].id, issuer_profile(3, ledger="evm", feedback=BOTH))
    world.run_all()
    tx = world.transactions[tx.id]
    assert [(leg.leg, leg.mode, leg.profile_version) for leg in tx.legs] == [
        ("burn", SettlementMode.MODE_3, 1), ("mint", SettlementMode.MODE_2, 1)]
    assert tx.lifecycle_status.value == "settled"
    [mint_instruction] = instruction_ids(world, tx.id, "mint")
    assert world.log.select("issuer.request", instructionId=mint_instruction,
                            route="POST /instructions/{id}/execute")
    assert len(world.log.select("ledger.transfer", transactionId=tx.id)) == 1  # burn leg only


def test_feedback_channel_change_does_not_reach_an_in_flight_transaction(cast: Cast) -> None:
    """Versioning 3: the in-flight Mode 2 redeem captured SIGNED_WEBHOOK feedback; a new
    profile with POLLABLE_RESOURCE only applies to later transactions."""
    world = cast.world
    tx = world.initiate(cast.member.id, redeem(cast.asset(2)))
    step_until(world, "saga.instruction_sent", transactionId=tx.id)
    world.save_profile(cast.issuers[2].id, issuer_profile(2, feedback=("POLLABLE_RESOURCE",)))
    world.run_all()
    assert world.log.select("issuer.instruction", transactionId=tx.id, status="COMPLETED")
    done = world.transactions[tx.id]
    assert (done.lifecycle_status.value, done.reason_code) == ("settled", None)


def test_leg_terms_are_made_once_per_profile_version_and_follow_each_save(cast: Cast) -> None:
    """Versioning rule 3: a transaction captures its issuer's profile version at initiation.
    The terms are one value per leg, issuer and version (made once, shared), so a save
    reaches the next initiation and never one already made."""
    world, member, issuer = cast.world, cast.member.id, cast.issuers[3]
    first = world.initiate(member, redeem(cast.asset(3), reference="T1"))
    second = world.initiate(member, redeem(cast.asset(3), reference="T2"))
    assert first.legs[0] is second.legs[0]
    world.save_profile(issuer.id, issuer_profile(2, ledger="solana"))
    third = world.initiate(member, redeem(cast.asset(3), reference="T3"))
    assert (third.legs[0].mode, third.legs[0].profile_version) == (SettlementMode.MODE_2, 2)
    assert (first.legs[0].mode, first.legs[0].profile_version) == (SettlementMode.MODE_3, 1)
    assert world.transactions[second.id].legs[0].mode is SettlementMode.MODE_3
