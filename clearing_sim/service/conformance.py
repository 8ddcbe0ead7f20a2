"""Conformance arming (sandbox only): arm a simulated issuer outcome on a transaction.

Public names: ``ROUTES``, ``SCENARIOS``.

``POST /api/v1/conformance/run`` with ``scenario`` (``rejected``, ``failed``, ``silence``)
and ``transactionId`` arms that outcome on the transaction's next issuer instruction event
(``World.arm``; spec, "Conformance (sandbox only)" and States rules 1–3). Tenant-admin JWT
with ``runOwnConformancePack`` only; production answers 503 ``sandbox_unavailable``.
Refusals, in order: 400 (body: unknown fields, a scenario not in the list, a transactionId
that is not a UUID), 404 ``transaction_not_found`` (unknown or outside the caller's scope:
initiator or listed issuer), 409 ``conformance_suite_transaction`` (a transaction of an
issuer conformance run, which its suite arms), 409 ``transaction_terminal``, 409
``no_issuer_instruction`` (Mode 1, or every instruction complete), 409 ``issuer_decided``
(``rejected`` once every issuer approved: REJECTED never follows APPROVED). Arming again
before the event replaces the outcome.
"""

from __future__ import annotations

import re

from clearing_sim.domain.errors import NotAllowed, NotFound
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.parties import Capability, CredentialKind
from clearing_sim.service.context import Context, Reply, Route
from clearing_sim.service.issuer_conformance import suite_of
from clearing_sim.service.transactions import in_scope

__all__ = ["ROUTES", "SCENARIOS"]

#: The armable scenarios (spec table), each the issuer outcome it arms.
SCENARIOS: dict[str, Outcome] = {"rejected": Outcome.REJECTED, "failed": Outcome.FAILED,
                                 "silence": Outcome.SILENCE}
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def arm(ctx: Context) -> Reply:
    f = ctx.fields()
    scenario = f.text("scenario", choices=list(SCENARIOS))
    transaction_id = f.text("transactionId", length_max=64)
    if transaction_id is not None and not _UUID.fullmatch(transaction_id):
        f.problem("transactionId", "invalid_value", "transactionId must be a UUID string")
    f.done()
    assert scenario is not None and transaction_id is not None
    tx = ctx.world.transactions.get(transaction_id.lower())
    if tx is None or not in_scope(tx, ctx.caller.id):
        raise NotFound.one("transactionId", "transaction_not_found",
                           f"no transaction {transaction_id} in your scope")
    if suite_of(ctx).owns(tx):
        raise NotAllowed.one("transactionId", "conformance_suite_transaction",
                             f"transaction {tx.id} belongs to an issuer conformance run, "
                             "which arms its own outcomes")
    ctx.world.arm(tx.id, SCENARIOS[scenario])
    return Reply(200, {"transactionId": tx.id, "scenario": scenario, "armed": True})


ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/conformance/run", arm,
          "arm a simulated issuer outcome on a transaction's next instruction event",
          (Capability.RUN_OWN_CONFORMANCE_PACK,), (CredentialKind.TENANT_ADMIN,),
          sandbox_only=True),
)
