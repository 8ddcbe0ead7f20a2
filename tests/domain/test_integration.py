"""The integration-path derivation (spec, "Integration path result", "Settlement modes")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.integration import (
    CHAIN_DEFAULT_MODE,
    CUSTODY_INPUTS,
    Chain,
    ChainStatus,
    IntegratorRole,
    ParticipantCustody,
    integration_path,
    parse_custody,
)
from clearing_sim.domain.profile import CommitPoint, SettlementMode, derive_mode

M1, M2, M3 = SettlementMode.MODE_1, SettlementMode.MODE_2, SettlementMode.MODE_3

# The spec's routes (its Endpoints and Issuer-side contract sections), as the steps name them.
SPEC_URLS = {
    "/api/v1/system/status", "/api/v1/onboarding/applications", "/api/v1/transactions",
    "/api/v1/transactions/{id}", "/api/v1/transactions/{id}/recovery-status",
    "/api/v1/conformance/run", "/api/v1/webhooks", "/api/v1/team/invitations",
    "/api/v1/sandbox/agents", "/api/v1/issuers/{issuerId}/capabilities",
    "/api/v1/issuers/{issuerId}/custody/verify-delegation",
    "/api/v1/issuers/{issuerId}/conformance/run", "/api/v1/issuers/{issuerId}/conformance/results",
    "/api/v1/reserves/{issuerId}/proof/generate", "{apiBaseUrl}/burn-instructions",
    "{apiBaseUrl}/mint-instructions", "{apiBaseUrl}/instructions/{id}/execute",
    "{apiBaseUrl}/treasury/refunds",
}

roles = st.sampled_from(list(IntegratorRole))
custodies = st.sampled_from(list(ParticipantCustody))
chains = st.sampled_from(list(Chain))
commit_points = st.sampled_from(list(CommitPoint))


@pytest.mark.parametrize(("chain", "mode"), [
    (Chain.STELLAR, M1), (Chain.EVM, M2), (Chain.SOLANA, M3), (Chain.CANTON, M2)])
def test_without_a_commit_point_the_mode_is_the_chains_usual_one(chain: Chain,
                                                                 mode: SettlementMode) -> None:
    """derivedMode for members, administrators and issuers that state no commitPoint."""
    assert CHAIN_DEFAULT_MODE[chain] is mode
    for role in IntegratorRole:
        assert integration_path(role, ParticipantCustody.MPC, chain).derived_mode is mode


@given(custodies, chains, commit_points, st.booleans())
def test_an_issuers_commit_point_derives_the_mode_as_the_spec_says(
        custody: ParticipantCustody, chain: Chain, commit_point: CommitPoint,
        pre_burn: bool) -> None:
    """Spec, "Settlement modes": ON_OBSERVATION → Mode 1; ON_INSTRUCTION → Mode 2, or Mode 3
    with preBurnTransferRequired; on every chain."""
    path = integration_path(IntegratorRole.ISSUER, custody, chain, commit_point, pre_burn)
    assert path.derived_mode is derive_mode(commit_point, pre_burn)


@given(roles, custodies, chains, st.one_of(st.none(), commit_points), st.booleans())
def test_custody_is_incompatible_only_for_a_caas_issuer_in_mode_1(
        role: IntegratorRole, custody: ParticipantCustody, chain: Chain,
        commit_point: CommitPoint | None, pre_burn: bool) -> None:
    """custodyCompatible: Mode 1 needs the operator as an on-chain co-signer of the issuer's
    account, which custody-as-a-service does not allow."""
    if role is not IntegratorRole.ISSUER:
        commit_point = None
    path = integration_path(role, custody, chain, commit_point, pre_burn)
    expected = not (role is IntegratorRole.ISSUER and path.derived_mode is M1
                    and custody is ParticipantCustody.CAAS)
    assert path.custody_compatible is expected


def test_a_caas_issuer_is_compatible_once_it_commits_on_instruction() -> None:
    caas = ParticipantCustody.CAAS
    assert not integration_path(IntegratorRole.ISSUER, caas, Chain.STELLAR).custody_compatible
    assert integration_path(IntegratorRole.ISSUER, caas, Chain.STELLAR,
                            CommitPoint.ON_INSTRUCTION, False).custody_compatible
    assert integration_path(IntegratorRole.PARTICIPANT, caas, Chain.STELLAR).custody_compatible


@pytest.mark.parametrize(("chain", "status"), [
    (Chain.STELLAR, ChainStatus.LIVE), (Chain.EVM, ChainStatus.LIVE),
    (Chain.SOLANA, ChainStatus.LIVE), (Chain.CANTON, ChainStatus.PLANNED)])
def test_chain_status_is_live_for_profile_ledgers_and_planned_for_canton(
        chain: Chain, status: ChainStatus) -> None:
    assert integration_path(IntegratorRole.PARTICIPANT, ParticipantCustody.MPC,
                            chain).chain_status is status


@given(roles, custodies, chains, st.one_of(st.none(), commit_points), st.booleans())
def test_steps_are_numbered_from_one_and_point_at_spec_routes(
        role: IntegratorRole, custody: ParticipantCustody, chain: Chain,
        commit_point: CommitPoint | None, pre_burn: bool) -> None:
    """steps[] {order, title, url}: orders 1..n, titles non-empty, every url a spec route."""
    if role is not IntegratorRole.ISSUER:
        commit_point = None
    steps = integration_path(role, custody, chain, commit_point, pre_burn).steps
    assert [s.order for s in steps] == list(range(1, len(steps) + 1))
    assert all(s.title.strip() for s in steps)
    assert {s.url for s in steps} <= SPEC_URLS
    assert len({s.url for s in steps}) == len(steps)


def _urls(role: IntegratorRole, commit_point: CommitPoint | None = None,
          pre_burn: bool = False, chain: Chain = Chain.EVM) -> list[str]:
    path = integration_path(role, ParticipantCustody.SELF_CUSTODY, chain, commit_point, pre_burn)
    return [s.url for s in path.steps]


def test_issuer_steps_follow_the_mode() -> None:
    """Mode 1: verify the custody delegation, no instruction routes (Rule 1: nothing to arm).
    Mode 2: burn and mint instructions and the execute call. Mode 3: the refund endpoint."""
    issuer = IntegratorRole.ISSUER
    mode_1 = _urls(issuer, CommitPoint.ON_OBSERVATION)
    mode_2 = _urls(issuer, CommitPoint.ON_INSTRUCTION, False)
    mode_3 = _urls(issuer, CommitPoint.ON_INSTRUCTION, True)
    assert "/api/v1/issuers/{issuerId}/custody/verify-delegation" in mode_1
    assert not any(u.startswith("{apiBaseUrl}") or "conformance" in u for u in mode_1)
    assert "{apiBaseUrl}/instructions/{id}/execute" in mode_2
    assert "{apiBaseUrl}/treasury/refunds" not in mode_2
    assert "{apiBaseUrl}/treasury/refunds" in mode_3
    assert "{apiBaseUrl}/instructions/{id}/execute" not in mode_3
    for urls in (mode_2, mode_3):
        assert urls.index("{apiBaseUrl}/burn-instructions") < urls.index(
            "/api/v1/issuers/{issuerId}/conformance/run")
    assert mode_1[:3] == ["/api/v1/onboarding/applications", "/api/v1/system/status",
                          "/api/v1/issuers/{issuerId}/capabilities"]


def test_member_steps_apply_first_check_status_before_transactions_and_arm_only_if_it_can() -> None:
    """Spec: the sandbox status check runs before sandbox transactions; Mode 1 transactions
    cannot be armed in conformance scenarios."""
    on_stellar = _urls(IntegratorRole.PARTICIPANT, chain=Chain.STELLAR)
    on_evm = _urls(IntegratorRole.PARTICIPANT, chain=Chain.EVM)
    assert on_evm[0] == "/api/v1/onboarding/applications"
    assert on_evm.index("/api/v1/system/status") < on_evm.index("/api/v1/transactions")
    assert "/api/v1/conformance/run" in on_evm
    assert "/api/v1/conformance/run" not in on_stellar


def test_administrator_steps_need_no_application() -> None:
    urls = _urls(IntegratorRole.ADMINISTRATOR)
    assert "/api/v1/onboarding/applications" not in urls
    assert {"/api/v1/team/invitations", "/api/v1/sandbox/agents"} <= set(urls)


def test_self_custody_is_also_spelt_self_underscore_custody() -> None:
    """Spec, Onboarding: `self_custody` is also accepted."""
    assert parse_custody("self_custody") is ParticipantCustody.SELF_CUSTODY
    assert parse_custody("self-custody") is ParticipantCustody.SELF_CUSTODY
    assert [parse_custody(v) for v in ("mpc", "caas")] == [ParticipantCustody.MPC,
                                                            ParticipantCustody.CAAS]
    assert parse_custody("Self-Custody") is None
    assert parse_custody("custodian") is None
    assert set(CUSTODY_INPUTS) == {"self-custody", "self_custody", "mpc", "caas"}


def test_only_an_issuer_states_a_commit_point() -> None:
    with pytest.raises(AssertionError):
        integration_path(IntegratorRole.PARTICIPANT, ParticipantCustody.MPC, Chain.EVM,
                         CommitPoint.ON_OBSERVATION)
