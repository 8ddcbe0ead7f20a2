"""What a saga reads and moves of its run: its seam (``SagaWorld``), kept apart from the
orchestrator (``clearing_sim.sim.saga``) so each reads on its own.

Public names: ``SagaTimings``, ``SagaWorld``.

``World`` satisfies both (mypy checks it where it builds a ``Saga``); nothing here runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from clearing_sim.sim.seams import Engine

if TYPE_CHECKING:
    from clearing_sim.domain.profile import IssuerProfile
    from clearing_sim.domain.transaction import LegTerms, Transaction
    from clearing_sim.sim.book import TransactionBook
    from clearing_sim.sim.gateway import Gateway
    from clearing_sim.sim.gauges import RunningProcesses
    from clearing_sim.sim.inbox import IssuerInbox
    from clearing_sim.sim.ledger import ChainLedger
    from clearing_sim.sim.rtgs import RtgsAdapter

__all__ = ["SagaTimings", "SagaWorld"]


class SagaTimings(Protocol):
    """The run's settings a saga reads (``WorldConfig``)."""

    @property
    def intake_ms(self) -> int: ...

    @property
    def poll_interval_ms(self) -> int: ...


class SagaWorld(Engine, Protocol):
    """What a saga reads and moves of its run (``sim.seams``): the orchestrator needs many
    parts, so its seam names exactly those: the book it updates, the issuers' gateways and
    the inbox their prompts arrive at, the RTGS adapter, the count of running sagas, the
    legs' profiles and wallets, and how a terminal transaction is forgotten."""

    @property
    def config(self) -> SagaTimings: ...

    @property
    def transactions(self) -> TransactionBook: ...

    @property
    def issuers(self) -> Mapping[str, Gateway]: ...

    @property
    def issuer_inbox(self) -> IssuerInbox: ...

    @property
    def rtgs(self) -> RtgsAdapter: ...

    @property
    def running_sagas(self) -> RunningProcesses: ...

    @property
    def forget_terminal(self) -> bool: ...

    @property
    def keeps_parked(self) -> bool: ...

    def profile_of(self, terms: LegTerms) -> IssuerProfile: ...

    def source_wallet(self, tx: Transaction) -> tuple[ChainLedger, str]: ...

    def target_wallet(self, tx: Transaction) -> tuple[ChainLedger, str]: ...

    def forget(self, transaction_id: str) -> None: ...
