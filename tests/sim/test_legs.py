"""The Burning step's plan (``sim.legs.plan``), over every mix of modes a redeem or a swap
can have. Spec, Issuer instruction statuses: "In Mode 2 the issuer stops at RECEIVED or
PENDING_APPROVAL and does not execute until the execute call arrives"; docs/semantics.md,
"The swap saga": instruct, then decide-and-move burn first, then co-sign."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.ids import ParticipantId
from clearing_sim.domain.profile import SettlementMode
from clearing_sim.domain.transaction import LegTerms
from clearing_sim.sim.legs import Phase, plan

ISSUERS = (ParticipantId("8b19115b-a4cf-447d-8025-a153b10b360c"),
           ParticipantId("0d5c2a57-4bb4-4f0e-9d0c-4b6f3a0b9a11"))
MODES = st.sampled_from(list(SettlementMode))
DECIDE = (Phase.EXECUTE, Phase.SINGLE)


@st.composite
def leg_sets(draw: st.DrawFn) -> tuple[LegTerms, ...]:
    """A redeem's one burn leg, or a swap's burn then mint, each under any mode."""
    legs = [LegTerms("burn", ISSUERS[0], draw(MODES), 1)]
    if draw(st.booleans()):
        legs.append(LegTerms("mint", ISSUERS[1], draw(MODES), 1))
    return tuple(legs)


@given(leg_sets())
def test_each_leg_has_the_phases_of_its_mode_and_no_other(legs: tuple[LegTerms, ...]) -> None:
    """Mode 2: its instruction, then its execute; Mode 3: one single-phase step (the
    instruction is the decision and the move); Mode 1: the service's co-signature."""
    steps = plan(legs)
    for terms in legs:
        phases = [phase for phase, t in steps if t is terms]
        assert phases == {SettlementMode.MODE_1: [Phase.CO_SIGN],
                          SettlementMode.MODE_2: [Phase.INSTRUCT, Phase.EXECUTE],
                          SettlementMode.MODE_3: [Phase.SINGLE]}[terms.mode]


@given(leg_sets())
def test_every_instruction_goes_out_before_any_decision_and_co_signing_comes_last(
        legs: tuple[LegTerms, ...]) -> None:
    """A Mode 2 issuer may hold at RECEIVED or PENDING_APPROVAL until its execute: every
    instruction is out before the first decide-and-move, and no issuer can refuse a Mode 1
    co-signature, so it follows every issuer's decision."""
    kinds = [phase for phase, _ in plan(legs)]
    order = {Phase.INSTRUCT: 0, Phase.EXECUTE: 1, Phase.SINGLE: 1, Phase.CO_SIGN: 2}
    assert [order[kind] for kind in kinds] == sorted(order[kind] for kind in kinds)


@given(leg_sets())
def test_within_a_phase_the_burn_goes_first(legs: tuple[LegTerms, ...]) -> None:
    """The member's value is taken before any is given: burn first in each phase."""
    steps = plan(legs)
    for group in ((Phase.INSTRUCT,), DECIDE, (Phase.CO_SIGN,)):
        names = [t.leg for phase, t in steps if phase in group]
        assert names == sorted(names)  # "burn" < "mint"
