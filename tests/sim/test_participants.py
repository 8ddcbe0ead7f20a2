"""Participants as the engine holds them: the spec's Party of each, and the registry."""

from __future__ import annotations

import pytest

from clearing_sim.domain.ids import ParticipantId
from clearing_sim.domain.parties import ParticipantKind, Party
from clearing_sim.sim.participants import Participant, ParticipantRegistry


def test_party_is_the_participants_id_kind_and_name_made_once() -> None:
    member = Participant(ParticipantId("7af86bc6-f9ce-424b-8326-7284b40c1623"),
                         ParticipantKind.CLEARING_MEMBER, "Northbank")
    assert member.party == Party(member.id, member.kind, "Northbank")
    assert member.party is member.party  # every initiation names it: built once


def test_registry_finds_by_id_and_name_and_refuses_a_second_name() -> None:
    registry = ParticipantRegistry()
    first = Participant(ParticipantId("a"), ParticipantKind.CLEARING_MEMBER, "Northbank")
    registry.add(first)
    assert registry["a"] is first and registry.named("Northbank") is first
    assert registry.get("b") is None
    with pytest.raises(ValueError, match="already exists"):
        registry.add(Participant(ParticipantId("b"), ParticipantKind.STABLECOIN_ISSUER,
                                 "Northbank"))
