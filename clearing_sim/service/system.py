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
  hidden behind the issuer's processing) are not sampled.
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

from collections.abc import Sequence
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
from clearing_sim.sim.eventlog import Record

__all__ = ["ISSUER_ONLY_FIELDS", "LATENCY_WINDOW", "ROUTES", "path_wire", "read_custody",
           "read_issuer_terms", "recent_latency_ms"]

LATENCY_WINDOW = 20
ISSUER_ONLY_FIELDS = ("commitPoint", "preBurnTransferRequired")
OPERATIONAL = "operational"

# Records after which the saga or the issuer starts its next ledger or RTGS operation at once.
_START_KINDS = ("transaction.state", "saga.step", "saga.event", "saga.instruction_sent",
                "issuer.instruction")
_START_FAMILIES = ("ledger.", "rtgs.")
# A record after which the next operation starts only after hidden processing (a refund) or
# after the RTGS's closed hours: neither is the scheme's answer time.
_UNTIMED_KINDS = ("issuer.request", "rtgs.closed_wait")


# status -----------------------------------------------------------------------------------
def recent_latency_ms(records: Sequence[Record], family: str,
                      window: int = LATENCY_WINDOW) -> int | None:
    """Mean duration of the last ``window`` operations of ``family`` (``ledger.``, ``rtgs.``).

    Walks the log backwards. An operation's record (carrying its ``transactionId``) ends it;
    the closest earlier start record of the same transaction began it."""
    samples: list[int] = []
    open_ends: dict[str, list[int]] = {}  # transaction → end times awaiting their start
    cancelled_at: dict[str, int] = {}
    for record in reversed(records):
        tx = record.get("transactionId")
        if not isinstance(tx, str):
            continue
        kind = record.kind
        if kind == "transaction.state" and record.get("trigger") == "cancel":
            cancelled_at[tx] = record.at_ms
        starts = (kind in _START_KINDS or kind.startswith(_START_FAMILIES)) \
            and kind not in _UNTIMED_KINDS
        if tx in open_ends and (starts or kind in _UNTIMED_KINDS):
            ends = open_ends.pop(tx)
            if starts:
                samples.extend(end - record.at_ms for end in ends)
        collecting = len(samples) + sum(len(e) for e in open_ends.values()) < window
        instant = kind == "ledger.return" and cancelled_at.get(tx) == record.at_ms
        if kind.startswith(family) and collecting and not instant:
            open_ends.setdefault(tx, []).append(record.at_ms)
        if not collecting and not open_ends:
            break
    if not samples:
        return None
    samples = samples[:window]
    return (2 * sum(samples) + len(samples)) // (2 * len(samples))  # rounded half up


def status(ctx: Context) -> Reply:
    world = ctx.world
    records = world.log.select()
    stalled = sum(1 for tx in world.transactions if tx.parked)
    return Reply(200, {
        "checkedAt": world.iso(),
        "engineStatus": OPERATIONAL,
        "engineStalledJobs": stalled,
        "onChainStatus": OPERATIONAL,
        "onChainLatencyMs": recent_latency_ms(records, "ledger."),
        "rtgsConnection": world.rtgs.connection_state(),
        "rtgsLatencyMs": recent_latency_ms(records, "rtgs."),
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
