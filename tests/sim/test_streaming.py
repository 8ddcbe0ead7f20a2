"""A world's long-run options: a log streamed to a sink, and forgetting finished transactions.

``World(log_sink=..., retain_log=False)`` writes each record's canonical line as it is appended
and keeps the digest incrementally; ``forget_terminal=True`` drops a transaction's bookkeeping
once its saga has ended terminal. Neither may change what happens: the same seed gives the same
log, line for line, and the same digest (DESIGN.md, "A run's log digest is its fingerprint").
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import pytest

from clearing_sim.domain.lifecycle import EventType
from clearing_sim.domain.transaction import UseCase
from clearing_sim.sim.eventlog import EventLog, LogNotRetained
from clearing_sim.sim.examples import Cast, example_world, redeem, swap
from clearing_sim.sim.issuer import IssuerBehaviour
from clearing_sim.sim.receivers import ReceiverBehaviour
from clearing_sim.sim.world import World

_OUTCOMES = IssuerBehaviour(p_rejected=0.1, p_failed=0.1, p_silence=0.1)
_HOOK = "https://hooks.northbank.example/clearing"


def _mixed_run(seed: int, **world_options: Any) -> Cast:
    """60 redeems and swaps across the three modes, every path (settled, rejected, failed and
    parked, silent past the SLA, cancelled, insufficient funds) and a subscription to every
    event whose receiver is flaky and loses requests, run until nothing is scheduled."""
    cast = example_world(seed, approval_sla_s=120,
                         behaviours={2: _OUTCOMES, 3: _OUTCOMES}, **world_options)
    world = cast.world
    world.subscriptions.create(cast.member.id, _HOOK, tuple(EventType))
    world.webhooks.set_receiver(_HOOK, ReceiverBehaviour.failing(503, until_ms=600_000,
                                                                 p_lost=0.1, p_duplicate=0.1))
    world.env.process(_arrivals(cast))
    world.run_all()
    return cast


def _arrivals(cast: Cast) -> Any:
    world = cast.world
    for n in range(60):
        yield world.env.timeout(7_000)
        mode = 1 + n % 3
        amount = "20000.00" if n == 13 else "100.00"  # one lock refused: insufficient funds
        if n % 5 == 4:
            request = swap(cast.asset(mode), cast.asset(1 + (n + 1) % 3), amount, f"S-{n}")
        else:
            request = redeem(cast.asset(mode), amount, f"R-{n}")
        tx = world.initiate(cast.member.id, request)
        if n % 11 == 10:  # cancelled while still cancellable
            world.env.process(_cancel_soon(world, tx.id))


def _cancel_soon(world: World, transaction_id: str) -> Any:
    yield world.env.timeout(250)
    world.cancel(transaction_id)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forgetting_and_streaming_leave_the_log_and_digest_unchanged(seed: int) -> None:
    plain = _mixed_run(seed).world
    forgetting = _mixed_run(seed, forget_terminal=True).world
    sink = io.StringIO()
    streamed = _mixed_run(seed, log_sink=sink, retain_log=False, forget_terminal=True).world

    lines = list(plain.log.lines())
    assert list(forgetting.log.lines()) == lines
    assert sink.getvalue() == "".join(line + "\n" for line in lines)
    assert forgetting.log.digest() == streamed.log.digest() == plain.log.digest()
    assert len(streamed.log) == len(plain.log)
    # the run covered the paths forgetting has to survive
    events = {str(r["event"]) for r in plain.log.select("transaction.state")}
    assert {"transaction.settled", "transaction.cancelled", "transaction.failed",
            "transaction.parked"} <= events
    assert plain.log.select("issuer.refund")  # a Mode 3 refund after a parked burn
    assert plain.log.select("webhook.attempt")


def test_a_forgetting_world_ends_with_no_bookkeeping_left() -> None:
    world = _mixed_run(0, forget_terminal=True).world
    assert len(world.transactions) == 0 and world.sagas == {}
    for gateway in world.issuers.values():
        assert gateway.instructions == {} and gateway.armed == {}
    assert world.issuer_inbox._prompts == {}
    assert world.webhooks.events == [] and world.webhooks.deliveries == []
    plain = _mixed_run(0).world
    assert len(plain.transactions) == 60 and len(plain.webhooks.deliveries) > 0


def test_a_forgetting_world_forgets_nothing_still_open() -> None:
    """Only terminal transactions are forgotten: one still in flight stays readable."""
    cast = example_world(0, forget_terminal=True)
    world = cast.world
    settled = world.initiate(cast.member.id, redeem(cast.asset(1), reference="A"))
    world.advance(120_000)
    slow = world.initiate(cast.member.id, redeem(cast.asset(2), reference="B"))
    world.advance(1_000)
    assert settled.id not in world.transactions
    assert world.transactions[slow.id].use_case is UseCase.REDEEM
    assert not world.transactions[slow.id].terminal


def test_the_incremental_digest_is_the_sha256_of_the_streamed_file() -> None:
    sink = io.StringIO()
    world = _mixed_run(1, log_sink=sink, retain_log=False, forget_terminal=True).world
    text = sink.getvalue()
    assert text.endswith("\n")
    assert hashlib.sha256(text[:-1].encode()).hexdigest() == world.log.digest()


def test_a_binary_sink_gets_the_text_sinks_bytes(tmp_path: Path) -> None:
    """A file opened "wb" takes the lines as hashed (UTF-8, not decoded and encoded again):
    byte for byte what a text file holds, the same digest."""
    text = io.StringIO()
    by_text = _mixed_run(2, log_sink=text, retain_log=False, forget_terminal=True).world
    with (tmp_path / "log.jsonl").open("wb") as binary:
        by_bytes = _mixed_run(2, log_sink=binary, retain_log=False, forget_terminal=True).world
    assert (tmp_path / "log.jsonl").read_bytes() == text.getvalue().encode()
    assert by_bytes.log.digest() == by_text.log.digest()
    sink = io.BytesIO()
    log = EventLog(lambda: 0, sink, retain=False)  # non-ASCII goes through as UTF-8
    log.append("a.fact", name="Zürich ✓")
    assert sink.getvalue() == '{"at":0,"kind":"a.fact","name":"Zürich ✓","seq":0}\n'.encode()


def test_a_log_that_keeps_no_records_says_so_when_read() -> None:
    log = EventLog(lambda: 0, io.StringIO(), retain=False)
    log.append("a.fact", n=1)
    assert len(log) == 1
    for read in (lambda: list(log), lambda: log.select("a.fact"), lambda: list(log.lines())):
        with pytest.raises(LogNotRetained):
            read()


def test_a_sink_with_retained_records_reads_back_as_before() -> None:
    sink = io.StringIO()
    log = EventLog(lambda: 5, sink)
    log.append("a.fact", n=1)
    log.append("b.fact", n=2)
    assert [r.kind for r in log] == ["a.fact", "b.fact"]
    assert sink.getvalue().splitlines() == list(log.lines())
    plain = EventLog(lambda: 5)
    plain.append("a.fact", n=1)
    plain.append("b.fact", n=2)
    assert log.digest() == plain.digest()
