"""The same-work baseline: the model's modelled work per redeem in lean plain SimPy.

Public names: ``simulate``, ``run_same_work``.

Issue 30 §4: the old *toy saga* (``bench_sagas.run_toy``: 8 timeouts, 2 round trips, 10
records) carries about a quarter of what the model does for a redeem, so model / toy says
little about the engine. This program does, per redeem, the work the model's own log shows
for one redeem of each mode (``example_world`` + ``poisson_redeems``, as ``bench_sagas.py``
runs it; written from that log, records of one transaction printed and copied), with no
model code: plain SimPy processes, tuples in a list, ``random.Random`` streams, ``hmac``,
``Decimal``. Per redeem it makes:

- the same records, in the same order, of the same kinds with the same field names (a
  record is ``(at_ms, seq, kind, fields)``, fields a dict in the model's key order): 21 for
  Mode 1 (stellar, delegated signing), 36-ish for Mode 3 (solana, pre-burn transfer,
  polled every 5 s) and 38-ish for Mode 2 (evm, two-phase, signed webhooks), as the model's;
  ``tests/test_same_work_baseline.py`` holds it to that;
- ids drawn as the model draws them: transaction and instruction ids as version-4-layout
  UUIDs from 128 random bits, the burn's idempotency key a ``uuid5`` of the transaction;
- receipts: a 64-byte random digest per ledger operation, written as the ledger writes a
  hash (stellar hex, evm ``0x`` hex, solana base58), and the ledger sequence of the instant;
- latency draws from seeded ``random.Random`` streams with the model's distributions
  (intake 200 ms, ledger finality per ledger, RTGS, issuer request, ack, approval,
  execution and webhook latencies: log-normal with a cap, or uniform);
- SLA timers: a 900 s deadline timeout per sent instruction, raced (``any_of``) with each
  poll timer (Mode 3) or each webhook (Mode 2), still firing after the answer as the
  model's do;
- signed status webhooks (Mode 2): each status change after the request is written as
  the issuer's JSON body, signed ``t=<s>,v1=<hex HMAC-SHA256 of "t.body">`` as
  ``clearing_sim.domain.signing`` signs, the header parsed and the signature checked with
  ``hmac.compare_digest`` on receipt, then read back with a ``GET`` as the saga does;
- Decimal money: a quote at initiation (the fee in basis points, quantised to the penny,
  half even; debit, fee and receive amounts) kept in the transaction's current state (a
  dict updated at each change of lifecycle status), balances on the ledgers and the RTGS
  moved in ``Decimal`` (lock, transfer, burn, earmark, settle), the settlement's net and
  fee written as decimal strings;
- the issuer's idempotency store (key -> instruction id) and its instructions' states.

What it omits, against the model (each a cost the model carries and this does not):
- every failure path: rejections, failures, silence, parking at the SLA, compensation and
  refunds, ledger refusals, idempotency conflicts, retries of webhooks;
- the service around the saga: validation of the initiation, fee schedules per
  participant, the book of transactions (indexes, snapshots, a frozen ``Transaction``
  value replaced at each step where this updates a dict), listeners on the log (webhook
  subscriptions, timelines), the gauges' running counts;
- the issuer's request bodies (the ``POST`` logs what the model logs, no body is built or
  compared against the idempotency key's first), custody signer checks of Mode 1,
  profiles and their versions, the leg's terms;
- the one-HMAC trick: the model's ``signing.sign`` keeps its last digest, so a webhook
  signed and verified with the same secret, time and body costs one HMAC; this computes
  it twice, as a sender and a receiver that share nothing would;
- the log's own machinery (a ``Record`` object, the listener index) and the digest, which
  neither side computes in the timed run;
- the model's engine layer over SimPy (its own light waits, ``later``/``soon`` calls):
  here each wait is a plain ``Timeout``, ``Event`` or ``AnyOf``.
"""

from __future__ import annotations

import hmac
import random
import time
import uuid
from collections.abc import Callable, Generator
from decimal import ROUND_HALF_EVEN, Decimal
from hashlib import sha256
from math import exp
from typing import Any

import simpy

__all__ = ["run_same_work", "simulate"]

