"""The issuer conformance suite: synthetic transactions through the engine, on virtual time.

Public names: ``SCENARIOS``, ``ConformanceRun``, ``ConformanceSuite``, ``RunStatus``,
``ScenarioResult``, ``ScenarioStatus``.

A run tests one ON_INSTRUCTION issuer's gateway (spec, "Issuer conformance suite") with real
transactions started by synthetic clearing members, one per scenario, all at once:

    happy_path_burn      a redeem of the issuer's asset settles
    happy_path_mint      a swap into the issuer's asset settles (the mint is at the issuer);
                         its source is the suite's own Mode 1 asset, so no other issuer is used
    rejection_unwinds    armed ``rejected``: failed, parked false, asset back, earmark cancelled
    silence_parks        armed ``silence``: an instruction the issuer accepted (its creation
                         answered with an id) and left undecided; in-flight at SLA − 1 ms,
                         parked exactly at the SLA
    idempotent_replay    the saga's burn instruction posted again with the same key and body,
                         once its status has moved past the one its creation answered (or
                         its transaction ended), answers the original and creates no second
                         instruction
    callback_signatures  every status webhook for the run's instructions, up to 5 s after
                         the last transaction concluded, verifies against the issuer's
                         signing secret (skipped at once, as not applicable, without
                         SIGNED_WEBHOOK; a skipped scenario does not block ``passed``)

Isolation (docs/semantics.md): the synthetic members (``conformance:<issuer>:<scenario>``) are
funded with the issuer's asset by ``World.fund`` and hold their own fiat float; each synthetic
transaction's settlement debtor and creditor are its member, so no real participant's wallet
or RTGS balance changes and no real member sees the transactions (only the issuer under test,
which they list). A scenario's verdict is read from the log and the ledgers when its
transaction first becomes terminal; every start and verdict is logged (``conformance.*``).
"""

from __future__ import annotations

from collections.abc import Generator
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import simpy
from attrs import define, field

from clearing_sim.domain.errors import DomainError, NotAllowed
from clearing_sim.domain.initiation import AssetRef, InitiateRequest, LegRequest
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.lifecycle import LifecycleStatus
from clearing_sim.domain.money import Asset
from clearing_sim.domain.profile import (
    CommitPoint,
    CustodyModel,
    FeedbackChannel,
    FiatLeg,
    IssuerProfile,
    SettlementMode,
)
from clearing_sim.domain.transaction import ChainState, RtgsState, Transaction, UseCase
from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.issuer import IdempotencyConflict, Snapshot

if TYPE_CHECKING:
    from clearing_sim.sim.participants import Participant
    from clearing_sim.sim.world import World

__all__ = ["SCENARIOS", "ConformanceRun", "ConformanceSuite", "RunStatus", "ScenarioResult",
           "ScenarioStatus"]

Proc = Generator[simpy.Event, Any, Any]

SCENARIOS = ("happy_path_burn", "happy_path_mint", "rejection_unwinds", "silence_parks",
             "idempotent_replay", "callback_signatures")
AMOUNT = Decimal("1.00")  # under the default fee schedule the fee is £0.00
FLOAT_GBP = Decimal("10000.00")  # each synthetic member's RTGS float
WEBHOOK_GRACE_MS = 5_000  # late status webhooks still counted (the default latency's maximum)
SOURCE_ASSET_CODE = "CONF"
_ARMED = {"rejection_unwinds": Outcome.REJECTED, "silence_parks": Outcome.SILENCE}
#: The saga's records of a request an approval SLA counts from (docs/semantics.md).
_SLA_REQUESTS = ("saga.execute_sent", "saga.instruction_sent")
_UNDECIDED = ("RECEIVED", "PENDING_APPROVAL")


def _moved(record: Record, instruction_id: str, first_status: str) -> bool:
    """An ``issuer.instruction`` record of that instruction at another status."""
    return record["instructionId"] == instruction_id and record["status"] != first_status


class ScenarioStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"


@define
class ScenarioResult:
    name: str
    status: ScenarioStatus = ScenarioStatus.PENDING
    started_at_ms: int | None = None
    concluded_at_ms: int | None = None
    transaction_id: str | None = None
    detail: dict[str, Any] = field(factory=dict)


