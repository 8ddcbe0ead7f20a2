"""A fault: forged issuer status webhooks sent to the service's inbox.

Public names: ``Forgery``, ``forge_issuer_webhook``, ``forged_issuer_webhooks``.

Spec, Issuer-side contract: a status webhook "unsigned or with a wrong signature is dropped,
logged and not retried", and a valid one is "only a prompt": the service reads the
instruction before acting. This module attacks both rules through the same door the genuine
issuer uses (``world.issuer_inbox.receive``), without changing how genuine webhooks work:

- ``UNSIGNED``: no ``Service-Signature`` header;
- ``WRONG_SIGNATURE``: a well-formed header whose ``v1`` signs another body;
- ``WRONG_SECRET``: the body signed, at the right time, with a secret that is not the issuer's;
- ``STALE``: signed with the issuer's secret but ``t`` more than 300 s ago (a replay);
- ``LYING_BODY``: signed correctly (an insider, or the issuer's own bug) with a status and an
  on-chain proof that are not true; it passes verification and is only a prompt, so the saga
  reads the instruction and acts on its true status alone.

Each injection is one ``fault.issuer_webhook`` record naming the forgery and what the body
claims; the inbox then logs its own ``issuer.webhook`` verdict.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import simpy

from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.domain.signing import REPLAY_WINDOW_S, signature_header

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["Forgery", "forge_issuer_webhook", "forged_issuer_webhooks"]


class Forgery(StrEnum):
    UNSIGNED = "unsigned"
    WRONG_SIGNATURE = "wrong_signature"
    WRONG_SECRET = "wrong_secret"
    STALE = "stale"
    LYING_BODY = "lying_body"


def _forged_body(world: World, instruction_id: str, status: InstructionStatus) -> bytes:
    """The issuer's body shape, claiming ``status`` with a made-up on-chain proof."""
    body = {"instructionId": instruction_id, "status": status.value,
            "onchain": {"txHash": "0x" + world.ids.hex("forgery", 32), "ledgerSequence": 1},
            "finalizedAt": world.iso()}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def forge_issuer_webhook(world: World, issuer_id: str, instruction_id: str, forgery: Forgery,
                         status: InstructionStatus = InstructionStatus.COMPLETED) -> bool:
    """Deliver one forged status webhook now; True when the inbox took it as a prompt."""
    raw = _forged_body(world, instruction_id, status)
    now_s = (world.epoch_ms + world.now_ms) // 1000
    secret = world.issuers[issuer_id].webhook_secret
    header: str | None
    if forgery is Forgery.UNSIGNED:
        header = None
    elif forgery is Forgery.WRONG_SIGNATURE:
        header = signature_header(secret, now_s, raw + b" ")  # signs another body
    elif forgery is Forgery.WRONG_SECRET:
        header = signature_header("whsec_" + world.ids.hex("forgery-secret", 24), now_s, raw)
    elif forgery is Forgery.STALE:
        header = signature_header(secret, now_s - REPLAY_WINDOW_S - 1, raw)
    else:
        header = signature_header(secret, now_s, raw)
    world.log.append("fault.issuer_webhook", issuerId=issuer_id, instructionId=instruction_id,
                     forgery=forgery.value, claimedStatus=status.value)
    return world.issuer_inbox.receive(issuer_id, header, raw)


def forged_issuer_webhooks(world: World, issuer_id: str, instruction_id: str,
                           forgeries: Sequence[Forgery], gap_ms: int = 1_000,
                           status: InstructionStatus = InstructionStatus.COMPLETED,
                           ) -> Generator[simpy.Event, Any, None]:
    """A SimPy process: the forgeries one after another, ``gap_ms`` apart (first at once)."""
    for i, forgery in enumerate(forgeries):
        if i:
            yield world.env.timeout(gap_ms)
        forge_issuer_webhook(world, issuer_id, instruction_id, forgery, status)
