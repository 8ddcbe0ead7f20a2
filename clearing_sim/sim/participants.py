"""Participants as the engine holds them: identity, wallets, assets and profile versions.

Public names: ``Participant``, ``ParticipantRegistry``.

An issuer's saved profiles are kept as a list: version n is ``profiles[n - 1]``; a
transaction captures the version current at its initiation and keeps it (spec, Versioning 3).
"""

from __future__ import annotations

from collections.abc import Iterator

from attrs import define, field

from clearing_sim.domain.ids import ParticipantId
from clearing_sim.domain.money import Asset
from clearing_sim.domain.parties import ParticipantKind, Party
from clearing_sim.domain.profile import IssuerProfile, Ledger

__all__ = ["Participant", "ParticipantRegistry"]


@define
class Participant:
    id: ParticipantId
    kind: ParticipantKind
    name: str
    wallets: dict[Ledger, str] = field(factory=dict)  # one account per ledger
    assets: list[Asset] = field(factory=list)  # issuers: the assets they issue
    issuing_account: str | None = None
    profiles: list[IssuerProfile] = field(factory=list)
    #: the spec's Party of this participant, made once (its id, kind and name never change;
    #: every initiation names three parties)
    party: Party = field(init=False, repr=False, eq=False)

    @party.default
    def _party(self) -> Party:
        return Party(self.id, self.kind, self.name)

    @property
    def profile(self) -> IssuerProfile:
        assert self.profiles, f"{self.name} has no capability profile"
        return self.profiles[-1]

    @property
    def profile_version(self) -> int:
        return len(self.profiles)


class ParticipantRegistry:
    def __init__(self) -> None:
        self._by_id: dict[str, Participant] = {}
        self._by_name: dict[str, Participant] = {}

    def add(self, participant: Participant) -> None:
        assert participant.id not in self._by_id
        if participant.name in self._by_name:
            raise ValueError(f"a participant named {participant.name!r} already exists")
        self._by_id[participant.id] = participant
        self._by_name[participant.name] = participant

    def __getitem__(self, participant_id: str) -> Participant:
        return self._by_id[participant_id]

    def get(self, participant_id: str) -> Participant | None:
        return self._by_id.get(participant_id)

    def named(self, name: str) -> Participant:
        return self._by_name[name]

    def __iter__(self) -> Iterator[Participant]:
        return iter(self._by_id.values())

    def issuer_of(self, asset: Asset) -> Participant | None:
        for participant in self._by_id.values():
            if asset in participant.assets:
                return participant
        return None
