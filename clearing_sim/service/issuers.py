"""Issuers: save the capability profile, and verify custody delegation on-chain.

Public names: ``ROUTES``, ``own_issuer``, ``saved_profile_wire``.

Both routes need ``manageIssuedAssets`` (issuer tenant admins) and act only on the caller's
own participant: any other ``issuerId`` (another participant, unknown, not a UUID) is 403
``not_own_participant`` (spec, Authentication 3), answered after the body's 400s
(``PRECEDENCE``). A save bumps ``profileVersion`` by one and applies only to transactions
started after it (spec, Versioning 3); a refused save changes nothing. The Saved profile
response carries the spec's fields plus, of ours, the derived ``settlementMode``, the other
saved fields (null when unset) and the ``issuingAccount`` the assets are issued from (the
account to verify delegation for). Verify-delegation reads any account on the named chain,
whatever the custody model: on-chain signers are public; each check is one
``custody.checked`` record.
"""

from __future__ import annotations

from typing import Any

from clearing_sim.domain.errors import Forbidden
from clearing_sim.domain.parties import Capability
from clearing_sim.domain.profile import IssuerProfile, Ledger, parse_profile
from clearing_sim.service.context import Context, Reply, Route
from clearing_sim.sim.custody import DelegationCheck, parse_account
from clearing_sim.sim.participants import Participant

__all__ = ["ROUTES", "own_issuer", "saved_profile_wire"]

_ACCOUNT_LENGTH_MAX = 100


def own_issuer(ctx: Context, param: str = "issuerId") -> Participant:
    """The caller's own participant, when the path's ``issuerId`` names it; else 403."""
    caller = ctx.caller
    if ctx.params[param] != caller.id:
        raise Forbidden.one(param, "not_own_participant",
                            f"{param} must be your own participant ({caller.id}); "
                            "issuer routes act only on the caller's own participant")
    return caller


def saved_profile_wire(ctx: Context, issuer: Participant) -> dict[str, Any]:
    """The Saved profile response for the issuer's current profile version."""
    profile: IssuerProfile = issuer.profile
    return {
        "issuerId": issuer.id,
        "profileVersion": issuer.profile_version,
        "commitPoint": profile.commit_point.value,
        "custodyModel": profile.custody_model.value,
        "feedbackChannel": [c.value for c in profile.feedback_channel],
        "fiatLeg": profile.fiat_leg.value,
        "ledger": profile.ledger.value,
        "effectiveFrom": ctx.world.iso(),
        "settlementMode": profile.mode.value,
        "preBurnTransferRequired": profile.pre_burn_transfer_required,
        "apiBaseUrl": profile.api_base_url,
        "mintDeliveryTarget": profile.mint_delivery_target,
        "finalityClass": profile.finality_class,
        "amountPrecision": profile.amount_precision,
        "approvalSlaSeconds": profile.approval_sla_s,
        "webhookUrl": profile.webhook_url,
        "refundUrl": profile.refund_url,
        "issuingAccount": issuer.issuing_account,
    }


def save_capabilities(ctx: Context) -> Reply:
    profile = parse_profile(ctx.body())
    issuer = own_issuer(ctx)
    ctx.world.save_profile(issuer.id, profile)  # 400 ledger_change refuses before any change
    return Reply(200, saved_profile_wire(ctx, issuer))


def _delegation_wire(check: DelegationCheck) -> dict[str, Any]:
    t = check.config.thresholds
    return {
        "verified": check.verified,
        "signers": [{"key": s.key, "weight": s.weight} for s in check.config.signers],
        "thresholds": {"low": t.low, "medium": t.medium, "high": t.high},
        "serviceOperatorKey": check.operator_key,
        "meetsPolicyRequirement": check.meets_policy,
        "chain": check.ledger.value,
        "accountId": check.account,
    }


def verify_delegation(ctx: Context) -> Reply:
    f = ctx.fields()
    chain = f.text("chain", choices=[ledger.value for ledger in Ledger])
    text = f.text("accountId", length_max=_ACCOUNT_LENGTH_MAX)
    account = None
    if chain is not None and text is not None:
        account = parse_account(Ledger(chain), text)
        if account is None:
            f.problem("accountId", "invalid_value",
                      f"accountId is not a well-formed {chain} account")
    f.done()
    issuer = own_issuer(ctx)
    assert chain is not None and account is not None
    check = ctx.world.custody.check(Ledger(chain), account)
    ctx.world.log.append("custody.checked", issuerId=issuer.id, ledger=chain, account=account,
                         verified=check.verified, meetsPolicyRequirement=check.meets_policy)
    return Reply(200, {**_delegation_wire(check), "checkedAt": ctx.world.iso()})


_MANAGE = (Capability.MANAGE_ISSUED_ASSETS,)
ROUTES: tuple[Route, ...] = (
    Route("PUT", "/api/v1/issuers/{issuerId}/capabilities", save_capabilities,
          "create or replace the caller's issuer capability profile", _MANAGE),
    Route("POST", "/api/v1/issuers/{issuerId}/custody/verify-delegation", verify_delegation,
          "check on-chain that the operator key co-signs an account", _MANAGE),
)
