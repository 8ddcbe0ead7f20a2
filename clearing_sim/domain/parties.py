"""Parties, participant kinds and capabilities, as data.

Public names: ``ParticipantKind``, ``Capability``, ``CredentialKind``, ``Party``,
``capabilities_for``.

Who may do what is one table (``CAPABILITIES``): participant kind × credential kind →
capabilities. Machine API keys never hold ``runOwnConformancePack`` (spec, Authentication 2);
tenant-admin portal sessions hold the admin capabilities of their participant kind.
"""

from __future__ import annotations

from enum import StrEnum

from attrs import frozen

from clearing_sim.domain.ids import ParticipantId

__all__ = ["CAPABILITIES", "Capability", "CredentialKind", "ParticipantKind", "Party",
           "capabilities_for"]


class ParticipantKind(StrEnum):
    CLEARING_MEMBER = "clearing_member"
    STABLECOIN_ISSUER = "stablecoin_issuer"


class Capability(StrEnum):
    TRANSACTIONS_READ = "transactions:read"
    TRANSACTIONS_WRITE = "transactions:write"
    WEBHOOKS_MANAGE = "webhooks:manage"
    MANAGE_ISSUED_ASSETS = "manageIssuedAssets"
    GENERATE_RESERVE_PROOF = "generateReserveProof"
    MANAGE_OWN_AGENTS = "manageOwnAgents"
    MANAGE_OWN_TEAM = "manageOwnTeam"
    RUN_OWN_CONFORMANCE_PACK = "runOwnConformancePack"


class CredentialKind(StrEnum):
    API_KEY = "api_key"
    TENANT_ADMIN = "tenant_admin"


_C = Capability
_ADMIN = (_C.MANAGE_OWN_AGENTS, _C.MANAGE_OWN_TEAM, _C.RUN_OWN_CONFORMANCE_PACK)
# Members start and cancel transactions; issuers sit on the burn or mint side and only read
# the transactions that list them (only clearing members initiate, spec "Participants").
_MEMBER_KEY = (_C.TRANSACTIONS_READ, _C.TRANSACTIONS_WRITE, _C.WEBHOOKS_MANAGE)
_ISSUER_KEY = (_C.TRANSACTIONS_READ, _C.WEBHOOKS_MANAGE)

#: The capability table. Tuples, not sets: iteration order is part of determinism.
CAPABILITIES: dict[tuple[ParticipantKind, CredentialKind], tuple[Capability, ...]] = {
    (ParticipantKind.CLEARING_MEMBER, CredentialKind.API_KEY): _MEMBER_KEY,
    (ParticipantKind.CLEARING_MEMBER, CredentialKind.TENANT_ADMIN): (*_MEMBER_KEY, *_ADMIN),
    (ParticipantKind.STABLECOIN_ISSUER, CredentialKind.API_KEY): _ISSUER_KEY,
    (ParticipantKind.STABLECOIN_ISSUER, CredentialKind.TENANT_ADMIN): (
        *_ISSUER_KEY, *_ADMIN, _C.MANAGE_ISSUED_ASSETS, _C.GENERATE_RESERVE_PROOF),
}


def capabilities_for(kind: ParticipantKind, credential: CredentialKind) -> tuple[Capability, ...]:
    return CAPABILITIES[(kind, credential)]


@frozen
class Party:
    """The spec's Party object."""

    participant_id: ParticipantId
    participant_kind: ParticipantKind
    participant_name: str

