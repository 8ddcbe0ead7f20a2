"""The world: everything mutable in one run, and the commands that act on it.

Public names: ``World``, ``WorldConfig``, ``Environment``.

A ``World`` owns the ``simpy.Environment`` (``sim.kernel.Kernel``: virtual time in integer
milliseconds from an epoch), the named random streams and id factory derived from the seed,
the registries (participants, transactions, sagas, ledgers, issuer gateways, the RTGS
adapter) and the event log. Two worlds in one process share nothing. The API layer drives a
world through the commands here (``initiate``, ``cancel``, ``arm``, ``resolve``,
``save_profile``) at its current virtual time, and moves time with ``run_until`` /
``advance``.

The world is the one place that wires the engine's components. Each component depends
only on the narrow protocol of what it uses (``sim.seams``: ``Clock``, ``Engine``; and the
component's own: ``custody.CustodyWorld``, ``inbox.InboxWorld``, ``issuer.IssuerWorld``,
``saga_world.SagaWorld``, ``webhook_channel.ChannelWorld``; the ledgers, the RTGS adapter, the
subscriptions and the receivers need only an ``Engine``), never on ``World``: the world
satisfies each and hands itself to what it builds, so none of them imports this module.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from functools import partial
from operator import attrgetter
from typing import IO, TYPE_CHECKING

from attrs import field, frozen

from clearing_sim.domain.calendar import OperatingCalendar, calendar_wire
from clearing_sim.domain.errors import InvalidRequest, NotAllowed
from clearing_sim.domain.fees import FeeSchedule, quote
from clearing_sim.domain.ids import CommandId, ParticipantId, TransactionId
from clearing_sim.domain.initiation import AssetRef, InitiateRequest, check_initiation
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.latency import Latency, LogNormal, Uniform
from clearing_sim.domain.lifecycle import LifecycleStatus, Trigger
from clearing_sim.domain.money import GBP, Asset, Money
from clearing_sim.domain.parties import ParticipantKind
from clearing_sim.domain.profile import IssuerProfile, Ledger
from clearing_sim.domain.saga import Saga as SagaView
from clearing_sim.domain.timefmt import parse_iso, render_iso
from clearing_sim.domain.transaction import (
    ChainState,
    FeeStatus,
    LegTerms,
    RtgsState,
    Side,
    Transaction,
    UseCase,
    cancel_action,
)
from clearing_sim.sim.book import TransactionArchive, TransactionBook
from clearing_sim.sim.collector import paced_collector
from clearing_sim.sim.custody import CustodyRegistry
from clearing_sim.sim.dns import DnsTable
from clearing_sim.sim.eventlog import EventLog, LogStore
from clearing_sim.sim.gateway import ExternalCalls, Gateway
from clearing_sim.sim.gauges import OperationTimes, RunningProcesses
from clearing_sim.sim.inbox import IssuerInbox
from clearing_sim.sim.issuer import IssuerBehaviour, IssuerGateway
from clearing_sim.sim.kernel import Kernel
from clearing_sim.sim.ledger import ChainLedger
from clearing_sim.sim.participants import Participant, ParticipantRegistry
from clearing_sim.sim.rtgs import RtgsAdapter
from clearing_sim.sim.saga import Saga
from clearing_sim.sim.streams import IdFactory, Streams
from clearing_sim.sim.subscriptions import SubscriptionRegistry
from clearing_sim.sim.webhook_channel import WebhookChannel

__all__ = ["Environment", "World", "WorldConfig"]

_FINALITY: dict[Ledger, Latency] = {
    Ledger.STELLAR: Uniform(4_000, 6_000),
    Ledger.EVM: LogNormal(13_000, 0.3, 60_000),
    Ledger.SOLANA: Uniform(400, 1_600),
}


class Environment(StrEnum):
    SANDBOX = "sandbox"
    PRODUCTION = "production"


@frozen
class WorldConfig:
    """Everything that shapes a run besides the participants and the script."""

    seed: int = 0
    epoch: str = "2026-01-01T00:00:00.000Z"
    environment: Environment = Environment.SANDBOX
    fees: FeeSchedule = FeeSchedule()
    intake_ms: int = 200  # received → in-flight: the saga's initial validation
    poll_interval_ms: int = 5_000  # POLLABLE_RESOURCE: how often the saga reads an instruction
    rtgs_latency: Latency = LogNormal(400, 0.3, 5_000)
    finality: dict[Ledger, Latency] = field(factory=lambda: dict(_FINALITY))
    #: the RTGS's business hours (beyond the spec); None: always open, as the spec's mock
    rtgs_calendar: OperatingCalendar | None = None
    #: seals key material (``IdFactory.key``); a served world's comes from the operator token
    key_secret: bytes = field(default=b"", repr=False)


class World:
    """``log_sink``: write the log there as it grows (same digest); ``retain_log=False``: keep
    no record in memory. ``forget_terminal``: drop a transaction's bookkeeping (the book entry,
    its saga, its issuer instructions, the channel's delivery history) once its saga has ended
    in a terminal state, so memory stays flat over long runs; the log is unchanged, but the
    API no longer finds the transaction and an operator cannot fix it.

    ``log_store`` and ``archive``: the history on disk (a served world's,
    ``clearing_sim.http.history``): the log's records go to the store in batches, and each
    terminal transaction is forgotten as with ``forget_terminal`` but into the archive, where
    the book still finds it; the API answers as from memory, the digest is the same. A parked
    transaction stays in memory until fixed (``keeps_parked``): the operator may fix it."""

    def __init__(self, config: WorldConfig | None = None, *,
                 log_sink: IO[str] | IO[bytes] | None = None, retain_log: bool = True,
                 forget_terminal: bool = False, log_store: LogStore | None = None,
                 archive: TransactionArchive | None = None) -> None:
        self.config = config or WorldConfig()
        self.env = Kernel()
        self.epoch_ms = parse_iso(self.config.epoch)
        self.streams = Streams(self.config.seed)
        self.ids = IdFactory(self.streams, self.config.key_secret)
        self.forget_terminal = forget_terminal or archive is not None
        #: a parked transaction (even a terminal one, failed) stays until the operator's fix
        #: ends it: an archive's world can still be fixed (the workload's never is)
        self.keeps_parked = archive is not None
        # the clock as a C-level read of the kernel's time (no Python frame per record)
        self.log = EventLog(partial(getattr, self.env, "_now"), log_sink, retain_log,
                            log_store)
        self._operation_times: OperationTimes | None = None
        #: sagas whose process is running (``sim.waiting.idle``)
        self.running_sagas = RunningProcesses()
        self.participants = ParticipantRegistry()
        self.transactions = TransactionBook(self.log, archive)
        self.sagas: dict[str, Saga] = {}
        self._leg_terms: dict[tuple[str, str, int], LegTerms] = {}  # see ``_terms``
        self._behaviours: dict[str, IssuerBehaviour] = {}  # until the gateway exists
        self.issuers: dict[str, Gateway] = {}
        #: set by whoever steps the world off a caller's thread (the shim): real gateway
        #: calls are handed out there instead of being made inside a step
        self.external: ExternalCalls | None = None
        self.issuer_inbox = IssuerInbox(self)
        self.ledgers = {ledger: ChainLedger(self, ledger, self.config.finality[ledger])
                        for ledger in Ledger}
        self.custody = CustodyRegistry(self)
        self.rtgs = RtgsAdapter(self, self.config.rtgs_latency)
        self.dns = DnsTable()
        self.subscriptions = SubscriptionRegistry(self)
        self.webhooks = WebhookChannel(self)  # listens to the log: events → deliveries
        self.log.append("world.created", seed=self.config.seed, epoch=self.config.epoch,
                        environment=self.config.environment.value)
        if self.config.rtgs_calendar is not None:
            self.set_rtgs_calendar(self.config.rtgs_calendar)

    @property
    def operation_times(self) -> OperationTimes:
        """The status check's latency figures, kept from the first ask on (``sim.gauges``)."""
        if self._operation_times is None:
            self._operation_times = OperationTimes(self.log)
        return self._operation_times

    def keep_read_indexes(self) -> None:
        """Keep from now on what the API's reads answer from at the cost of their answer:
        the status check's latency figures and the book's index by participant. ``ServiceAPI``
        calls it when it is made, so a run no API reads pays nothing for them per record.
        A log that keeps no record has no figures to keep: its status check fails, as the
        walk over its records would (``LogNotRetained``)."""
        if self._operation_times is None and self.log.retained:
            self._operation_times = OperationTimes(self.log)
        self.transactions.index_scopes()

    # time ---------------------------------------------------------------------------------
    if TYPE_CHECKING:
        @property
        def now_ms(self) -> int:
            """The virtual time, in whole ms (``sim/kernel.py``)."""
    else:
        #: read in C (``attrgetter``): no Python frame for the world's commonest read
        now_ms = property(attrgetter("env._now"), doc="The virtual time, in whole ms.")

    def iso(self, at_ms: int | None = None) -> str:
        return render_iso(self.epoch_ms, self.now_ms if at_ms is None else at_ms)

    def run_until(self, at_ms: int) -> None:
        """Run every event due up to and including ``at_ms``; the clock ends at ``at_ms``."""
        assert at_ms >= self.now_ms, "virtual time never moves backwards"
        with paced_collector():
            self.env.run_through(at_ms)

    def run_all(self, limit_ms: int | None = None) -> None:
        """Run until nothing is scheduled (or until ``limit_ms``).

        Timers that no longer matter (a poll or SLA timer after its answer came) still fire,
        doing nothing, so the clock may end later than the last fact in the log."""
        if limit_ms is None:
            with paced_collector():
                self.env.run()
        else:
            self.run_until(limit_ms)

    def advance(self, delay_ms: int) -> None:
        self.run_until(self.now_ms + delay_ms)

    def set_rtgs_calendar(self, calendar: OperatingCalendar | None) -> None:
        """Give the RTGS business hours (None: always open again); logged as ``rtgs.calendar``.
        Operations already waiting for an opening keep theirs."""
        self.rtgs.calendar = calendar
        self.log.append("rtgs.calendar",
                        calendar=None if calendar is None else calendar_wire(calendar))

    # participants -------------------------------------------------------------------------
    def add_member(self, name: str, rtgs_balance_gbp: Decimal = Decimal("0.00"),
                   wallets: dict[Asset, Decimal] | None = None) -> Participant:
        member = Participant(ParticipantId(self.ids.uuid("participant")),
                             ParticipantKind.CLEARING_MEMBER, name)
        self.participants.add(member)
        self.log.append("participant.added", participantId=member.id,
                        participantKind=member.kind.value,
                        name=name)
        self.rtgs.open_account(member.id, rtgs_balance_gbp)
        for asset, amount in (wallets or {}).items():
            self.fund(member, asset, amount)
        return member

    def add_issuer(self, name: str, profile: IssuerProfile | None = None,
                   asset_codes: tuple[str, ...] = (),
                   rtgs_balance_gbp: Decimal = Decimal("0.00"),
                   behaviour: IssuerBehaviour | None = None, currency: str = "GBP") -> Participant:
        """A stablecoin issuer; with a profile, its issuing account and assets too.

        An issuer onboarded without a profile gets its issuing account and gateway at its
        first profile save (``save_profile``), and assets once it has a ledger."""
        issuer = Participant(ParticipantId(self.ids.uuid("participant")),
                             ParticipantKind.STABLECOIN_ISSUER, name)
        self.participants.add(issuer)
        self.log.append("participant.added", participantId=issuer.id,
                        participantKind=issuer.kind.value,
                        name=name)
        self._behaviours[issuer.id] = behaviour or IssuerBehaviour()
        self.rtgs.open_account(issuer.id, rtgs_balance_gbp)
        if profile is not None:
            self.save_profile(issuer.id, profile)
        for code in asset_codes:
            self.issue_asset(issuer.id, code, currency)
        return issuer

    def use_gateway(self, issuer_id: str, gateway: Gateway, api_base_url: str) -> None:
        """Put the issuer on another gateway (its real one): later calls go there."""
        assert issuer_id in self.issuers, "the issuer needs a profile (and a gateway) first"
        self.issuers[issuer_id] = gateway
        self.log.append("issuer.gateway", issuerId=issuer_id, apiBaseUrl=api_base_url)

    def issue_asset(self, issuer_id: str, code: str, currency: str = "GBP") -> Asset:
        """A new asset issued from the issuer's issuing account (it needs a profile)."""
        issuer = self.participants[issuer_id]
        assert issuer.issuing_account is not None, f"{issuer.name} has no profile, no ledger"
        assert all(a.code != code for a in issuer.assets), f"{issuer.name} already issues {code}"
        asset = Asset(code, issuer.issuing_account, issuer.profile.amount_precision, currency)
        issuer.assets.append(asset)
        self.log.append("asset.issued", issuerId=issuer_id, code=code,
                        issuer=issuer.issuing_account, currency=currency,
                        precision=asset.precision)
        return asset

    def save_profile(self, issuer_id: str, profile: IssuerProfile) -> int:
        """Create or replace the profile: ``profileVersion`` + 1; in-flight keep theirs.

        The first save opens the issuing account on the profile's ledger and the gateway."""
        issuer = self.participants[issuer_id]
        if issuer.profiles and profile.ledger is not issuer.profile.ledger:
            raise InvalidRequest.one("ledger", "ledger_change",
                                     "an issuer's assets stay on the ledger they were issued on")
        if not issuer.profiles:
            ledger = self.ledgers[profile.ledger]
            issuer.issuing_account = ledger.open_account(f"{issuer.name}:issuing")
            self.issuers[issuer.id] = IssuerGateway(self, issuer.id, issuer.name, ledger,
                                                    issuer.issuing_account,
                                                    self._behaviours[issuer.id])
        self.custody.configure_for_profile(issuer, profile)  # Mode 1: operator co-signs
        issuer.profiles.append(profile)
        self.log.append("profile.saved", issuerId=issuer_id, profileVersion=issuer.profile_version,
                        mode=profile.mode.value, approvalSlaSeconds=profile.approval_sla_s)
        return issuer.profile_version

    def wallet(self, participant: Participant, ledger: Ledger) -> str:
        account = participant.wallets.get(ledger)
        if account is None:
            account = self.ledgers[ledger].open_account(f"{participant.name}:wallet")
            participant.wallets[ledger] = account
        return account

    def fund(self, member: Participant, asset: Asset, amount: Decimal) -> None:
        issuer = self.participants.issuer_of(asset)
        assert issuer is not None, f"no issuer issues {asset.code}"
        ledger = issuer.profile.ledger
        self.ledgers[ledger].mint_now(self.wallet(member, ledger), Money.of(amount, asset))

    # lookups the saga and the API use -----------------------------------------------------
    def asset_of(self, issuer_id: str, code: str) -> Asset:
        return next(a for a in self.participants[issuer_id].assets if a.code == code)

    def find_asset(self, ref: AssetRef) -> Asset | None:
        if ref.issuer is None:
            return GBP if ref.code == GBP.code else None
        for participant in self.participants:
            for asset in participant.assets:
                if asset.code == ref.code and asset.issuer == ref.issuer:
                    return asset
        return None

    def profile_of(self, terms: LegTerms) -> IssuerProfile:
        return self.participants[terms.issuer_id].profiles[terms.profile_version - 1]

    def source_wallet(self, tx: Transaction) -> tuple[ChainLedger, str]:
        terms = tx.legs[0]
        ledger = self.profile_of(terms).ledger
        return self.ledgers[ledger], self.wallet(self.participants[tx.initiator_id], ledger)

    def target_wallet(self, tx: Transaction) -> tuple[ChainLedger, str]:
        terms = tx.legs[-1]
        ledger = self.profile_of(terms).ledger
        return self.ledgers[ledger], self.wallet(self.participants[tx.initiator_id], ledger)

    # commands -----------------------------------------------------------------------------
    def check_initiation(self, initiator_id: str, request: InitiateRequest) -> Money:
        """Validate an initiation without acting on it; the source amount it would debit."""
        return self._checked(initiator_id, request)[3]

    def _checked(self, initiator_id: str,
                 request: InitiateRequest) -> tuple[Participant, Asset, Asset, Money]:
        member = self.participants[initiator_id]
        if member.kind is not ParticipantKind.CLEARING_MEMBER:
            raise InvalidRequest.one(None, "not_a_clearing_member",
                                     "only clearing members start redemptions and swaps")
        source_asset = self._resolve_asset("source.asset", request.source.asset)
        target_asset = self._resolve_asset("target.asset", request.target.asset)
        source = check_initiation(request, source_asset, target_asset)[0]
        return member, source_asset, target_asset, source

    def initiate(self, initiator_id: str, request: InitiateRequest,
                 command_id: CommandId | None = None,
                 agent_id: str | None = None) -> Transaction:
        """Validate and open a transaction in ``received``; its saga starts at once."""
        member, source_asset, target_asset, source = self._checked(initiator_id, request)
        burn_issuer = self.participants.issuer_of(source_asset)
        assert burn_issuer is not None
        legs = [self._terms("burn", burn_issuer)]
        q = quote(source.amount, self.config.fees)
        target = Money.of(q.receive_amount, target_asset)
        if request.use_case is UseCase.SWAP:
            mint_issuer = self.participants.issuer_of(target_asset)
            assert mint_issuer is not None
            legs.append(self._terms("mint", mint_issuer))
            creditor = mint_issuer.party
        else:
            creditor = member.party
        now = self.now_ms
        tx = Transaction(
            id=TransactionId(self.ids.uuid("transaction")),
            payment_reference=request.payment_reference, use_case=request.use_case,
            initiator_id=member.id,
            command_id=command_id or CommandId(self.ids.uuid("command")),
            lifecycle_status=LifecycleStatus.RECEIVED, parked=False,
            initiated_at_ms=now, updated_at_ms=now,
            source=Side(source, member.party),
            target=Side(target, member.party),
            chain=ChainState.NONE, rtgs=RtgsState.NONE, saga=SagaView.initiated(now), quote=q,
            fee_status=FeeStatus.PENDING, creditor=creditor, debtor=burn_issuer.party,
            legs=tuple(legs), agent_id=agent_id)
        self.transactions.open(tx)
        saga = self.sagas[tx.id] = Saga(self, tx.id)
        saga.start()
        return tx

    def _resolve_asset(self, param: str, ref: AssetRef) -> Asset:
        asset = self.find_asset(ref)
        if asset is None:
            raise InvalidRequest.one(param, "unknown_asset",
                                     f"no asset {ref.code} issued by {ref.issuer or '(fiat)'}")
        return asset

    def _terms(self, leg: str, issuer: Participant) -> LegTerms:
        """The leg's terms under the issuer's current profile: one frozen value per leg,
        issuer and profile version, made at the first initiation that needs it."""
        key = (leg, issuer.id, issuer.profile_version)
        terms = self._leg_terms.get(key)
        if terms is None:
            terms = self._leg_terms[key] = LegTerms(leg, issuer.id, issuer.profile.mode,
                                                    issuer.profile_version)
        return terms

    def cancel(self, transaction_id: str) -> Transaction:
        """Cancel now (spec, the cancel row): the cancelled path, the asset back with the
        sender, the fiat leg cancelled, one ``transaction.cancelled``.

        Cancel is allowed only before the earmark is confirmed (its confirmation starts the
        irrevocable Burning step), so no earmark is ever held here. A lock already applied
        is returned at once; a lock or earmark still being written (its finality latency
        not yet elapsed) is withdrawn: the interrupted operation never applies
        (docs/semantics.md, the cancel rows). Either way the sender's balance is exactly what it
        was before the initiation, so ``details`` end ``ReturnedToSender`` / ``Cancelled``."""
        tx = self.transactions[transaction_id]
        action = cancel_action(tx)
        if not action.allowed:
            raise NotAllowed.one(None, action.reason or "cancel_not_allowed",
                                 f"transaction {tx.id} cannot be cancelled: {action.reason}")
        saga = self.sagas[transaction_id]
        withdrawn = saga.step_in_progress()
        if saga.process is not None and saga.process.is_alive:
            saga.process.interrupt("cancelled")
        assert tx.rtgs is RtgsState.NONE, tx.rtgs
        returned = tx.chain is ChainState.LOCKED
        if returned:
            self.source_wallet(tx)[0].return_now(tx.id)
        self.log.append("saga.cancel", transactionId=tx.id, lockReturned=returned,
                        withdrawn=withdrawn)
        return self.transactions.apply(
            tx.id, Trigger.CANCEL, self.now_ms, saga=tx.saga.cancelled(self.now_ms),
            reason_code="operator_cancelled", fee_status=FeeStatus.WAIVED,
            chain=ChainState.RETURNED_TO_SENDER, rtgs=RtgsState.CANCELLED)

    def arm(self, transaction_id: str, outcome: Outcome) -> None:
        """Arm a conformance outcome on the transaction's next issuer instruction event."""
        tx = self.transactions[transaction_id]
        if tx.terminal:
            raise NotAllowed.one("transactionId", "transaction_terminal",
                                 f"transaction {tx.id} is {tx.lifecycle_status.value}: "
                                 "no issuer instruction event is left to arm")
        if not any(leg.mode.has_instructions for leg in tx.legs):
            raise NotAllowed.one("transactionId", "no_issuer_instruction",
                                 "Mode 1 transactions have no issuer instruction step to arm")
        saga = self.sagas[tx.id]
        target = saga.next_decision() if outcome is Outcome.REJECTED else saga.next_instructed()
        if target is None and outcome is Outcome.REJECTED:
            raise NotAllowed.one("transactionId", "issuer_decided",
                                 "every issuer of this transaction has already decided "
                                 "(APPROVED or later): a rejection can no longer come")
        if target is None:
            raise NotAllowed.one("transactionId", "no_issuer_instruction",
                                 "every issuer instruction of this transaction is complete")
        self.issuers[target.issuer_id].arm(tx.id, outcome)

    def forget(self, transaction_id: str) -> None:
        """Drop a terminal transaction's bookkeeping (``forget_terminal`` worlds only)."""
        tx = self.transactions.forget(transaction_id)
        if self._operation_times is not None:
            self._operation_times.forget(transaction_id)
        del self.sagas[transaction_id]
        for leg in tx.legs:
            gateway = self.issuers.get(leg.issuer_id)
            if gateway is not None:
                for instruction_id in gateway.forget(transaction_id):
                    self.issuer_inbox.forget(instruction_id)

    def resolve(self, transaction_id: str, command_id: CommandId | None = None) -> Transaction:
        """The operator's fix of a parked transaction: back to ``in-flight``, saga resumes."""
        tx = self.transactions[transaction_id]
        if not tx.parked:
            raise NotAllowed.one(None, "not_parked", f"transaction {tx.id} is not parked")
        tx = self.transactions.apply(tx.id, Trigger.OPERATOR_FIX, self.now_ms, reason_code=None)
        self.sagas[tx.id].resume(command_id or CommandId(self.ids.uuid("command")))
        return tx
