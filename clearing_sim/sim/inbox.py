"""The service's inbound endpoint for issuer status webhooks.

Public names: ``ID_LOGGED_MAX``, ``InboxWorld``, ``IssuerInbox``.

A delivery is verified with the issuer's signing secret at the world's virtual time (the
spec's scheme and 300-second window). An unsigned or wrongly signed delivery is dropped,
logged and not retried. A valid one is only a prompt: it wakes the saga watching that
instruction, which then reads the instruction from the issuer before acting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import simpy

from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.domain.signing import verify
from clearing_sim.sim.seams import Engine

if TYPE_CHECKING:
    from clearing_sim.sim.gateway import Gateway

__all__ = ["ID_LOGGED_MAX", "InboxWorld", "IssuerInbox"]

#: of an id a dropped delivery named (its path's issuer id, its body's instruction id): an
#: anonymous caller must not make the log hold a megabyte per request
ID_LOGGED_MAX = 200


class InboxWorld(Engine, Protocol):
    """What the inbox reads of its run (``sim.seams``): the issuers' gateways (their signing
    secrets and instructions) and whether terminal transactions are forgotten."""

    @property
    def issuers(self) -> Mapping[str, Gateway]: ...

    @property
    def forget_terminal(self) -> bool: ...


class IssuerInbox:
    def __init__(self, world: InboxWorld) -> None:
        self.world = world
        self._prompts: dict[str, simpy.Event] = {}
        self._last_drop: tuple[str, str | None] | None = None

    def prompt(self, instruction_id: str) -> simpy.Event:
        """The event a saga waits on; already triggered if a prompt came since ``consume``."""
        event = self._prompts.get(instruction_id)
        if event is None:
            event = self._prompts[instruction_id] = self.world.env.event()
        return event

    def forget(self, instruction_id: str) -> None:
        self._prompts.pop(instruction_id, None)

    def consume(self, instruction_id: str) -> None:
        event = self._prompts.get(instruction_id)
        if event is not None and event.triggered:
            del self._prompts[instruction_id]

    def receive(self, issuer_id: str, signature: str | None, raw: bytes,
                now_s: int | None = None) -> bool:
        """``now_s``: the receiver's clock for the 300-second window; the world's virtual
        clock unless the delivery came from a real gateway (then its wall arrival time)."""
        return self._accept(issuer_id, signature, raw, _instruction_id(raw), now_s)

    def deliver(self, issuer_id: str, signature: str, raw: bytes, instruction_id: str) -> bool:
        """The simulated issuer's own delivery, on the world's clock: ``raw`` is the body it
        has just encoded around ``instruction_id``, so the id is taken as sent instead of
        parsed back out of ``raw``; the signature over ``raw`` is verified as any other."""
        return self._accept(issuer_id, signature, raw, instruction_id, None)

    def drop(self, issuer_id: str, instruction_id: str | None) -> None:
        """A webhook refused (unsigned, wrongly signed, stale, unknown issuer): all it does
        to the world is this record (so a journal keeps it as these two ids, not the body)."""
        self.world.log.append("issuer.webhook", issuerId=issuer_id,
                              instructionId=instruction_id, verified=False, outcome="dropped")
        self._last_drop = (issuer_id, instruction_id)

    def take_drop(self) -> tuple[str, str | None] | None:
        """The two ids of the last refusal since the last call (a door journals them)."""
        drop, self._last_drop = self._last_drop, None
        return drop

    def _accept(self, issuer_id: str, signature: str | None, raw: bytes,
                instruction_id: str | None, now_s: int | None) -> bool:
        world = self.world
        gateway = world.issuers.get(issuer_id)
        if now_s is None:
            now_s = (world.epoch_ms + world.now_ms) // 1000
        if gateway is None or instruction_id is None \
                or not verify(gateway.webhook_secret, signature, raw, now_s):
            self.drop(issuer_id[:ID_LOGGED_MAX],
                      None if instruction_id is None else instruction_id[:ID_LOGGED_MAX])
            return False
        world.log.append("issuer.webhook", issuerId=issuer_id,
                         instructionId=instruction_id, verified=True, outcome="prompt")
        if world.forget_terminal and instruction_id not in gateway.instructions:
            return True  # its transaction is over and forgotten: nobody waits on a prompt
        event = self._prompts.get(instruction_id)
        if event is None:
            event = self._prompts[instruction_id] = world.env.event()
        if not event.triggered:
            event.succeed()
        return True


def _instruction_id(raw: bytes) -> str | None:
    try:
        body = parse_untrusted(raw)
    except ValueError:
        return None
    value = body.get("instructionId") if isinstance(body, dict) else None
    return value if isinstance(value, str) else None