@define
class ConformanceRun:
    run_id: str
    issuer_id: str
    profile_version: int
    mode: SettlementMode
    api_base_url: str | None
    started_at_ms: int
    scenarios: list[ScenarioResult]
    completed_at_ms: int | None = None

    @property
    def status(self) -> RunStatus:
        return RunStatus.RUNNING if self.completed_at_ms is None else RunStatus.COMPLETED

    @property
    def passed(self) -> bool | None:
        """None while running; then true when every scenario passed or was not applicable."""
        if self.completed_at_ms is None:
            return None
        return all(s.status in (ScenarioStatus.PASSED, ScenarioStatus.SKIPPED)
                   for s in self.scenarios)

    def scenario(self, name: str) -> ScenarioResult:
        return next(s for s in self.scenarios if s.name == name)


@define
class _Subject:
    """One scenario's synthetic transaction and the balances it started from."""

    tx_id: str
    wallet: str
    asset: Asset
    before: Decimal
    fiat_before: Decimal
    source_asset: Asset | None = None
    source_before: Decimal = Decimal(0)
    replay: dict[str, Any] | None = None  # idempotent_replay: what the replay answered


class ConformanceSuite:
    """Every issuer's conformance runs in one world, and the synthetic parties they use."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.runs: dict[str, list[ConformanceRun]] = {}  # issuer id → runs, oldest first
        self._members: dict[tuple[str, str], Participant] = {}
        self._sources: dict[str, Participant] = {}
        self._terminal: dict[str, simpy.Event] = {}
        self._instructed: dict[str, simpy.Event] = {}
        self._moved: dict[str, tuple[str, str, simpy.Event]] = {}  # tx → (instruction,
        # the status its creation answered, the event of its first other status)
        self._listening = False

    # queries ------------------------------------------------------------------------------
    def latest(self, issuer_id: str) -> ConformanceRun | None:
        runs = self.runs.get(issuer_id)
        return runs[-1] if runs else None

    def owns(self, tx: Transaction) -> bool:
        """True for a synthetic transaction of this suite (started by a synthetic member)."""
        return any(m.id == tx.initiator_id for m in self._members.values())

    def check(self, issuer_id: str) -> None:
        """Refuse (409) a run the issuer's state does not allow; changes nothing."""
        issuer = self.world.participants[issuer_id]
        if not issuer.profiles:
            raise NotAllowed.one(None, "profile_required",
                                 "save a capability profile (PUT .../capabilities) first")
        profile = issuer.profile
        if not profile.mode.has_instructions:
            raise NotAllowed.one(None, "conformance_unsupported",
                                 f"profile version {issuer.profile_version} is "
                                 f"{profile.mode.value}: no apiBaseUrl receives instructions")
        if not issuer.assets:
            raise NotAllowed.one(None, "no_issued_asset",
                                 "the issuer issues no asset to run synthetic transactions with")
        latest = self.latest(issuer_id)
        if latest is not None and latest.completed_at_ms is None:
            raise NotAllowed.one(None, "conformance_run_in_progress",
                                 f"run {latest.run_id} started at "
                                 f"{self.world.iso(latest.started_at_ms)} is still running")

    # commands -----------------------------------------------------------------------------
    def start(self, issuer_id: str) -> ConformanceRun:
        """Check, then start a run now: every scenario pending until the world runs."""
        self.check(issuer_id)
        if not self._listening:
            self.world.log.listen(self._on_record)
            self._listening = True
        issuer = self.world.participants[issuer_id]
        run = ConformanceRun(self.world.ids.uuid("conformance-run"), issuer_id,
                             issuer.profile_version, issuer.profile.mode,
                             issuer.profile.api_base_url, self.world.now_ms,
                             [ScenarioResult(name) for name in SCENARIOS])
        self.runs.setdefault(issuer_id, []).append(run)
        self.world.log.append("conformance.run_started", runId=run.run_id, issuerId=issuer_id,
                              profileVersion=run.profile_version, mode=run.mode.value,
                              scenarios=list(SCENARIOS))
        self.world.env.process(self._run(run))
        return run

    # the run ------------------------------------------------------------------------------
    def _run(self, run: ConformanceRun) -> Proc:
        env = self.world.env
        signatures = run.scenario("callback_signatures")
        self._begin(run, signatures)
        channels = self.world.participants[run.issuer_id] \
            .profiles[run.profile_version - 1].feedback_channel
        if FeedbackChannel.SIGNED_WEBHOOK not in channels:
            self._conclude(run, signatures, ScenarioStatus.SKIPPED, {
                "summary": "not applicable: feedbackChannel has no SIGNED_WEBHOOK",
                "feedbackChannel": [c.value for c in channels]})
        yield env.all_of([env.process(self._scenario(run, name)) for name in SCENARIOS
                          if name != "callback_signatures"])
        if signatures.status is ScenarioStatus.RUNNING:
            yield env.timeout(WEBHOOK_GRACE_MS)
            self._conclude(run, signatures, *self._signatures(run))
        run.completed_at_ms = self.world.now_ms
        self.world.log.append("conformance.run_completed", runId=run.run_id,
                              issuerId=run.issuer_id, passed=run.passed,
                              verdicts={s.name: s.status.value for s in run.scenarios})

    def _begin(self, run: ConformanceRun, result: ScenarioResult) -> None:
        result.status, result.started_at_ms = ScenarioStatus.RUNNING, self.world.now_ms
        self.world.log.append("conformance.scenario_started", runId=run.run_id,
                              issuerId=run.issuer_id, scenario=result.name)

    def _conclude(self, run: ConformanceRun, result: ScenarioResult, status: ScenarioStatus,
                  detail: dict[str, Any]) -> None:
        result.status, result.detail = status, detail
        result.concluded_at_ms = self.world.now_ms
        self.world.log.append("conformance.scenario_verdict", runId=run.run_id,
                              issuerId=run.issuer_id, scenario=result.name,
                              status=status.value, transactionId=result.transaction_id,
                              summary=detail["summary"],
                              failedChecks=detail.get("failedChecks", []))

    def _scenario(self, run: ConformanceRun, name: str) -> Proc:
        result = run.scenario(name)
        self._begin(run, result)
        try:
            outcome = _ARMED.get(name)
            subject = self._initiate(run, name, outcome)
            if outcome is not None:
                self.world.arm(subject.tx_id, outcome)
        except DomainError as error:
            problem = error.problems[0]
            self._conclude(run, result, ScenarioStatus.FAILED, {
                "summary": f"the synthetic transaction could not be started: {problem.message}",
                "code": problem.code, "failedChecks": ["synthetic transaction started"]})
            return
        result.transaction_id = subject.tx_id
        terminal = self._terminal[subject.tx_id] = self.world.env.event()
        if name == "idempotent_replay":
            instructed = self._instructed[subject.tx_id] = self.world.env.event()
            subject.replay = yield from self._replay(instructed, terminal)
        record = yield terminal
        assert isinstance(record, Record)
        verdict = {"happy_path_burn": self._burn_settled, "happy_path_mint": self._mint_settled,
                   "rejection_unwinds": self._unwound, "silence_parks": self._parked_at_sla,
                   "idempotent_replay": self._replayed}[name]
        self._conclude(run, result, *verdict(subject, record))

    # synthetic parties and transactions ---------------------------------------------------
    def _member(self, issuer: Participant, scenario: str) -> Participant:
        member = self._members.get((issuer.id, scenario))
        if member is None:
            name = self._free_name(f"conformance:{issuer.name}:{scenario}")
            member = self.world.add_member(name, FLOAT_GBP)
            self._members[(issuer.id, scenario)] = member
        return member

    def _source_asset(self, issuer: Participant, asset: Asset) -> Asset:
        """The suite's own Mode 1 asset, on the issuer's ledger and currency: a swap's source."""
        source = self._sources.get(issuer.id)
        if source is None:
            profile = IssuerProfile(CommitPoint.ON_OBSERVATION,
                                    CustodyModel.POOLED_ISSUER_WALLET,
                                    (FeedbackChannel.POLLABLE_RESOURCE,),
                                    FiatLeg.OPERATOR_SETTLES_RTGS, issuer.profile.ledger,
                                    amount_precision=asset.precision)
            source = self.world.add_issuer(self._free_name(f"conformance:{issuer.name}:source"),
                                           profile, (SOURCE_ASSET_CODE,),
                                           currency=asset.currency)
            self._sources[issuer.id] = source
        return source.assets[0]

    def _free_name(self, base: str) -> str:
        names = [p.name for p in self.world.participants]
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}#{n}"
        return name

    def _topped_up(self, member: Participant, asset: Asset,
                   amount: Decimal = AMOUNT) -> tuple[str, Decimal]:
        """Fund the member's wallet up to the amount; its wallet and balance."""
        issuer = self.world.participants.issuer_of(asset)
        assert issuer is not None
        ledger = self.world.ledgers[issuer.profile.ledger]
        wallet = self.world.wallet(member, issuer.profile.ledger)
        held = ledger.balance(wallet, asset).amount
        if held < amount:
            self.world.fund(member, asset, amount - held)
        return wallet, ledger.balance(wallet, asset).amount

    def _initiate(self, run: ConformanceRun, scenario: str,
                  outcome: Outcome | None) -> _Subject:
        world = self.world
        issuer = world.participants[run.issuer_id]
        asset = issuer.assets[0]
        member = self._member(issuer, scenario)
        reference = f"conformance {run.run_id} {scenario}"
        trigger = None if outcome is None else world.issuers[issuer.id].trigger_amount(outcome)
        amount = f"{trigger if trigger is not None else AMOUNT:f}"
        target_ref = AssetRef(asset.code, asset.issuer)
        source_asset: Asset | None = None
        source_before = Decimal(0)
        if scenario == "happy_path_mint":  # the member receives the issuer's asset
            wallet = world.wallet(member, issuer.profile.ledger)
            before = self._balance(wallet, asset)
            source_asset = self._source_asset(issuer, asset)
            _, source_before = self._topped_up(member, source_asset)
            request = InitiateRequest(UseCase.SWAP, reference, LegRequest(
                amount, AssetRef(source_asset.code, source_asset.issuer)),
                LegRequest(amount, target_ref))
        else:
            wallet, before = self._topped_up(member, asset, Decimal(amount))
            request = InitiateRequest(UseCase.REDEEM, reference, LegRequest(amount, target_ref),
                                      LegRequest(amount, AssetRef(asset.currency)))
        fiat_before = world.rtgs.balances[member.id]
        tx = world.initiate(member.id, request)
        # The member stands in for every party of the fiat leg: no real balance moves.
        world.transactions.update(tx.id, world.now_ms, debtor=member.party,
                                  creditor=member.party)
        world.log.append("conformance.transaction", runId=run.run_id, issuerId=issuer.id,
                         scenario=scenario, transactionId=tx.id, memberId=member.id,
                         settlementParty=member.id)
        return _Subject(tx.id, wallet, asset, before, fiat_before, source_asset, source_before)

    # observing ----------------------------------------------------------------------------
    def _on_record(self, record: Record) -> None:
        if record.kind == "transaction.state" and record["terminal"]:
            event = self._terminal.pop(str(record["transactionId"]), None)
        elif record.kind == "issuer.instruction":  # the first one names the instruction
            tx_id = str(record["transactionId"])
            event = self._instructed.pop(tx_id, None)
            waiting = self._moved.get(tx_id)
            if event is None and waiting is not None and _moved(record, *waiting[:2]):
                event = self._moved.pop(tx_id)[2]
        else:
            return
        if event is not None:
            event.succeed(record)

    def _replay(self, instructed: simpy.Event, terminal: simpy.Event) -> Proc:
        """Post the saga's instruction again, same key and body; what the issuer answered."""
        yield instructed | terminal
        if not instructed.triggered:
            return None
        first = instructed.value
        assert isinstance(first, Record)
        tx_id, instruction_id = str(first["transactionId"]), str(first["instructionId"])
        if not any(_moved(r, instruction_id, str(first["status"])) for r in
                   self.world.log.select("issuer.instruction", transactionId=tx_id)):
            moved = self.world.env.event()
            self._moved[tx_id] = (instruction_id, str(first["status"]), moved)
            yield moved | terminal  # replay the original once it is no longer current
            self._moved.pop(tx_id, None)
        gateway = self.world.issuers[str(first["issuerId"])]
        sent = gateway.instructions[str(first["instructionId"])]
        answer: dict[str, Any] = {"instructionId": first["instructionId"],
                                  "originalStatus": first["status"],
                                  "idempotencyKey": sent.body["idempotencyKey"]}
        try:
            snap = yield from gateway.post_instruction(sent.kind, dict(sent.body), sent.mode,
                                                       sent.feedback)
        except IdempotencyConflict:
            return {**answer, "replayCode": "idempotency_conflict"}
        assert isinstance(snap, Snapshot)
        return {**answer, "replayInstructionId": snap.instruction_id,
                "replayStatus": snap.status.value, "replayedAt": self.world.iso()}

    # verdicts -----------------------------------------------------------------------------
    def _facts(self, subject: _Subject, record: Record) -> dict[str, Any]:
        world, tx = self.world, self.world.transactions[subject.tx_id]
        log = world.log
        facts: dict[str, Any] = {
            "transactionId": tx.id, "lifecycleStatus": tx.lifecycle_status.value,
            "parked": tx.parked, "terminal": tx.terminal, "reason": tx.reason_code,
            "chain": tx.chain.value, "rtgs": tx.rtgs.value,
            "concludedAt": world.iso(record.at_ms),
            "instructionStatuses": [f"{r['leg']}:{r['status']}" for r in
                                    log.select("issuer.instruction", transactionId=tx.id)]}
        sent = log.select("saga.instruction_sent", transactionId=tx.id)
        if sent:
            facts["instructionSentAt"] = world.iso(sent[-1].at_ms)
        return facts

    def _balance(self, wallet: str, asset: Asset) -> Decimal:
        issuer = self.world.participants.issuer_of(asset)
        assert issuer is not None
        return self.world.ledgers[issuer.profile.ledger].balance(wallet, asset).amount

    def _conserved(self, asset: Asset) -> bool:
        issuer = self.world.participants.issuer_of(asset)
        assert issuer is not None
        return self.world.ledgers[issuer.profile.ledger].conserved()

    def _verdict(self, facts: dict[str, Any], checks: list[tuple[str, bool]],
                 passed: str) -> tuple[ScenarioStatus, dict[str, Any]]:
        failed = [name for name, ok in checks if not ok]
        if not failed:
            return ScenarioStatus.PASSED, {"summary": passed, **facts, "failedChecks": []}
        got = (f"{facts['lifecycleStatus']} (parked {str(facts['parked']).lower()}, reason "
               f"{facts['reason']}) at {facts['concludedAt']}")
        return ScenarioStatus.FAILED, {"summary": f"expected {failed[0]}; the transaction "
                                                  f"ended {got}", **facts, "failedChecks": failed}

    def _burn_settled(self, s: _Subject, record: Record) -> tuple[ScenarioStatus, dict[str, Any]]:
        facts = self._facts(s, record)
        after = self._balance(s.wallet, s.asset)
        facts.update(senderBalanceBefore=f"{s.before:f}", senderBalanceAfter=f"{after:f}")
        return self._verdict(facts, [
            ("settled", facts["lifecycleStatus"] == LifecycleStatus.SETTLED.value),
            (f"{AMOUNT:f} {s.asset.code} burned from the sender wallet",
             after == s.before - AMOUNT),
            ("ledger balances conserved", self._conserved(s.asset)),
        ], f"the redeem settled at {facts['concludedAt']}; {AMOUNT:f} {s.asset.code} burned")

    def _mint_settled(self, s: _Subject, record: Record) -> tuple[ScenarioStatus, dict[str, Any]]:
        facts = self._facts(s, record)
        assert s.source_asset is not None
        tx = self.world.transactions[s.tx_id]
        received = tx.target.amount.amount
        after = self._balance(s.wallet, s.asset)
        source_after = self._balance(s.wallet, s.source_asset)
        facts.update(targetBalanceBefore=f"{s.before:f}", targetBalanceAfter=f"{after:f}",
                     sourceAsset=s.source_asset.code)
        return self._verdict(facts, [
            ("settled", facts["lifecycleStatus"] == LifecycleStatus.SETTLED.value),
            (f"{received:f} {s.asset.code} minted to the member",
             after == s.before + received),
            ("the source asset burned", source_after == s.source_before - AMOUNT),
            ("ledger balances conserved", self._conserved(s.asset)),
        ], f"the swap settled at {facts['concludedAt']}; {received:f} {s.asset.code} minted")

    def _unwound(self, s: _Subject, record: Record) -> tuple[ScenarioStatus, dict[str, Any]]:
        facts = self._facts(s, record)
        tx = self.world.transactions[s.tx_id]
        after = self._balance(s.wallet, s.asset)
        fiat_after = self.world.rtgs.balances[tx.debtor.participant_id]
        facts.update(senderBalanceBefore=f"{s.before:f}", senderBalanceAfter=f"{after:f}")
        return self._verdict(facts, [
            ("failed", facts["lifecycleStatus"] == LifecycleStatus.FAILED.value),
            ("parked false", not tx.parked),
            ("reason issuer_rejected", tx.reason_code == "issuer_rejected"),
            ("asset returned to the sender", tx.chain is ChainState.RETURNED_TO_SENDER
             and after == s.before),
            ("earmark cancelled", tx.rtgs is RtgsState.CANCELLED
             and tx.id not in self.world.rtgs.earmarks and fiat_after == s.fiat_before),
            ("ledger balances conserved", self._conserved(s.asset)),
        ], f"rejected and unwound at {facts['concludedAt']}: asset returned, earmark cancelled")

    def _parked_at_sla(self, s: _Subject, record: Record) -> tuple[ScenarioStatus, dict[str, Any]]:
        facts = self._facts(s, record)
        world, tx = self.world, self.world.transactions[s.tx_id]
        # the request the SLA counts from: Mode 2's execute, Mode 3's instruction
        sent = [r for r in world.log.select("saga.", transactionId=tx.id)
                if r.kind in _SLA_REQUESTS and r.get("deadlineMs") is not None]
        sla_s = world.profile_of(tx.legs[0]).approval_sla_s
        facts["approvalSlaSeconds"] = sla_s
        if sent:
            facts["slaCountsFrom"] = f"{sent[-1].kind} at {world.iso(sent[-1].at_ms)}"
        due_ms = sent[-1].at_ms + sla_s * 1000 if sent else None
        before: list[Record] = []
        if due_ms is not None:
            facts["expectedParkAt"] = world.iso(due_ms)
            before = [r for r in world.log.select("transaction.state", transactionId=tx.id)
                      if r.at_ms <= due_ms - 1]
        if before:
            facts["stateAtSlaMinus1ms"] = before[-1]["lifecycleStatus"]
        statuses = [str(r["status"]) for r in
                     world.log.select("issuer.instruction", transactionId=tx.id)]
        return self._verdict(facts, [
            ("an instruction sent", due_ms is not None),
            ("an instruction the issuer accepted (its creation answered with an "
             "instructionId)", bool(statuses)),
            ("no decision from the issuer (RECEIVED or PENDING_APPROVAL only)",
             all(status in _UNDECIDED for status in statuses)),
            ("failed and parked", tx.lifecycle_status is LifecycleStatus.FAILED and tx.parked),
            ("reason approval_sla_exceeded", tx.reason_code == "approval_sla_exceeded"),
            ("in-flight at SLA − 1 ms", bool(before)
             and before[-1]["lifecycleStatus"] == LifecycleStatus.IN_FLIGHT.value),
            ("parked exactly at the SLA", record.at_ms == due_ms),
        ], f"parked at {facts['concludedAt']}, exactly {sla_s} s after the instruction was sent")

    def _replayed(self, s: _Subject, record: Record) -> tuple[ScenarioStatus, dict[str, Any]]:
        facts = self._facts(s, record)
        log = self.world.log
        created = len({r["instructionId"] for r in log.select(
            "issuer.instruction", transactionId=s.tx_id, leg="burn")})
        burns = len(log.select("ledger.burn", transactionId=s.tx_id))
        replay = s.replay or {}
        facts.update(replay, instructionsCreated=created, burnsOnChain=burns)
        return self._verdict(facts, [
            ("an instruction to replay", "instructionId" in replay),
            ("the replay answered the original instructionId",
             replay.get("replayInstructionId") == replay.get("instructionId")),
            ("the replay answered the original status",
             replay.get("replayStatus") == replay.get("originalStatus")),
            ("one instruction created", created == 1),
            ("the asset moved at most once", burns <= 1),
        ], f"the replay of {replay.get('instructionId')} answered the original; one instruction")

    def _signatures(self, run: ConformanceRun) -> tuple[ScenarioStatus, dict[str, Any]]:
        """Status webhooks naming the run's instructions (or none): all must verify."""
        world = self.world
        txs = [s.transaction_id for s in run.scenarios if s.transaction_id is not None]
        instructions = list(dict.fromkeys(
            r["instructionId"] for r in world.log.select("issuer.instruction")
            if r["transactionId"] in txs))
        deliveries = [r for r in world.log.select("issuer.webhook", issuerId=run.issuer_id)
                      if r.at_ms >= run.started_at_ms
                      and (r["instructionId"] in instructions or r["instructionId"] is None)]
        valid = sum(1 for r in deliveries if r["verified"])
        invalid = len(deliveries) - valid
        facts = {"instructions": len(instructions), "validDeliveries": valid,
                 "invalidDeliveries": invalid}
        checks = [("at least one signed status webhook", valid > 0),
                  ("no delivery failed verification", invalid == 0)]
        failed = [name for name, ok in checks if not ok]
        if failed:
            return ScenarioStatus.FAILED, {
                "summary": f"expected {failed[0]}: {valid} valid and {invalid} invalid "
                           f"deliveries for {len(instructions)} instructions",
                **facts, "failedChecks": failed}
        return ScenarioStatus.PASSED, {
            "summary": f"all {valid} status webhooks verified with the issuer's signing secret",
            **facts, "failedChecks": []}
