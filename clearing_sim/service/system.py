"""System and tools: the status check and the public integration-path tool.

Public names: ``ROUTES``, ``ISSUER_ONLY_FIELDS``, ``LATENCY_WINDOW``, ``path_wire``,
``read_custody``, ``read_issuer_terms``, ``recent_latency_ms``.

``GET /api/v1/system/status`` takes either credential (a sandbox API key, as the spec says,
or a tenant-admin portal session) and no capability: every caller must be able to run the
check the spec asks for before sending transactions. It is served in production too. Its
figures are read from the world, never invented (docs/semantics.md):

- ``engineStalledJobs``: transactions parked and awaiting an operator.
- ``onChainLatencyMs`` / ``rtgsLatencyMs``: the mean, in whole milliseconds, over the last
  ``LATENCY_WINDOW`` ledger (``ledger.*``) or RTGS (``rtgs.*``) operations in the log, of the
  time from the saga or issuer record that started each operation to the operation's own
  record; ``null`` before any. A cancel's instant return and an issuer refund (whose start is
  hidden behind the issuer's processing) are not sampled. ``recent_latency_ms`` (from
  ``sim.gauges``) is that definition, a walk back over the log; the route reads the same
  figure kept as the log grows (``World.operation_times``).
- ``engineStatus`` and ``onChainStatus`` ``operational``; ``rtgsConnection`` is the adapter's
  state (``connected``: the mock adapter is ready); with an RTGS operating calendar (beyond
  the spec), ``closed`` while the scheme takes no settlement (outside [opens, closes) of an
  operating day). A wait for the opening (``rtgs.closed_wait``) is not an RTGS latency: the
  operation after it is not sampled.

``POST /api/v1/tools/integration-path`` is public (spec, Authentication 4). Its body is the
spec's ``role``, ``custodyModel`` and ``chain``, plus, for an issuer only, the optional
``commitPoint`` and ``preBurnTransferRequired`` an onboarding application carries, so both
doors take the same inputs and answer the same derivation
(``clearing_sim.domain.integration``). ``read_issuer_terms`` is that shared reading.
"""

from __future__ import annotations

from typing import Any

from clearing_sim.domain.integration import (
    CUSTODY_INPUTS,
    Chain,
    IntegrationPath,
    IntegratorRole,
    ParticipantCustody,
    integration_path,
    parse_custody,
)
from clearing_sim.domain.profile import CommitPoint
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Context, Reply, Route
from clearing_sim.sim.gauges import LATENCY_WINDOW, recent_latency_ms

__all__ = ["ISSUER_ONLY_FIELDS", "LATENCY_WINDOW", "ROUTES", "path_wire", "read_custody",
           "read_issuer_terms", "recent_latency_ms"]

ISSUER_ONLY_FIELDS = ("commitPoint", "preBurnTransferRequired")
OPERATIONAL = "operational"


# status -----------------------------------------------------------------------------------
def status(ctx: Context) -> Reply:
    """Its figures are running counts the world keeps as it logs (``sim.gauges``, the book's
    ``parked_count``): the check costs the same in a world of any age."""
    world = ctx.world
    times = world.operation_times
    return Reply(200, {
        "checkedAt": world.iso(),
        "engineStatus": OPERATIONAL,
        "engineStalledJobs": world.transactions.parked_count,
        "onChainStatus": OPERATIONAL,
        "onChainLatencyMs": times.mean_ms("ledger."),
        "rtgsConnection": world.rtgs.connection_state(),
        "rtgsLatencyMs": times.mean_ms("rtgs."),
    })


# the integration path ---------------------------------------------------------------------
def read_custody(f: Fields) -> ParticipantCustody | None:
    """``custodyModel``: ``self-custody``, ``mpc``, ``caas`` (``self_custody`` accepted)."""
    text = f.text("custodyModel", choices=CUSTODY_INPUTS)
    return None if text is None else parse_custody(text)


def read_issuer_terms(f: Fields, role: IntegratorRole | None, *, commit_point_required: bool
                      ) -> tuple[CommitPoint | None, bool, tuple[str, ...]]:
    """An issuer's ``commitPoint`` and ``preBurnTransferRequired``, and the fields refused as
    not applicable (to pass to ``Fields.done``).

    Sent with another role they are ``field_not_applicable``; ``preBurnTransferRequired`` is
    required with ON_INSTRUCTION and not applicable otherwise (it decides Mode 2 vs 3 only)."""
    present = [name for name in ISSUER_ONLY_FIELDS if f.obj.get(name) is not None]
    if role is not None and role is not IntegratorRole.ISSUER:
        for name in present:
            f.problem(name, "field_not_applicable",
                      f"{f.path(name)} applies to role issuer only, not {role.value}")
        return None, False, ISSUER_ONLY_FIELDS
    text = f.text("commitPoint", required=commit_point_required,
                  choices=[c.value for c in CommitPoint])
    commit_point = None if text is None else CommitPoint(text)
    commit_fault = commit_point is None and ("commitPoint" in present or commit_point_required)
    if commit_point is CommitPoint.ON_INSTRUCTION or commit_fault:
        pre_burn = f.flag("preBurnTransferRequired", required=commit_point is not None)
        return commit_point, bool(pre_burn), ()
    if "preBurnTransferRequired" in present:
        f.problem("preBurnTransferRequired", "field_not_applicable",
                  f"{f.path('preBurnTransferRequired')} applies only when commitPoint is "
                  "ON_INSTRUCTION")
        return commit_point, False, ("preBurnTransferRequired",)
    f.flag("preBurnTransferRequired", required=False)
    return commit_point, False, ()


def path_wire(path: IntegrationPath) -> dict[str, Any]:
    return {
        "derivedMode": path.derived_mode.value,
        "custodyCompatible": path.custody_compatible,
        "chainStatus": path.chain_status.value,
        "steps": [{"order": s.order, "title": s.title, "url": s.url} for s in path.steps],
    }


def derive_path(ctx: Context) -> Reply:
    f = ctx.fields()
    role_text = f.text("role", choices=[r.value for r in IntegratorRole])
    role = None if role_text is None else IntegratorRole(role_text)
    custody = read_custody(f)
    chain = f.text("chain", choices=[c.value for c in Chain])
    commit_point, pre_burn, not_applicable = read_issuer_terms(f, role,
                                                              commit_point_required=False)
    f.done(*not_applicable)
    assert role is not None and custody is not None and chain is not None
    return Reply(200, path_wire(integration_path(role, custody, Chain(chain), commit_point,
                                                 pre_burn)))


ROUTES: tuple[Route, ...] = (
    Route("GET", "/api/v1/system/status", status,
          "engine, on-chain and RTGS status; run it before sandbox transactions"),
    Route("POST", "/api/v1/tools/integration-path", derive_path,
          "the settlement mode, custody fit and steps for a role, custody model and chain",
          public=True),
)