Fields = dict[str, Any]
LogRecord = tuple[int, int, str, Fields]

# The example world's cast, as its log names it (fixed strings: the ids are not the work).
MEMBER = "7af86bc6-f9ce-424b-8326-7284b40c1623"
ISSUERS = {1: "ee795cd5-c564-4cad-90c5-e8c470da5473", 2: "de688d4d-c8e2-482b-899a-80242a4bf611",
           3: "8b19115b-a4cf-447d-8025-a153b10b360c"}
LEDGER = {1: "stellar", 2: "evm", 3: "solana"}
ASSET = {1: "GBPS", 2: "GBPE", 3: "GBPQ"}
WALLET = {1: "GCGECYTKP6XBY2SITS5XSMBWFSEAR5RXDECIYM2G55BT5CL3H4GA54Z4",
          2: "0x23465347a520d81ef22131be69ac21172d41d2b9",
          3: "G1YKK6qgqa7v2HCFgxW2NSN8ZyqS6JHH75oUBaCoz6RB"}
TREASURY = "5StN6QvEjBA7jameFEpUYTVJC5HugoZTUQDKECBb1upK"
GENESIS = {"stellar": 50_000_000, "evm": 19_000_000, "solana": 250_000_000}
BLOCK_MS = {"stellar": 5_000, "evm": 12_000, "solana": 400}
SECRET = b"whsec_same_work"
SLA_MS = 900_000
POLL_MS = 5_000
FEE_BPS = Decimal(10)
PENNY = Decimal("0.01")
STEPS = ("Received", "Validated", "Lock", "Earmarked", "Burning", "Settled")
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
UUID4_KEEP = ~(0xF000 << 64) & ~(0xC000 << 48)
UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def _base58(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    out = []
    while n:
        n, rem = divmod(n, 58)
        out.append(B58[rem])
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + "".join(reversed(out))


def simulate(transactions: int, seed: int, mean_gap_ms: int = 2_000,
             modes: tuple[int, ...] = (1, 2, 3)) -> list[LogRecord]:
    """Run ``transactions`` redeems from Poisson arrivals; return the log."""
    env = simpy.Environment()
    _Run(env, seed).start(transactions, mean_gap_ms, modes)
    env.run()
    return env.log  # type: ignore[attr-defined, no-any-return]


def run_same_work(transactions: int, seed: int,
                  clock: Callable[[], float] = time.perf_counter) -> float:
    """The seconds (by ``clock``) the run takes, set-up excluded, as ``run_model`` times."""
    env = simpy.Environment()
    run = _Run(env, seed)
    run.start(transactions, 2_000, (1, 2, 3))
    start = clock()
    env.run()
    wall = clock() - start
    assert run.settled == transactions, f"only {run.settled} of {transactions} settled"
    return wall


class _Run:
    """One world's state: the log, streams, balances and the issuer's instructions."""

    def __init__(self, env: simpy.Environment, seed: int) -> None:
        self.env = env
        self.log: list[LogRecord] = []
        env.log = self.log  # type: ignore[attr-defined]
        self.ids = random.Random(f"{seed}:ids")
        self.lat = random.Random(f"{seed}:latency")
        self.arrivals = random.Random(f"{seed}:workload")
        self.balances: dict[tuple[str, str], Decimal] = {}
        self.rtgs: dict[str, Decimal] = {issuer: Decimal("10000000.00")
                                         for issuer in ISSUERS.values()}
        self.rtgs[MEMBER] = Decimal("0.00")
        for mode in ISSUERS:
            self.balances[(WALLET[mode], ASSET[mode])] = Decimal("10000.00")
        self.instructions: dict[str, list[Any]] = {}  # id -> [status, txHash, seq, at]
        self.idempotency: dict[str, str] = {}  # the issuer's: key -> instruction id
        self.transactions: dict[str, dict[str, Any]] = {}  # the current state of each
        self.settled = 0

    # small helpers -------------------------------------------------------------------------
    def record(self, kind: str, **fields: Any) -> None:
        log = self.log
        log.append((int(self.env.now), len(log), kind, fields))

    def lognormal(self, median: float, sigma: float, cap: int) -> int:
        return min(cap, max(1, round(median * exp(sigma * self.lat.gauss(0.0, 1.0)))))

    def finality(self, ledger: str) -> int:
        if ledger == "evm":
            return self.lognormal(13_000, 0.3, 60_000)
        low, high = (4_000, 6_000) if ledger == "stellar" else (400, 1_600)
        return self.lat.randint(low, high)

    def uuid4(self) -> str:
        h = "%032x" % (self.ids.getrandbits(128) & UUID4_KEEP | UUID4_SET)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def receipt(self, ledger: str) -> tuple[str, int]:
        digest = self.ids.randbytes(64)
        if ledger == "stellar":
            tx_hash = digest[:32].hex()
        elif ledger == "evm":
            tx_hash = "0x" + digest[:32].hex()
        else:
            tx_hash = _base58(digest)
        return tx_hash, GENESIS[ledger] + int(self.env.now) // BLOCK_MS[ledger]

    def move(self, source: tuple[str, str] | None, target: tuple[str, str] | None,
             amount: Decimal) -> None:
        balances = self.balances
        if source is not None:
            after = balances.get(source, Decimal(0)) - amount
            assert after >= 0
            balances[source] = after
        if target is not None:
            balances[target] = balances.get(target, Decimal(0)) + amount

    def ledger_op(self, op: str, mode: int, tx: str, account: str, amount: Decimal,
                  **more: str) -> str:
        ledger = LEDGER[mode]
        tx_hash, sequence = self.receipt(ledger)
        self.record(f"ledger.{op}", ledger=ledger, txHash=tx_hash, ledgerSequence=sequence,
                    asset=ASSET[mode], amount=str(amount), transactionId=tx, account=account,
                    **more)
        return tx_hash

    def steps(self, tx: str, done: int) -> None:
        self.record("saga.step", transactionId=tx, index=done, name=STEPS[done], status="done")
        self.record("saga.step", transactionId=tx, index=done + 1, name=STEPS[done + 1],
                    status="current")

    def state(self, tx: str, reference: str, status: str, event: str, trigger: str,
              terminal: bool = False) -> None:
        held = self.transactions[tx]
        held["lifecycleStatus"], held["terminal"] = status, terminal
        held["updatedAtMs"] = int(self.env.now)
        self.record("transaction.state", transactionId=tx, paymentReference=reference,
                    lifecycleStatus=status, parked=False, terminal=terminal, event=event,
                    trigger=trigger, reason=None)

    # the workload --------------------------------------------------------------------------
    def start(self, transactions: int, mean_gap_ms: int, modes: tuple[int, ...]) -> None:
        self.env.process(self._arrivals(transactions, mean_gap_ms, modes))

    def _arrivals(self, count: int, mean_gap_ms: int,
                  modes: tuple[int, ...]) -> Generator[simpy.Event, Any, None]:
        rng = self.arrivals
        for i in range(count):
            yield self.env.timeout(round(rng.expovariate(1.0 / mean_gap_ms)))
            mode = modes[rng.randrange(len(modes))]
            self.env.process(self.saga(mode, f"WL-{i:06d}", Decimal("10.00")))

    # the saga ------------------------------------------------------------------------------
    def saga(self, mode: int, reference: str,
             amount: Decimal) -> Generator[simpy.Event, Any, None]:
        env, tx, issuer = self.env, self.uuid4(), ISSUERS[mode]
        fee = max(PENNY, (amount * FEE_BPS / Decimal(10_000)).quantize(PENNY, ROUND_HALF_EVEN))
        self.transactions[tx] = {
            "transactionId": tx, "paymentReference": reference, "asset": ASSET[mode],
            "debitAmount": amount, "platformFeeAmount": fee, "receiveAmount": amount - fee,
            "initiatedAtMs": int(env.now), "updatedAtMs": int(env.now)}
        for index, name in enumerate(STEPS):
            status = "done" if index < 2 else "current" if index == 2 else "pending"
            self.record("saga.step", transactionId=tx, index=index, name=name, status=status)
        self.state(tx, reference, "received", "transaction.received", "initiated")
        yield env.timeout(200)
        self.state(tx, reference, "in-flight", "transaction.in_flight", "validated")
        yield env.timeout(self.finality(LEDGER[mode]))
        self.move((WALLET[mode], ASSET[mode]), (f"lock:{tx}", ASSET[mode]), amount)
        self.ledger_op("lock", mode, tx, WALLET[mode], amount)
        self.steps(tx, 2)
        yield env.timeout(self.lognormal(400, 0.3, 5_000))
        self.rtgs[issuer] -= amount
        self.rtgs[f"earmark:{tx}"] = amount
        self.record("rtgs.earmark", transactionId=tx, account=issuer, amountGbp=str(amount))
        self.steps(tx, 3)
        if mode == 1:
            yield env.timeout(self.finality("stellar"))
            self.move((f"lock:{tx}", ASSET[1]), None, amount)
            tx_hash = self.ledger_op("burn", 1, tx, WALLET[1], amount)
            self.record("saga.event", transactionId=tx, event="Burned", txHash=tx_hash)
        else:
            yield from self.issuer_burn(mode, tx, amount)
        self.steps(tx, 4)
        yield env.timeout(self.lognormal(400, 0.3, 5_000))
        quote = self.transactions[tx]
        fee, net = quote["platformFeeAmount"], quote["receiveAmount"]
        del self.rtgs[f"earmark:{tx}"]
        self.rtgs[MEMBER] += net
        self.rtgs["operator"] = self.rtgs.get("operator", Decimal(0)) + fee
        self.record("rtgs.settle", transactionId=tx, account=issuer, creditor=MEMBER,
                    amountGbp=str(net), feeGbp=str(fee), settledBy="operator")
        self.record("saga.step", transactionId=tx, index=5, name="Settled", status="done")
        self.state(tx, reference, "settled", "transaction.settled", "proof_complete", True)
        self.settled += 1

    def issuer_burn(self, mode: int, tx: str,
                    amount: Decimal) -> Generator[simpy.Event, Any, None]:
        """Modes 2 and 3: the burn instruction sent, its answers awaited, read back."""
        env, issuer = self.env, ISSUERS[mode]
        key = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{tx}:burn"))
        account = WALLET[mode]
        if mode == 3:
            yield env.timeout(self.finality("solana"))
            self.move((f"lock:{tx}", ASSET[3]), (TREASURY, ASSET[3]), amount)
            self.ledger_op("transfer", 3, tx, WALLET[3], amount, toAccount=TREASURY)
            account = TREASURY
            deadline = env.timeout(SLA_MS)
            self.record("saga.instruction_sent", transactionId=tx, leg="burn", issuerId=issuer,
                        idempotencyKey=key, deadlineMs=int(env.now) + SLA_MS)
        else:
            self.record("saga.instruction_sent", transactionId=tx, leg="burn", issuerId=issuer,
                        idempotencyKey=key)
        yield env.timeout(self.lognormal(80, 0.3, 2_000))
        instruction, wake = self.issuer_receive(mode, tx, key, account, amount)
        if mode == 2:
            deadline = env.timeout(SLA_MS)
            self.record("saga.execute_sent", transactionId=tx, leg="burn",
                        instructionId=instruction, deadlineMs=int(env.now) + SLA_MS)
            yield env.timeout(self.lognormal(80, 0.3, 2_000))
            self.record("issuer.request", issuerId=issuer,
                        route="POST /instructions/{id}/execute", instructionId=instruction)
            wake[2].succeed()
        while True:
            if mode == 3:
                yield env.any_of([env.timeout(POLL_MS), deadline])
            elif not wake[1]:
                wake[0] = env.event()
                yield env.any_of([wake[0], deadline])
            wake[1] = 0
            yield env.timeout(self.lognormal(80, 0.3, 2_000))
            self.record("issuer.request", issuerId=issuer, route="GET /instructions/{id}",
                        instructionId=instruction)
            status, tx_hash, sequence, _ = self.instructions[instruction]
            if status == "COMPLETED":
                break
        self.record("saga.event", transactionId=tx, event="Burned", txHash=tx_hash,
                    ledgerSequence=sequence, instructionId=instruction)

    # the simulated issuer ------------------------------------------------------------------
    def issuer_receive(self, mode: int, tx: str, key: str, account: str,
                       amount: Decimal) -> tuple[str, list[Any]]:
        issuer = ISSUERS[mode]
        self.record("issuer.request", issuerId=issuer, route="POST /burn-instructions",
                    idempotencyKey=key, reference=tx.replace("-", ""))
        instruction = self.idempotency.setdefault(key, self.uuid4())
        wake: list[Any] = [None, 0, self.env.event()]  # saga's wake, unseen notices, execute
        self.instructions[instruction] = ["RECEIVED", None, None, None]
        self.issuer_status(mode, tx, instruction, "RECEIVED", wake, notify=False)
        self.env.process(self.issuer_progress(mode, tx, instruction, account, amount, wake))
        return instruction, wake

    def issuer_status(self, mode: int, tx: str, instruction: str, status: str,
                      wake: list[Any], notify: bool = True) -> None:
        held = self.instructions[instruction]
        held[0] = status
        self.record("issuer.instruction", issuerId=ISSUERS[mode], instructionId=instruction,
                    transactionId=tx, leg="burn", status=status)
        if mode == 2 and notify:
            self.env.process(self.webhook(instruction, list(held), wake))

    def issuer_progress(self, mode: int, tx: str, instruction: str, account: str,
                        amount: Decimal, wake: list[Any]) -> Generator[simpy.Event, Any, None]:
        env = self.env
        yield env.timeout(self.lognormal(500, 0.4, 10_000))
        self.issuer_status(mode, tx, instruction, "PENDING_APPROVAL", wake)
        if mode == 2:
            yield wake[2]  # held at PENDING_APPROVAL until execute
        yield env.timeout(self.lognormal(20_000, 0.5, 300_000))
        self.issuer_status(mode, tx, instruction, "APPROVED", wake)
        yield env.timeout(self.lognormal(1_000, 0.3, 10_000))
        self.issuer_status(mode, tx, instruction, "EXECUTING", wake)
        yield env.timeout(self.finality(LEDGER[mode]))
        self.move((account, ASSET[mode]) if mode == 3 else (f"lock:{tx}", ASSET[mode]),
                  None, amount)
        tx_hash = self.ledger_op("burn", mode, tx, account, amount)
        held = self.instructions[instruction]
        ledger = LEDGER[mode]
        held[1:] = [tx_hash, GENESIS[ledger] + int(env.now) // BLOCK_MS[ledger], int(env.now)]
        self.issuer_status(mode, tx, instruction, "COMPLETED", wake)

    def webhook(self, instruction: str, held: list[Any],
                wake: list[Any]) -> Generator[simpy.Event, Any, None]:
        """A signed status webhook: body written, signed, delivered, verified, noted."""
        status, tx_hash, sequence, at_ms = held
        yield self.env.timeout(self.lognormal(250, 0.4, 5_000))
        finalized = None if at_ms is None else \
            f'"2026-01-01T{at_ms // 3_600_000:02d}:{at_ms // 60_000 % 60:02d}:' \
            f'{at_ms // 1000 % 60:02d}.{at_ms % 1000:03d}Z"'
        on_chain = "null" if tx_hash is None else f'"{tx_hash}"'
        body = (f'{{"finalizedAt":{finalized or "null"},"instructionId":"{instruction}",'
                f'"onchain":{{"ledgerSequence":{"null" if sequence is None else sequence},'
                f'"txHash":{on_chain}}},"status":"{status}"}}').encode()
        t = 1_767_225_600 + int(self.env.now) // 1000
        header = f"t={t},v1={hmac.new(SECRET, b'%d.' % t + body, sha256).hexdigest()}"
        # the receiver: parse the header, recompute, compare in constant time
        parts = dict(part.split("=", 1) for part in header.split(","))
        expected = hmac.new(SECRET, parts["t"].encode() + b"." + body, sha256).hexdigest()
        verified = hmac.compare_digest(expected, parts["v1"])
        self.record("issuer.webhook", issuerId=ISSUERS[2], instructionId=instruction,
                    verified=verified, outcome="prompt")
        wake[1] += 1
        if wake[0] is not None and not wake[0].triggered:
            wake[0].succeed()
