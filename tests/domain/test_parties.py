"""The capability table (spec, "Authentication" 2: capabilities checked per endpoint)."""

from __future__ import annotations

import itertools

import pytest

from clearing_sim.domain.ids import ParticipantId
from clearing_sim.domain.parties import (
    CAPABILITIES,
    Capability,
    CredentialKind,
    ParticipantKind,
    Party,
    capabilities_for,
)

C = Capability
KINDS = list(ParticipantKind)
CREDENTIALS = list(CredentialKind)


def test_capabilities_are_exactly_the_specs_eight() -> None:
    assert {c.value for c in Capability} == {
        "transactions:read", "transactions:write", "webhooks:manage", "manageIssuedAssets",
        "generateReserveProof", "manageOwnAgents", "manageOwnTeam", "runOwnConformancePack"}


def test_participant_kinds_are_the_specs_two() -> None:
    assert {k.value for k in ParticipantKind} == {"clearing_member", "stablecoin_issuer"}


def test_table_covers_every_kind_and_credential_without_duplicates() -> None:
    assert set(CAPABILITIES) == set(itertools.product(KINDS, CREDENTIALS))
    for caps in CAPABILITIES.values():
        assert len(caps) == len(set(caps))


@pytest.mark.parametrize("kind", KINDS)
def test_api_keys_never_hold_run_own_conformance_pack(kind: ParticipantKind) -> None:
    """Spec: runOwnConformancePack — tenant admin JWT only; machine API keys never hold it."""
    assert C.RUN_OWN_CONFORMANCE_PACK not in capabilities_for(kind, CredentialKind.API_KEY)
    assert C.RUN_OWN_CONFORMANCE_PACK in capabilities_for(kind, CredentialKind.TENANT_ADMIN)


@pytest.mark.parametrize("kind", KINDS)
def test_api_keys_hold_read_and_webhook_capabilities(kind: ParticipantKind) -> None:
    caps = capabilities_for(kind, CredentialKind.API_KEY)
    assert {C.TRANSACTIONS_READ, C.WEBHOOKS_MANAGE} <= set(caps)


def test_only_clearing_members_hold_transactions_write() -> None:
    """Spec, "Participants": clearing members start redemptions and swaps; issuers sit on
    the burn or mint side, so their credentials read transactions but never write them."""
    for credential in CredentialKind:
        member = capabilities_for(ParticipantKind.CLEARING_MEMBER, credential)
        issuer = capabilities_for(ParticipantKind.STABLECOIN_ISSUER, credential)
        assert C.TRANSACTIONS_WRITE in member
        assert C.TRANSACTIONS_WRITE not in issuer


def test_issuer_tenant_admins_hold_manage_issued_assets_and_generate_reserve_proof() -> None:
    caps = capabilities_for(ParticipantKind.STABLECOIN_ISSUER, CredentialKind.TENANT_ADMIN)
    assert C.MANAGE_ISSUED_ASSETS in caps
    assert C.GENERATE_RESERVE_PROOF in caps


@pytest.mark.parametrize(("kind", "credential"), [
    (ParticipantKind.CLEARING_MEMBER, CredentialKind.TENANT_ADMIN),
    (ParticipantKind.CLEARING_MEMBER, CredentialKind.API_KEY),
    (ParticipantKind.STABLECOIN_ISSUER, CredentialKind.API_KEY),
])
def test_only_issuer_tenant_admins_hold_the_issuer_capabilities(
        kind: ParticipantKind, credential: CredentialKind) -> None:
    caps = capabilities_for(kind, credential)
    assert C.MANAGE_ISSUED_ASSETS not in caps
    assert C.GENERATE_RESERVE_PROOF not in caps


@pytest.mark.parametrize("kind", KINDS)
def test_agents_and_team_are_tenant_admin_only(kind: ParticipantKind) -> None:
    """Spec: manageOwnAgents (tenant admins only), manageOwnTeam (tenant admin JWT)."""
    admin = capabilities_for(kind, CredentialKind.TENANT_ADMIN)
    key = capabilities_for(kind, CredentialKind.API_KEY)
    for cap in (C.MANAGE_OWN_AGENTS, C.MANAGE_OWN_TEAM):
        assert cap in admin
        assert cap not in key


def test_party_is_the_specs_party_object() -> None:
    party = Party(ParticipantId("7af86bc6-f9ce-424b-8326-7284b40c1623"),
                  ParticipantKind.CLEARING_MEMBER, "Northbank")
    assert party.participant_kind == "clearing_member"
    assert party == Party(ParticipantId("7af86bc6-f9ce-424b-8326-7284b40c1623"),
                          ParticipantKind.CLEARING_MEMBER, "Northbank")
