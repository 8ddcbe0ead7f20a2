"""What a sim component needs of the run it belongs to: the seams below ``World``.

Public names: ``Clock``, ``Engine``.

``Clock`` is virtual time and its scheduler: the SimPy ``Environment`` the component
schedules on (``timeout``, ``event``, ``process``), the time in whole milliseconds
(``now_ms``) and the epoch those milliseconds count from (``epoch_ms``, Unix ms; ``iso``
renders an instant). ``Engine`` adds what every component that writes to the run shares:
the event log, the named random streams and the id factory.

A component whose needs go beyond these names them in a protocol of its own, beside it
(``custody.CustodyWorld``, ``inbox.InboxWorld``, ``issuer.IssuerWorld``,
``saga_world.SagaWorld``, ``webhook_channel.ChannelWorld``), listing exactly the registries and
lookups it reads; so this module stays at the bottom of the package, importing only the
kernel-level pieces (``simpy``, ``eventlog``, ``streams``). ``World`` (``sim/world.py``)
is the one place that wires them: it satisfies every one of these protocols and hands
itself to each component it builds. A component therefore reads ``env``, ``log`` and
``now_ms`` exactly as before (no extra object, no extra call per event); the protocol
only fixes, and ``mypy`` checks, how much of the run each component may reach, as SimPy
hands an ``Environment``, not a whole program, to what it schedules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import simpy

    from clearing_sim.sim.eventlog import EventLog
    from clearing_sim.sim.streams import IdFactory, Streams

__all__ = ["Clock", "Engine"]


class Clock(Protocol):
    """Virtual time: the scheduler and the clock, in whole ms from ``epoch_ms``."""

    @property
    def env(self) -> simpy.Environment: ...

    @property
    def now_ms(self) -> int: ...

    @property
    def epoch_ms(self) -> int: ...

    def iso(self, at_ms: int | None = None) -> str:
        """``at_ms`` (default: now) as the wire's ISO-8601 UTC instant."""
        ...


class Engine(Clock, Protocol):
    """The clock plus the run's log, random streams and id factory."""

    @property
    def log(self) -> EventLog: ...

    @property
    def streams(self) -> Streams: ...

    @property
    def ids(self) -> IdFactory: ...
