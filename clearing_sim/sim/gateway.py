"""The issuer-gateway seam: what the engine asks of an issuer's gateway, whoever answers.

Public names: ``Gateway``.

Two implementations: the simulated gateway (``clearing_sim.sim.issuer.IssuerGateway``, the
default, on virtual time) and the HTTP gateway (``clearing_sim.gateway.client.HttpGateway``,
a real issuer's ``apiBaseUrl`` called over mTLS). The saga, the inbox, the world and the
conformance suite reach an issuer only through these members, so either can stand behind
``World.issuers``. Each route is a SimPy generator: it may take virtual time (the simulated
gateway's latencies) or none (a real call answered at the virtual instant it is made).
"""

from __future__ import annotations

from collections.abc import Generator
from decimal import Decimal
from typing import Any, Protocol

import simpy

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.money import Money
from clearing_sim.domain.profile import CustodyModel, FeedbackChannel, SettlementMode
from clearing_sim.sim.issuer import Instruction

__all__ = ["Gateway"]

Proc = Generator[simpy.Event, Any, Any]


class Gateway(Protocol):
    """An issuer's gateway as the engine sees it (spec, "Issuer-side contract")."""

    issuer_id: str
    webhook_secret: str  # issued to the issuer for SIGNED_WEBHOOK (Authentication 8)
    instructions: dict[str, Instruction]  # the instructions this service sent, by id

    def treasury_for(self, member_id: str, custody: CustodyModel) -> str:
        """The issuer wallet a Mode 3 pre-burn transfer goes to."""
        ...

    def arm(self, transaction_id: str, outcome: Outcome) -> None:
        """Make the transaction's next instruction event ``outcome`` (conformance)."""
        ...

    def trigger_amount(self, outcome: Outcome) -> Decimal | None:
        """An amount that makes the gateway answer ``outcome`` by itself, when it honours
        trigger values instead of being armed; None when arming is enough."""
        ...

    def forget(self, transaction_id: str) -> list[str]:
        ...

    def post_instruction(self, kind: str, body: dict[str, str], mode: SettlementMode,
                         feedback: tuple[FeedbackChannel, ...]) -> Proc:
        """POST /burn-instructions or /mint-instructions → ``Snapshot``."""
        ...

    def get(self, instruction_id: str) -> Proc:
        """GET /instructions/{id} → ``Snapshot``."""
        ...

    def read(self, instruction_id: str) -> simpy.Event:
        """``get`` as an event that succeeds with the ``Snapshot`` (the saga waits on it
        beside its deadline; a read it stops waiting for still completes)."""
        ...

    def execute(self, instruction_id: str) -> Proc:
        """POST /instructions/{id}/execute (Mode 2) → ``Snapshot``."""
        ...

    def refund(self, transaction_id: str, reason: str, refund_to: str, from_wallet: str,
               money: Money) -> Proc:
        """POST /treasury/refunds (Mode 3) → ``RefundResult``."""
        ...

    def expire(self, instruction_id: str) -> bool:
        """Close the instruction so it never moves anything; False if it already moves."""
        ...
