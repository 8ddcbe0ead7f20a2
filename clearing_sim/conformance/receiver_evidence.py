"""What the receiver kit saw, timed on one clock: each delivery it sent and its answer, each
fetch the receiver made (from the stage), and the receiver's view through its probe.

Public names: ``PROBE_EVERY_S``, ``PROCESS_WITHIN_S``, ``Attempt``, ``Change``, ``Observer``,
``ProbeRead``, ``fetches_between``, ``folded``.

Every instant is ``time.monotonic()`` in the kit's process: an ``Attempt`` is sent at
``sent_s`` and answered at ``answered_s``; the stage stamps each ``Fetch`` as the shim
answers it (``Fetch.at_s``); a ``ProbeRead`` is answered at ``answered_s``. A fetch is
credited to a delivery only when it lies between the delivery's sending and the instant
that matters (its answer, a change of view, the time limit): never by order of arrival.

Guarantee 3 says the receiver fetches the transaction "after each delivery before changing
its own state"; it says nothing of when the answer goes out. So the kit judges:

- the fetch: a ``GET /api/v1/transactions/{id}`` answered 200 after the delivery was sent
  and at most ``PROCESS_WITHIN_S`` after its answer (``fetches_between``);
- the state, through the probe (``Observer``): the n-th change of the receiver's view of a
  transaction is seen only once the receiver has made n fetches of it (200) since the kit's
  first delivery about it (a receiver whose every state comes from a fetch cannot change it
  more often than it fetched), and the view ends equal to the service's within
  ``PROCESS_WITHIN_S`` of the last answer.

A receiver that answers only after fetching is told, as advice, that this is the safer
order (a 2xx is its last chance of a redelivery); it is not a failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from attrs import define, field, frozen

from clearing_sim.conformance.receiver_stage import Fetch
from clearing_sim.conformance.report import Exchange
from clearing_sim.webhooks import TransactionView

__all__ = ["PROBE_EVERY_S", "PROCESS_WITHIN_S", "Attempt", "Change", "Observer", "ProbeRead",
           "fetches_between", "folded"]

#: How long after its answer a receiver has to fetch a new event's transaction and show the
#: service's view of it through the probe (a receiver that acknowledges first and processes
#: from a queue included). Overridden per run by ``KitOptions.process_within_s``.
PROCESS_WITHIN_S = 10.0
PROBE_EVERY_S = 0.05  # while waiting for a view to come right


@frozen
class Attempt:
    """One POST of a delivery and its answer (``status`` None: no answer)."""

    event_id: str
    tx_id: str
    exchange: Exchange
    status: int | None
    sent_s: float
    answered_s: float

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def elapsed_s(self) -> float:
        return self.answered_s - self.sent_s

    def answer(self) -> str:
        return str(self.status) if self.status is not None else str(self.exchange.error)


@frozen
class ProbeRead:
    """One GET of the probe: the view (None: 404, no view), or ``usable`` False when the
    answer was neither a view nor a 404 (the probe contract)."""

    tx_id: str
    view: TransactionView | None
    usable: bool
    exchange: Exchange
    answered_s: float


@frozen
class Change:
    """A change of the receiver's view seen by a probe read; ``fetch`` is the fetch it rests
    on (None: more changes than fetches since the kit's first delivery)."""

    tx_id: str
    before: TransactionView | None
    after: TransactionView | None
    read: ProbeRead
    fetch: Fetch | None


def fetches_between(fetches: Iterable[Fetch], tx_id: str, since_s: float, until_s: float,
                    status: int | None = 200) -> list[Fetch]:
    """The fetches of ``tx_id`` answered in ``[since_s, until_s]`` (of ``status``; None:
    any), in order."""
    return [f for f in fetches if f.transaction_id == tx_id and since_s <= f.at_s <= until_s
            and (status is None or f.status == status)]


def folded(items: Iterable[str]) -> list[str]:
    """Each distinct item once, in first-seen order, with `` (×n)`` when it repeats."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return [item if n == 1 else f"{item} (×{n})" for item, n in counts.items()]


Probe = Callable[[str], Awaitable[ProbeRead]]


@define
class Observer:
    """The receiver's view of each staged transaction through the probe, read before the
    first delivery about it, after each new delivery's answer and while waiting for the
    view to come right; each change of view is checked against the fetches before it."""

    probe: Probe
    fetches: list[Fetch]  # the stage's, growing as the shim answers
    views: dict[str, TransactionView | None] = field(factory=dict)  # last usable read
    first_sent_s: dict[str, float] = field(factory=dict)
    changes: list[Change] = field(factory=list)
    last_reads: dict[str, ProbeRead] = field(factory=dict)
    unusable: list[ProbeRead] = field(factory=list)
    reads: int = 0

    async def read(self, tx_id: str) -> ProbeRead:
        read = await self.probe(tx_id)
        self.reads += 1
        self.last_reads[tx_id] = read
        if not read.usable:
            self.unusable.append(read)
            return read
        if tx_id not in self.views:  # the baseline, before the kit's first delivery
            self.views[tx_id] = read.view
            return read
        before = self.views[tx_id]
        if read.view != before:
            self.views[tx_id] = read.view
            self.changes.append(Change(tx_id, before, read.view, read, self._fetch_for(read)))
        return read

    def delivered(self, attempt: Attempt) -> None:
        self.first_sent_s.setdefault(attempt.tx_id, attempt.sent_s)

    def _fetch_for(self, read: ProbeRead) -> Fetch | None:
        """The n-th 200 fetch of the transaction since the kit's first delivery about it, for
        the n-th change seen (None: there is none yet)."""
        since = self.first_sent_s.get(read.tx_id)
        if since is None:
            return None
        n = sum(c.tx_id == read.tx_id for c in self.changes)  # changes before this one
        fetched = fetches_between(self.fetches, read.tx_id, since, read.answered_s)
        return fetched[n] if n < len(fetched) else None

    @property
    def broken(self) -> bool:
        """Whether the probe gave an answer outside its contract: the kit stops reading it
        after each delivery (a probe that hangs would cost the time limit each time)."""
        return bool(self.unusable)
