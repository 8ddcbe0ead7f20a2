"""The issuer-gateway seam: what the engine asks of an issuer's gateway, whoever answers.

Public names: ``ExternalCalls``, ``Gateway``.

Two implementations: the simulated gateway (``clearing_sim.sim.issuer.IssuerGateway``, the
default, on virtual time) and the HTTP gateway (``clearing_sim.gateway.client.HttpGateway``,
a real issuer's ``apiBaseUrl`` called over mTLS). The saga, the inbox, the world and the
conformance suite reach an issuer only through these members, so either can stand behind
``World.issuers``. Each route is a SimPy generator: it may take virtual time (the simulated
gateway's latencies) or none (a real call answered at the virtual instant it is made).

``ExternalCalls`` is how a real call leaves the engine without blocking whoever runs it:
with ``World.external`` set (the shim sets it), a real gateway hands each call out as a
piece of work and waits on its event; whoever steps the world (the shim's clock) sees
``pending``, stops stepping at that virtual instant, runs the work off its event loop, and
succeeds each event with its answer before stepping on, so virtual time does not move while
a real gateway works and the engine stays deterministic given the answers. With
``World.external`` None (the kit, ``clearing-sim run``) the call is made inside the step.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from decimal import Decimal
from typing import Any, Protocol

import simpy

from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.money import Money
from clearing_sim.domain.profile import CustodyModel, FeedbackChannel, SettlementMode
from clearing_sim.sim.issuer import Instruction

__all__ = ["ExternalCalls", "Gateway"]

Proc = Generator[simpy.Event, Any, Any]
Work = Callable[[], Any]


class ExternalCalls:
    """Work for the real world, each with the event its caller waits on, in the order
    submitted."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.pending: list[tuple[Work, simpy.Event]] = []

    def submit(self, work: Work) -> simpy.Event:
        """``work`` (no world access: it runs off the engine) and the event that will
        succeed with its result."""
        event = self.env.event()
        self.pending.append((work, event))
        return event

    def take(self) -> list[tuple[Work, simpy.Event]]:
        batch, self.pending = self.pending, []
        return batch

    @staticmethod
    def answer(batch: list[tuple[Work, simpy.Event]], results: list[Any]) -> None:
        """Succeed each event with its work's result (under the world lock, in order)."""
        for (_, event), result in zip(batch, results, strict=True):
            event.succeed(result)


class Gateway(Protocol):
    """An issuer's gateway as the engine sees it (spec, "Issuer-side contract")."""

    issuer_id: str
    webhook_secret: str  # issued to the issuer for SIGNED_WEBHOOK (Authentication 8)
    instructions: dict[str, Instruction]  # the instructions this service sent, by id

    def treasury_for(self, member_id: str, custody: CustodyModel) -> str:
        """The issuer wallet a Mode 3 pre-burn transfer goes to."""
        ...

    def arm(self, transaction_id: str, outcome: Outcome) -> None:
        """Make the transaction's next instruction event ``outcome`` (conformance). A real
        gateway's set-up call is handed to ``World.external`` when it is set, ahead of any
        call the engine makes after it."""
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

    def expire(self, instruction_id: str) -> Proc:
        """Close the instruction so it never moves anything → False if it already moves
        (a real gateway may first replay a never-answered POST to learn where it stands)."""
        ...
