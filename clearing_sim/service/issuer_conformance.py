"""The issuer conformance suite routes: start a run, read its results (sandbox only).

Public names: ``ROUTES``, ``SuiteStore``, ``suite_of``, ``run_wire``.

``POST /api/v1/issuers/{issuerId}/conformance/run`` sends synthetic instructions to the
issuer's declared ``apiBaseUrl`` (the simulated gateway) through real synthetic transactions
(``clearing_sim.sim.conformance``) and answers 202: the run proceeds on virtual time and its
verdicts are read from ``GET .../conformance/results`` (the latest run). Both need an issuer
tenant admin (``runOwnConformancePack``, on a participant that holds
``manageIssuedAssets``) acting on its own participant. Refusals, in order: 403
``missing_capability`` (not an issuer admin), 400 (a body or query), 403
``not_own_participant``, then 409 ``profile_required``, ``conformance_unsupported`` (Mode 1),
``no_issued_asset``, ``conformance_run_in_progress``; results never run: 404
``conformance_run_not_found`` (docs/semantics.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clearing_sim.domain.errors import Forbidden, NotFound
from clearing_sim.domain.parties import Capability, CredentialKind
from clearing_sim.service.context import Context, Reply, Route
from clearing_sim.sim.conformance import ConformanceRun, ConformanceSuite

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["ROUTES", "SuiteStore", "run_wire", "suite_of"]


class SuiteStore:
    """The API's handle on its world's conformance suite (one per API, made on first use)."""

    def __init__(self, world: World) -> None:
        self.suite = ConformanceSuite(world)


def suite_of(ctx: Context) -> ConformanceSuite:
    return ctx.store(SuiteStore).suite


def run_wire(ctx: Context, run: ConformanceRun) -> dict[str, Any]:
    world = ctx.world

    def at(ms: int | None) -> str | None:
        return None if ms is None else world.iso(ms)

    return {
        "runId": run.run_id,
        "issuerId": run.issuer_id,
        "profileVersion": run.profile_version,
        "derivedMode": run.mode.value,
        "apiBaseUrl": run.api_base_url,
        "status": run.status.value,
        "passed": run.passed,
        "startedAt": at(run.started_at_ms),
        "completedAt": at(run.completed_at_ms),
        "scenarios": [{"name": s.name, "mandatory": True, "status": s.status.value,
                       "transactionId": s.transaction_id, "startedAt": at(s.started_at_ms),
                       "concludedAt": at(s.concluded_at_ms), "detail": s.detail}
                      for s in run.scenarios],
    }


def _own_issuer(ctx: Context) -> str:
    """The issuer id of the path, once it is the caller's own participant (else 403)."""
    issuer_id = ctx.params["issuerId"]
    if issuer_id != ctx.caller.id:
        raise Forbidden.one(None, "not_own_participant",
                            "the conformance suite runs only for the caller's own participant")
    return issuer_id


def _issuer_admin(ctx: Context) -> None:
    assert ctx.principal is not None
    if not ctx.principal.holds(Capability.MANAGE_ISSUED_ASSETS):
        raise Forbidden.one(None, "missing_capability",
                            "the issuer conformance suite is for stablecoin issuer tenant "
                            "admins (manageIssuedAssets)")


def run(ctx: Context) -> Reply:
    _issuer_admin(ctx)
    ctx.fields(empty_ok=True).done()
    issuer_id = _own_issuer(ctx)
    return Reply(202, run_wire(ctx, suite_of(ctx).start(issuer_id)))


def results(ctx: Context) -> Reply:
    _issuer_admin(ctx)
    issuer_id = _own_issuer(ctx)
    latest = suite_of(ctx).latest(issuer_id)
    if latest is None:
        raise NotFound.one(None, "conformance_run_not_found",
                           "no conformance run has been started for this issuer")
    return Reply(200, run_wire(ctx, latest))


_ADMIN = (CredentialKind.TENANT_ADMIN,)
_CAP = (Capability.RUN_OWN_CONFORMANCE_PACK,)
ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/issuers/{issuerId}/conformance/run", run,
          "run the issuer conformance suite against the declared apiBaseUrl", _CAP, _ADMIN,
          sandbox_only=True),
    Route("GET", "/api/v1/issuers/{issuerId}/conformance/results", results,
          "the latest conformance run: pass or fail per scenario", _CAP, _ADMIN,
          sandbox_only=True),
)
