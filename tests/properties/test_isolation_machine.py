"""Isolation and the REJECTED row, as a stateful model: two members, two issuers, subscribers.

Spec, Authentication 3 (scope), Events (webhooks only for public lifecycle changes of the
subscriber's transactions) and States rule 3 (REJECTED triggers a safe automatic unwind).
Hypothesis drives one world with two clearing members (``Northbank``, ``Southbank``) and two
instructed issuers (``Ether Pound``, Mode 2; ``Sol Quid``, Mode 3) through random
initiations (redeems and swaps either way), cancels, armed outcomes (``rejected``,
``failed``, ``silence``), subscriptions of any of the four participants and deletions, with
the clock moving in between. After every step:

- no subscription ever received an event of a transaction outside its participant's scope
  (the initiating member and the issuers the transaction lists), nor one fanned out after
  it was deleted or disabled;
- every transaction that saw REJECTED and has ended is ``failed``, parked false, terminal,
  ``ReturnedToSender``/``Cancelled``, with the sender's tokens back in the wallet and nothing
  locked or earmarked for it;
- money is conserved per asset on every ledger, and the fiat in the RTGS scheme is constant.
"""

from __future__ import annotations

import contextlib
from decimal import Decimal

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from clearing_sim.domain.errors import NotAllowed
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.lifecycle import EventType, LifecycleStatus
from clearing_sim.domain.transaction import ChainState, RtgsState
from clearing_sim.sim.examples import Cast, example_world, redeem, swap
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.world import World

from ._replay import LogReplay, Where

MODES = (2, 3)
AMOUNTS = ("1.00", "250.00", "9000.00")
OUTCOMES = (Outcome.REJECTED, Outcome.FAILED, Outcome.SILENCE)
EVENTS = st.lists(st.sampled_from(list(EventType)), min_size=1, max_size=6, unique=True)
DELAYS_MS = st.sampled_from([0, 150, 1_000, 20_000, 120_000, 900_000, 3_600_000])


class IsolationMachine(RuleBasedStateMachine):
    transactions = Bundle("transactions")
    subscriptions = Bundle("subscriptions")

    @initialize(seed=st.integers(0, 2**16))
    def build(self, seed: int) -> None:
        self.cast: Cast = example_world(seed)
        world = self.cast.world
        south = world.add_member("Southbank", Decimal("0.00"),
                                 {self.cast.asset(m): Decimal("10000.00") for m in MODES})
        self.members: list[Participant] = [self.cast.member, south]
        self.parties = [*self.members, *(self.cast.issuers[m] for m in MODES)]
        self.fiat = world.rtgs.total()
        self.replay = LogReplay()
        self.references = 0

    # rules --------------------------------------------------------------------------------
    @rule(target=transactions, member=st.integers(0, 1), source=st.sampled_from(MODES),
          target_mode=st.sampled_from([None, *MODES]), amount=st.sampled_from(AMOUNTS))
    def initiate(self, member: int, source: int, target_mode: int | None, amount: str) -> str:
        self.references += 1
        reference = f"ISO-{self.references:04d}"
        if target_mode is None or target_mode == source:
            request = redeem(self.cast.asset(source), amount, reference)
        else:
            request = swap(self.cast.asset(source), self.cast.asset(target_mode), amount,
                           reference)
        return self.cast.world.initiate(self.members[member].id, request).id

    @rule(tx_id=transactions)
    def cancel(self, tx_id: str) -> None:
        with contextlib.suppress(NotAllowed):
            self.cast.world.cancel(tx_id)

    @rule(tx_id=transactions, outcome=st.sampled_from(OUTCOMES))
    def arm(self, tx_id: str, outcome: Outcome) -> None:
        with contextlib.suppress(NotAllowed):
            self.cast.world.arm(tx_id, outcome)

    @rule(target=subscriptions, party=st.integers(0, 3), events=EVENTS)
    def subscribe(self, party: int, events: list[EventType]) -> str:
        owner = self.parties[party]
        url = f"https://hooks.{owner.name.lower().replace(' ', '')}.example/{self.references}"
        return self.cast.world.subscriptions.create(owner.id, url, tuple(events)).id

    @rule(subscription_id=subscriptions)
    def delete(self, subscription_id: str) -> None:
        subscription = self.cast.world.subscriptions.get(subscription_id)
        assert subscription is not None
        if subscription.deleted_at_ms is None:
            self.cast.world.subscriptions.delete(subscription_id)

    @rule(delay_ms=DELAYS_MS)
    def advance(self, delay_ms: int) -> None:
        self.cast.world.advance(delay_ms)

    @precondition(lambda self: any(not tx.terminal for tx in self.cast.world.transactions))
    @rule()
    def run_to_the_end(self) -> None:
        self.cast.world.run_all()

    # invariants ---------------------------------------------------------------------------
    @invariant()
    def events_reach_only_their_parties(self) -> None:
        world = self.cast.world
        for record in world.log.select("webhook.event"):
            tx = world.transactions[str(record["transactionId"])]
            for subscription_id in record["subscriptionIds"]:
                subscription = world.subscriptions.get(subscription_id)
                assert subscription is not None
                assert subscription.participant_id in tx.audience, (
                    f"{subscription_id} of {subscription.participant_id} got an event of "
                    f"{tx.id}, whose parties are {tx.audience}")
                deleted = subscription.deleted_at_ms
                assert deleted is None or deleted > record.at_ms or (
                    deleted == record.at_ms and _created_before(world, subscription_id,
                                                                record.seq))
        for record in world.log.select("webhook.attempt"):
            event = world.log.select("webhook.event", eventId=record["eventId"])[0]
            assert record["subscriptionId"] in event["subscriptionIds"]

    @invariant()
    def rejected_always_unwinds(self) -> None:
        world = self.cast.world
        self.replay.feed(world.log)
        for record in world.log.select("issuer.instruction", status="REJECTED"):
            tx = world.transactions[str(record["transactionId"])]
            if not tx.terminal:
                continue  # the unwind is still running
            assert (tx.lifecycle_status, tx.parked) == (LifecycleStatus.FAILED, False), tx.state
            assert tx.reason_code == "issuer_rejected"
            assert (tx.chain, tx.rtgs) == (ChainState.RETURNED_TO_SENDER, RtgsState.CANCELLED)
            assert self.replay.tx(tx.id).source is Where.WALLET
            assert tx.id not in world.rtgs.earmarks
            assert all(tx.id not in ledger.locks for ledger in world.ledgers.values())
            events = [r["event"] for r in world.log.select("transaction.state",
                                                             transactionId=tx.id)]
            assert events.count(EventType.FAILED.value) == 1
            assert EventType.PARKED.value not in events

    @invariant()
    def money_is_conserved(self) -> None:
        world = self.cast.world
        for ledger in world.ledgers.values():
            assert ledger.conserved(), ledger.ledger
        assert world.rtgs.total() == self.fiat
        assert self.replay.violations == []


def _created_before(world: World, subscription_id: str, seq: int) -> bool:
    """A deletion in the same millisecond as a fan-out: the fan-out came first in the log."""
    [deleted] = world.log.select("webhook.deleted", subscriptionId=subscription_id)
    return seq < deleted.seq


IsolationMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=30,
                                              deadline=None)
TestIsolationMachine = IsolationMachine.TestCase
