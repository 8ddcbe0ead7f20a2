"""The integration path: which settlement mode, custody fit and steps an integrator can expect.

Public names: ``IntegratorRole``, ``ParticipantCustody``, ``Chain``, ``ChainStatus``, ``Step``,
``IntegrationPath``, ``CHAIN_STATUS``, ``CHAIN_DEFAULT_MODE``, ``CUSTODY_INPUTS``,
``parse_custody``, ``integration_path``.

One pure derivation serves both doors that answer it: ``POST /api/v1/tools/integration-path``
and an onboarding application (whose dry run must equal the tool's answer, so both call
``integration_path`` with the same inputs). Choices, one line each in docs/semantics.md:

``derivedMode``
    An issuer that states its ``commitPoint`` gets the spec's derivation (``derive_mode``:
    ON_OBSERVATION → Mode 1; ON_INSTRUCTION → Mode 3 with ``preBurnTransferRequired``, else
    Mode 2). Otherwise the chain's usual mode (``CHAIN_DEFAULT_MODE``): stellar → Mode 1
    (native account multisig lets the operator co-sign), evm and canton → Mode 2 (the issuer
    executes its own contract call on an explicit execute), solana → Mode 3 (SPL tokens move
    to the issuer's wallet before its own burn).

``custodyCompatible``
    False only for an issuer in Mode 1 whose custody model is ``caas``: Mode 1 needs the
    operator's key added as an on-chain co-signer of the issuer's account, which a
    custody-as-a-service provider does not allow. Self-custody and MPC accounts can add a
    signer; members and administrators never delegate signing (a member's lock is a transfer
    its own custody signs), so every model fits them.

``chainStatus``
    ``live`` for stellar, evm and solana (the ledgers an issuer profile accepts); ``planned``
    for canton.

``steps``
    Ordered per role, with mode-specific rows; each ``url`` is the API route (a template, as
    in the spec) or the issuer-side route the step concerns.

The participant-level ``custodyModel`` (``self-custody``, ``mpc``, ``caas``) is distinct from
the issuer profile's wallet structure (``clearing_sim.domain.profile.CustodyModel``).
``self_custody`` is accepted as an input spelling of ``self-custody`` (spec, "Onboarding").
"""

from __future__ import annotations

from enum import StrEnum

from attrs import frozen

from clearing_sim.domain.profile import CommitPoint, SettlementMode, derive_mode

__all__ = [
    "CHAIN_DEFAULT_MODE",
    "CHAIN_STATUS",
    "CUSTODY_INPUTS",
    "Chain",
    "ChainStatus",
    "IntegrationPath",
    "IntegratorRole",
    "ParticipantCustody",
    "Step",
    "integration_path",
    "parse_custody",
]


class IntegratorRole(StrEnum):
    PARTICIPANT = "participant"  # a clearing member
    ISSUER = "issuer"  # a stablecoin issuer
    ADMINISTRATOR = "administrator"  # a tenant admin of either


class ParticipantCustody(StrEnum):
    SELF_CUSTODY = "self-custody"
    MPC = "mpc"
    CAAS = "caas"


class Chain(StrEnum):
    STELLAR = "stellar"
    EVM = "evm"
    SOLANA = "solana"
    CANTON = "canton"


class ChainStatus(StrEnum):
    LIVE = "live"
    PLANNED = "planned"


_M1, _M2, _M3 = SettlementMode.MODE_1, SettlementMode.MODE_2, SettlementMode.MODE_3
_ALL_MODES = (_M1, _M2, _M3)
_INSTRUCTED = (_M2, _M3)

#: What the tool accepts for ``custodyModel``, the spelling ``self_custody`` included.
CUSTODY_INPUTS: tuple[str, ...] = (*(c.value for c in ParticipantCustody), "self_custody")
_CUSTODY_ALIASES = {"self_custody": ParticipantCustody.SELF_CUSTODY}

CHAIN_STATUS: dict[Chain, ChainStatus] = {
    Chain.STELLAR: ChainStatus.LIVE,
    Chain.EVM: ChainStatus.LIVE,
    Chain.SOLANA: ChainStatus.LIVE,
    Chain.CANTON: ChainStatus.PLANNED,
}

CHAIN_DEFAULT_MODE: dict[Chain, SettlementMode] = {
    Chain.STELLAR: _M1,
    Chain.EVM: _M2,
    Chain.SOLANA: _M3,
    Chain.CANTON: _M2,
}


