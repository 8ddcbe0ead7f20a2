"""What a scenario expects, as typed values: matchers, facts, points in time and expectations.

Public names: ``Balance``, ``Conservation``, ``Deliveries``, ``Digest``, ``Events``,
``Expectation``, ``Fact``, ``LogCount``, ``Matcher``, ``RECEIVER_COUNTS``, ``ReceiverView``,
``ResourceState``, ``ResponseError``, ``ResponseField``, ``ResponseHeader``, ``ResponseStatus``,
``Site``, ``TimePoint``, ``Timing``, ``TransactionState``.

Strings may hold ``${…}`` references (``clearing_sim.scenario.templates``); they stay
unresolved here and are substituted by the runner when the step runs. Every expectation
carries its ``Site``: the line, column and field path it was written at, which results quote.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from attrs import frozen

__all__ = ["RECEIVER_COUNTS", "Balance", "Conservation", "Deliveries", "Digest", "Events",
           "Expectation", "Fact", "LogCount", "Matcher", "ReceiverView", "ResourceState",
           "ResponseError", "ResponseField", "ResponseHeader", "ResponseStatus", "Site",
           "TimePoint", "Timing", "TransactionState"]

Pairs = tuple[tuple[str, Any], ...]


@frozen
class Site:
    """Where something was written: 1-based line and column, and its field path."""

    line: int
    column: int
    field: str


@frozen
class Matcher:
    """Checks on one value, all of which must hold: ``(("equals", 201),)``, ``(("ge", 1),)``.

    Check names: equals, not, in, not_in, matches, exists, length, contains, gt, ge, lt, le,
    type (the schema's ``checks``)."""

    checks: Pairs

    @classmethod
    def of(cls, raw: Any) -> Matcher:
        """A scalar or list means "equals"; a mapping is a set of named checks."""
        if isinstance(raw, dict):
            return cls(tuple(raw.items()))
        return cls((("equals", raw),))


@frozen
class Fact:
    """A fact in the event log whose virtual time a step can wait for or measure from.

    Exactly one of ``event`` (a public event of ``transaction``), ``record`` (any log record
    kind, optionally of ``transaction`` and matching ``where``), ``step`` (when the named step
    ran) or ``attempt`` (webhook attempt n to ``webhook``). ``nth`` picks among several
    matches: 1 the first, -1 the last."""

    site: Site
    event: str | None = None
    record: str | None = None
    step: str | None = None
    attempt: int | None = None
    transaction: str | None = None
    webhook: str | None = None
    where: Pairs = ()
    nth: int = 1


@frozen
class TimePoint:
    """A virtual time: ``at_ms`` after the epoch, or ``offset_ms`` after a fact's time."""

    at_ms: int | None = None
    fact: Fact | None = None
    offset_ms: int = 0


# responses of the step's own call ---------------------------------------------------------
@frozen
class ResponseStatus:
    site: Site
    matcher: Matcher


@frozen
class ResponseHeader:
    site: Site
    name: str
    matcher: Matcher


@frozen
class ResponseField:
    site: Site
    path: str
    matcher: Matcher


@frozen
class ResponseError:
    """One error of the response's ``errors[]`` has all of these fields and values."""

    site: Site
    fields: Pairs  # (("code", "transaction_settled"), ("param", None), …)


# state of the world ----------------------------------------------------------------------
@frozen
class TransactionState:
    """``GET /api/v1/transactions/{id}`` (as ``as_``, default the initiator) matches."""

    site: Site
    id: str
    fields: tuple[tuple[str, Matcher], ...]
    as_: str | None = None
    credential: str | None = None


@frozen
class ResourceState:
    """``GET {get}`` as ``as_`` answers a status and fields that match."""

    site: Site
    get: str
    fields: tuple[tuple[str, Matcher], ...] = ()
    status: Matcher | None = None
    as_: str | None = None
    credential: str | None = None


@frozen
class Balance:
    """A participant's balance: ``account`` is ``rtgs`` or an asset code (its wallet)."""

    site: Site
    participant: str
    account: str
    amount: Decimal


@frozen
class Digest:
    """The event log's digest, now: the run so far is the very run that was recorded."""

    site: Site
    digest: str


@frozen
class Conservation:
    """Every asset's supply = Σ balances + Σ locked; the RTGS total is what it was at start."""

    site: Site


@frozen
class Timing:
    """The time from ``after`` (default: the start) to ``of`` equals / is within bounds.

    ``of`` before ``after`` (a negative interval) fails, whatever the bounds, unless
    ``allow_negative``: then the signed interval is held to ``at_most`` alone."""

    site: Site
    of: Fact
    after: Fact | None = None
    equals_ms: int | None = None
    at_least_ms: int | None = None
    at_most_ms: int | None = None
    allow_negative: bool = False

    @property
    def names_last(self) -> bool:
        """Whether ``of`` or ``after`` picks the last match (``nth: last``): such a check is
        judged when the run ends, the last match being the run's last."""
        return any(fact is not None and fact.nth < 0 for fact in (self.of, self.after))


@frozen
class Events:
    """The public events of a transaction, in log order."""

    site: Site
    transaction: str
    equals: tuple[str, ...] | None = None
    includes: tuple[str, ...] | None = None  # in this order, others may come between
    excludes: tuple[str, ...] | None = None


@frozen
class LogCount:
    """How many log records of ``record`` (matching ``where``) there are."""

    site: Site
    record: str
    where: Pairs = ()
    count: Matcher = Matcher((("ge", 1),))


@frozen
class Deliveries:
    """What one subscription's deliveries did, optionally only those of one transaction and
    one event type: the types delivered in order, and for the one delivery picked, its
    attempt count, each attempt's offset from the first and answer, and its outcome."""

    site: Site
    webhook: str
    transaction: str | None = None
    event: str | None = None
    types: tuple[str, ...] | None = None
    attempts: Matcher | None = None
    offsets_ms: tuple[int, ...] | None = None
    statuses: tuple[int | None, ...] | None = None  # None: lost or timed out, no answer
    outcome: str | None = None  # delivered | failed | dropped | pending


#: What a reference receiver counts (``ReceiverView.counts`` keys → its attributes).
RECEIVER_COUNTS = {"accepted": "accepted", "duplicates": "duplicates", "rejected": "rejected",
                   "fetchFailures": "fetch_failures"}


@frozen
class ReceiverView:
    """What the reference receiver behind a subscription believes and has counted."""

    site: Site
    webhook: str
    transaction: str | None = None
    state: tuple[tuple[str, Matcher], ...] = ()  # lifecycleStatus, parked, terminal
    counts: tuple[tuple[str, Matcher], ...] = ()  # RECEIVER_COUNTS keys


Expectation = (ResponseStatus | ResponseHeader | ResponseField | ResponseError
               | TransactionState | ResourceState | Balance | Conservation | Digest | Timing
               | Events
               | LogCount | Deliveries | ReceiverView)
