"""The RTGS settlement adapter (mock, ``connected``): earmark, settle, release, refusal.

``clearing_sim.sim.rtgs``: an earmark holds part of the payer's balance for one transaction;
settle pays it out to the creditor less the platform fee, which lands in the operator's fee
account; release returns it; fiat is conserved (Σ balances + Σ earmarked is constant).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from clearing_sim.sim.examples import example_world, issuer_profile, redeem, swap
from clearing_sim.sim.rtgs import OPERATOR_FEE_ACCOUNT, RtgsRefused
from clearing_sim.sim.world import World
from tests.sim.simkit import call

D = Decimal


@pytest.fixture
def world() -> World:
    world = World()
    world.rtgs.open_account("payer", D("100.00"))
    world.rtgs.open_account("creditor", D("0.00"))
    return world


def test_adapter_is_connected_with_an_empty_fee_account(world: World) -> None:
    assert world.rtgs.connection == "connected"
    assert world.rtgs.balances[OPERATOR_FEE_ACCOUNT] == 0


def test_earmark_holds_the_amount_of_the_payer(world: World) -> None:
    total = world.rtgs.total()
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    assert world.rtgs.balances["payer"] == D("60.00")
    assert world.rtgs.earmarks["tx-1"].amount == D("40.00")
    assert world.rtgs.total() == total
    [record] = world.log.select("rtgs.earmark")
    assert (record["account"], record["amountGbp"]) == ("payer", "40.00")
    assert record.at_ms > 0  # the adapter answers after its latency


def test_settle_pays_the_creditor_less_the_fee_into_the_fee_account(world: World) -> None:
    total = world.rtgs.total()
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    call(world, world.rtgs.settle("tx-1", "creditor", D("0.04"), "operator"))
    assert (world.rtgs.balances["payer"], world.rtgs.balances["creditor"],
            world.rtgs.balances[OPERATOR_FEE_ACCOUNT]) == (D("60.00"), D("39.96"), D("0.04"))
    assert "tx-1" not in world.rtgs.earmarks and world.rtgs.total() == total
    [record] = world.log.select("rtgs.settle")
    assert (record["amountGbp"], record["feeGbp"], record["creditor"], record["settledBy"]) \
        == ("39.96", "0.04", "creditor", "operator")


def test_release_returns_the_earmark(world: World) -> None:
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    call(world, world.rtgs.release("tx-1"))
    assert world.rtgs.balances["payer"] == D("100.00") and not world.rtgs.earmarks
    assert len(world.log.select("rtgs.release")) == 1


def test_release_now_is_instant(world: World) -> None:
    call(world, world.rtgs.earmark("tx-1", "payer", D("40.00")))
    now = world.now_ms
    world.rtgs.release_now("tx-1")
    assert world.now_ms == now and world.rtgs.balances["payer"] == D("100.00")
    assert world.log.select("rtgs.release")[0].at_ms == now


@pytest.mark.parametrize(("payer", "amount"), [("payer", "100.01"), ("nobody", "0.01")])
def test_earmark_refused_when_the_payer_cannot_cover_it(world: World, payer: str,
                                                       amount: str) -> None:
    before = dict(world.rtgs.balances)
    with pytest.raises(RtgsRefused):
        call(world, world.rtgs.earmark("tx-1", payer, D(amount)))
    assert world.rtgs.balances == before and not world.rtgs.earmarks
    [refused] = world.log.select("rtgs.refused")
    assert (refused["account"], refused["amountGbp"]) == (payer, amount)


def test_whole_amount_can_be_earmarked(world: World) -> None:
    call(world, world.rtgs.earmark("tx-1", "payer", D("100.00")))
    assert world.rtgs.balances["payer"] == 0


def test_fees_accumulate_one_per_settled_transaction() -> None:
    cast = example_world(0)
    world = cast.world
    total = world.rtgs.total()
    for i, mode in enumerate((1, 2, 3)):
        world.initiate(cast.member.id, redeem(cast.asset(mode), "250.00", f"R{i}"))
    world.initiate(cast.member.id, swap(cast.asset(2), cast.asset(3), "1000.00"))
    world.run_all()
    # 10 bps: 0.25 per 250.00 redeem, 1.00 for the 1000.00 swap
    assert world.rtgs.balances[OPERATOR_FEE_ACCOUNT] == D("1.75")
    assert world.rtgs.balances[cast.member.id] == 3 * D("249.75")
    assert world.rtgs.total() == total and not world.rtgs.earmarks


def test_issuer_settled_fiat_leg_is_recorded_as_settled_by_the_issuer() -> None:
    """fiatLeg ISSUER_SETTLES_RTGS: the burn issuer's captured profile names the settler."""
    cast = example_world(0)
    world = cast.world
    world.save_profile(cast.issuers[2].id,
                       issuer_profile(2, fiat_leg="ISSUER_SETTLES_RTGS"))
    issuer_tx = world.initiate(cast.member.id, redeem(cast.asset(2), reference="ISS"))
    operator_tx = world.initiate(cast.member.id, redeem(cast.asset(3), reference="OPS"))
    world.run_all()
    assert world.log.select("rtgs.settle", transactionId=issuer_tx.id)[0]["settledBy"] \
        == "issuer"
    assert world.log.select("rtgs.settle", transactionId=operator_tx.id)[0]["settledBy"] \
        == "operator"