def parse_custody(text: str) -> ParticipantCustody | None:
    """The custody model a wire value names (``self_custody`` included), or ``None``."""
    alias = _CUSTODY_ALIASES.get(text)
    if alias is not None:
        return alias
    return ParticipantCustody(text) if text in CUSTODY_INPUTS else None


@frozen
class Step:
    order: int  # 1-based
    title: str
    url: str


@frozen
class IntegrationPath:
    """The Integration path result (spec, "Integration path result")."""

    derived_mode: SettlementMode
    custody_compatible: bool
    chain_status: ChainStatus
    steps: tuple[Step, ...]


@frozen
class _Row:
    title: str
    url: str
    modes: tuple[SettlementMode, ...] = _ALL_MODES


_ISSUER = "/api/v1/issuers/{issuerId}"
_APPLY = _Row("Apply for sandbox access and your first API key", "/api/v1/onboarding/applications")
_STATUS = _Row("Check the sandbox status before sending transactions", "/api/v1/system/status")
_WEBHOOKS = _Row("Subscribe to signed transaction webhooks", "/api/v1/webhooks")
_TEAM = _Row("Invite your team", "/api/v1/team/invitations")

#: The steps of each role, in order; a row with ``modes`` appears only in those modes.
_STEPS: dict[IntegratorRole, tuple[_Row, ...]] = {
    IntegratorRole.PARTICIPANT: (
        _APPLY,
        _STATUS,
        _WEBHOOKS,
        _Row("Initiate a redeem or swap", "/api/v1/transactions"),
        _Row("Poll the transaction until terminal is true", "/api/v1/transactions/{id}"),
        _Row("Rehearse rejection, failure and silence with conformance scenarios",
             "/api/v1/conformance/run", _INSTRUCTED),
        _Row("Follow parked transactions through recovery",
             "/api/v1/transactions/{id}/recovery-status"),
        _TEAM,
    ),
    IntegratorRole.ISSUER: (
        _APPLY,
        _STATUS,
        _Row("Declare your capability profile", f"{_ISSUER}/capabilities"),
        _Row("Add the operator's key as an on-chain co-signer and verify the delegation",
             f"{_ISSUER}/custody/verify-delegation", (_M1,)),
        _Row("Serve burn instructions at your apiBaseUrl", "{apiBaseUrl}/burn-instructions",
             _INSTRUCTED),
        _Row("Serve mint instructions at your apiBaseUrl", "{apiBaseUrl}/mint-instructions",
             _INSTRUCTED),
        _Row("Move assets only on the execute call", "{apiBaseUrl}/instructions/{id}/execute",
             (_M2,)),
        _Row("Serve the refund endpoint for expired instructions",
             "{apiBaseUrl}/treasury/refunds", (_M3,)),
        _Row("Run the issuer conformance suite", f"{_ISSUER}/conformance/run", _INSTRUCTED),
        _Row("Read the conformance results", f"{_ISSUER}/conformance/results", _INSTRUCTED),
        _Row("Generate a reserve proof", "/api/v1/reserves/{issuerId}/proof/generate"),
        _WEBHOOKS,
        _TEAM,
    ),
    IntegratorRole.ADMINISTRATOR: (
        _STATUS,
        _TEAM,
        _Row("Mint sandbox agents with mandates", "/api/v1/sandbox/agents"),
        _WEBHOOKS,
        _Row("Arm conformance scenarios on your transactions", "/api/v1/conformance/run",
             _INSTRUCTED),
    ),
}


def _mode(role: IntegratorRole, chain: Chain, commit_point: CommitPoint | None,
          pre_burn_transfer_required: bool) -> SettlementMode:
    if role is IntegratorRole.ISSUER and commit_point is not None:
        return derive_mode(commit_point, pre_burn_transfer_required)
    return CHAIN_DEFAULT_MODE[chain]


def integration_path(role: IntegratorRole, custody: ParticipantCustody, chain: Chain,
                     commit_point: CommitPoint | None = None,
                     pre_burn_transfer_required: bool = False) -> IntegrationPath:
    """The integration path for these inputs; ``commit_point`` only for an issuer."""
    assert commit_point is None or role is IntegratorRole.ISSUER, "commitPoint is an issuer's"
    mode = _mode(role, chain, commit_point, pre_burn_transfer_required)
    compatible = not (role is IntegratorRole.ISSUER and mode is _M1
                      and custody is ParticipantCustody.CAAS)
    rows = [row for row in _STEPS[role] if mode in row.modes]
    steps = tuple(Step(order, row.title, row.url) for order, row in enumerate(rows, start=1))
    return IntegrationPath(mode, compatible, CHAIN_STATUS[chain], steps)
