"""Every transaction of a workload ends terminal, and each end leaves the money where it should.

Spec, "States and transitions" and the conformance table: settled after the proof-backed
events; REJECTED unwinds automatically (``failed``, parked false: asset back in the sender's
wallet, earmark cancelled, no balance discrepancy); FAILED and silence park with ``terminal``
true; a cancel returns the locked asset to the sender.

For Hypothesis-drawn workloads (modes, amounts up to more than the wallet holds, armed
outcomes, cancel times) run to completion (``run_all``):

- every transaction is ``settled``, ``cancelled`` or ``failed``;
- settled ⇒ chain Burned (redeem) or Minted (swap), rtgs Settled, fee collected and paid to
  ``operator:fees``, the member received ``receiveAmount`` (fiat for a redeem, the target asset
  for a swap), the source burned exactly once;
- failed, parked false ⇒ fee waived, no lock and no earmark left, the member's tokens restored;
  after an issuer rejection chain ReturnedToSender and rtgs Cancelled; after a refused lock
  (insufficient funds, our row, docs/semantics.md) nothing moved, chain and rtgs None;
- cancelled ⇒ member's tokens restored, no lock and no earmark left for it, chain
  ReturnedToSender and rtgs Cancelled (the spec's cancel values);
- parked ⇒ fee pending and the earmark still held (nothing undone, an operator decides);
- the balances add up: each member wallet, the member's and issuers' RTGS accounts and the
  fee account equal what the outcomes say.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from hypothesis import example, given, settings
from hypothesis import strategies as st

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.lifecycle import LifecycleStatus
from clearing_sim.domain.saga import SagaPath, StepName, StepStatus
from clearing_sim.domain.transaction import (
    ChainState,
    FeeStatus,
    RtgsState,
    Transaction,
    UseCase,
)
from clearing_sim.sim.examples import Cast, example_world
from clearing_sim.sim.rtgs import OPERATOR_FEE_ACCOUNT

from ._replay import LogReplay, TxModel, Where
from ._workload import WALLET_START, Order, play, workloads

SEEDS = st.integers(0, 2**32 - 1)
ISSUER_START = Decimal("10000000.00")
_S = LifecycleStatus


def run_to_end(cast: Cast, workload: list[Order]) -> LogReplay:
    replay = LogReplay()
    play(cast, workload, replay)
    cast.world.run_all()
    replay.feed(cast.world.log)
    return replay


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, workload=workloads(max_size=8))
def test_every_transaction_ends_terminal_with_money_in_place(seed: int,
                                                             workload: list[Order]) -> None:
    cast = example_world(seed)
    replay = run_to_end(cast, workload)
    world = cast.world
    assert replay.violations == []
    assert replay.mismatches(world) == []
    assert len(world.transactions) == len(workload)
    for tx in world.transactions:
        assert tx.lifecycle_status in (_S.SETTLED, _S.CANCELLED, _S.FAILED), tx.state
        assert tx.terminal
        check_end(cast, replay.tx(tx.id), tx)
    check_totals(cast, replay)


def check_end(cast: Cast, model: TxModel, tx: Transaction) -> None:
    world = cast.world
    held = [ledger.value for ledger, chain in world.ledgers.items() if tx.id in chain.locks]
    if tx.lifecycle_status is _S.SETTLED:
        check_settled(cast, model, tx)
    elif tx.parked:
        # States rule 3: only FAILED and silence park; a REJECTED never does.
        assert tx.reason_code in ("issuer_failed", "approval_sla_exceeded"), tx.reason_code
        assert tx.fee_status is FeeStatus.PENDING
        assert tx.rtgs is RtgsState.EARMARKED and tx.id in world.rtgs.earmarks
        return
    else:  # resolved ends: the member's tokens are back where they started
        assert tx.fee_status is FeeStatus.WAIVED
        assert model.source is Where.WALLET and model.burns == 0 and model.mints == 0
        assert tx.id not in world.rtgs.earmarks and not held, (tx.id, held)
        if tx.lifecycle_status is _S.CANCELLED:
            check_cancelled(cast, tx)
        else:
            check_failed(cast, tx)
    assert not held, (tx.id, held)


def check_settled(cast: Cast, model: TxModel, tx: Transaction) -> None:
    world = cast.world
    q = tx.quote
    assert tx.chain is (ChainState.BURNED if tx.use_case is UseCase.REDEEM else ChainState.MINTED)
    assert tx.rtgs is RtgsState.SETTLED and tx.fee_status is FeeStatus.COLLECTED
    assert tx.id not in world.rtgs.earmarks
    assert model.source is Where.BURNED and model.burns == 1 and model.settled_fiat == 1
    assert [s.status for s in tx.saga.steps] == [StepStatus.DONE] * 6
    assert tx.saga.current.name is StepName.SETTLED
    [settle] = world.log.select("rtgs.settle", transactionId=tx.id)
    assert Decimal(str(settle["feeGbp"])) == q.platform_fee_amount
    assert Decimal(str(settle["amountGbp"])) == q.receive_amount == q.debit_amount - \
        q.platform_fee_amount
    assert settle["creditor"] == tx.creditor.participant_id
    if tx.use_case is UseCase.REDEEM:
        assert tx.creditor.participant_id == cast.member.id
        assert model.mints == 0
    else:
        [mint] = world.log.select("ledger.mint", transactionId=tx.id)
        _, wallet = world.target_wallet(tx)
        assert mint["account"] == wallet and mint["asset"] == tx.target.amount.asset.code
        assert Decimal(str(mint["amount"])) == q.receive_amount == tx.target.amount.amount


def check_cancelled(cast: Cast, tx: Transaction) -> None:
    world = cast.world
    assert tx.reason_code == "operator_cancelled"
    assert tx.saga.path is SagaPath.CANCELLED and tx.saga.total == 5
    assert tx.saga.current.name is StepName.CANCELLED
    assert tx.saga.current.status is StepStatus.CANCELLED
    # The spec's cancel values, whatever step the cancel interrupted (issue: the cancelled
    # path is the spec's); nothing was ever earmarked (cancel ends before the earmark lands).
    assert (tx.chain, tx.rtgs) == (ChainState.RETURNED_TO_SENDER, RtgsState.CANCELLED)
    assert not world.log.select("rtgs.earmark", transactionId=tx.id)


def check_failed(cast: Cast, tx: Transaction) -> None:
    expected = {
        "issuer_rejected": (ChainState.RETURNED_TO_SENDER, RtgsState.CANCELLED),
        "insufficient_funds": (ChainState.NONE, RtgsState.NONE),
        "earmark_refused": (ChainState.RETURNED_TO_SENDER, RtgsState.NONE),
    }
    assert tx.reason_code in expected, tx.reason_code
    assert (tx.chain, tx.rtgs) == expected[tx.reason_code]
    if tx.reason_code == "insufficient_funds":
        [refused] = cast.world.log.select("ledger.refused", transactionId=tx.id)
        assert refused["op"] == "lock"


def check_totals(cast: Cast, replay: LogReplay) -> None:
    """Every balance equals what the transactions' ends say."""
    world = cast.world
    wallets: Counter[str] = Counter()
    member_fiat, fees = Decimal(0), Decimal(0)
    issuers: Counter[str] = Counter({p.id: ISSUER_START for p in cast.issuers.values()})
    for tx in world.transactions:
        model = replay.tx(tx.id)
        code = tx.source.amount.asset.code
        if model.source is not Where.WALLET:
            wallets[code] -= tx.source.amount.amount
        if model.mints:
            wallets[tx.target.amount.asset.code] += tx.target.amount.amount
        if tx.rtgs in (RtgsState.EARMARKED, RtgsState.SETTLED):
            issuers[tx.debtor.participant_id] -= tx.quote.debit_amount
        if tx.rtgs is RtgsState.SETTLED:
            fees += tx.quote.platform_fee_amount
            if tx.use_case is UseCase.REDEEM:
                member_fiat += tx.quote.receive_amount
            else:
                issuers[tx.creditor.participant_id] += tx.quote.receive_amount
    for mode in (1, 2, 3):
        asset = cast.asset(mode)
        on = cast.issuers[mode].profile.ledger
        ledger, wallet = world.ledgers[on], cast.member.wallets[on]
        assert ledger.balance(wallet, asset).amount == WALLET_START + wallets[asset.code], asset
    assert world.rtgs.balances[cast.member.id] == member_fiat
    assert world.rtgs.balances[OPERATOR_FEE_ACCOUNT] == fees
    for issuer_id, expected in issuers.items():
        assert world.rtgs.balances[issuer_id] == expected


# --- regression: a Mode 3 refund after silence never returns tokens already burned ------
_A = Order(UseCase.REDEEM, 3, None, "100.00", 0, Outcome.FAILED, 0)
_B = Order(UseCase.REDEEM, 3, None, "100.00", 0)


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, sla_s=st.sampled_from([10, 20, 30, 60]),
       workload=workloads(max_size=6, cancels=False))
@example(seed=2, sla_s=20, workload=[_A, _B])
def test_a_burned_source_is_never_refunded(seed: int, sla_s: int,
                                           workload: list[Order]) -> None:
    cast = example_world(seed, approval_sla_s=sla_s)
    replay = run_to_end(cast, workload)
    assert replay.violations == []
    assert replay.mismatches(cast.world) == []
    for tx in cast.world.transactions:
        assert tx.terminal
        check_end(cast, replay.tx(tx.id), tx)
    check_totals(cast, replay)
