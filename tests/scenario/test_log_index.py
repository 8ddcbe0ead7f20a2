"""``LogIndex.select`` answers what ``EventLog.select`` answers, in log order (issue 30, §3:
the runner's waits read an index instead of scanning the log at every poll)."""

from __future__ import annotations

from typing import Any

from clearing_sim.scenario.log_index import LogIndex
from clearing_sim.sim.eventlog import EventLog, Record

QUERIES: list[tuple[str | None, dict[str, Any]]] = [
    ("transaction.state", {}),
    ("transaction.state", {"transactionId": "tx_1"}),
    ("transaction.state", {"transactionId": "tx_1", "event": "settled"}),
    ("transaction.state", {"transactionId": None}),
    ("webhook.attempt", {"attempt": 2}),
    ("webhook.attempt", {"transactionId": "tx_2", "attempt": 1}),
    ("ledger.", {}),
    (None, {"transactionId": "tx_2"}),
    ("no.such.kind", {}),
]


def _filled(log: EventLog, index: LogIndex, *, read_early: bool) -> None:
    """Records of several kinds, some appended by a listener in answer to another record
    (so the index's listener sees them before the record they answer)."""
    def answer(record: Record) -> None:
        if record.fields.get("event") == "settled":
            log.append("webhook.attempt", transactionId=record["transactionId"], attempt=1)
            log.append("webhook.attempt", transactionId=record["transactionId"], attempt=2)
            log.append("transaction.state", transactionId=record["transactionId"],
                       event="notified")

    log.listen(answer, "transaction.state")
    log.append("transaction.state", transactionId="tx_1", event="initiated")
    if read_early:  # the index is built here, its listener added after ``answer``
        index.select("transaction.state")
    for n in range(3):
        log.append("ledger.transfer", transactionId=f"tx_{n}", amount="1.00")
        log.append("transaction.state", transactionId=f"tx_{n}", event="settled")
        log.append("transaction.state", transactionId=None, event="status")
        log.append("ledger.mint", transactionId=[f"tx_{n}"])  # an unhashable value


def test_the_index_answers_what_the_log_scan_answers_in_log_order() -> None:
    for read_early in (False, True):
        log = EventLog(lambda: 0)
        index = LogIndex(log)
        _filled(log, index, read_early=read_early)
        for kind, match in QUERIES:
            assert index.select(kind, **match) == log.select(kind, **match), (kind, match)
        attempts = index.select("webhook.attempt")
        assert [r.seq for r in attempts] == sorted(r.seq for r in attempts)
        assert len(attempts) == 6


def test_records_a_listener_appends_in_answer_keep_their_log_order() -> None:
    """The case the index's ordering guards: a listener added before the index's answers a
    record with another of the same kind, which reaches the index first."""
    log = EventLog(lambda: 0)
    index = LogIndex(log)
    _filled(log, index, read_early=True)
    states = index.select("transaction.state", transactionId="tx_1")
    assert [r["event"] for r in states] == ["initiated", "settled", "notified"]
    assert [r.seq for r in index.select("transaction.state")] == \
        [r.seq for r in log.select("transaction.state")]


def test_a_counter_changes_whenever_the_select_it_counts_for_may_answer_otherwise() -> None:
    """``counter(kind, transaction_id)`` (a wait judges a fact again only when it changed):
    after every append, a select of that kind and transaction whose answer changed has a
    changed count; records of other kinds or transactions leave it as it was."""
    log = EventLog(lambda: 0)
    index = LogIndex(log)
    queries = [(kind, tx_id, {} if tx_id is None else {"transactionId": tx_id})
               for kind in ("transaction.state", "webhook.attempt", "ledger.", None)
               for tx_id in (None, "tx_1", "tx_2", 7)]
    counters = [index.counter(kind, tx_id) for kind, tx_id, _ in queries]
    before = [(c(), index.select(kind, **match)) for c, (kind, _, match) in zip(
        counters, queries, strict=True)]
    changes = 0
    appends = [("transaction.state", {"transactionId": "tx_1", "event": "settled"}),
               ("webhook.attempt", {"transactionId": "tx_2", "attempt": 1}),
               ("ledger.burn", {"transactionId": "tx_1"}),
               ("transaction.state", {"transactionId": 7}),
               ("rtgs.earmark", {})]
    for kind, fields in appends:
        log.append(kind, **fields)
        after = [(c(), index.select(k, **match)) for c, (k, _, match) in zip(
            counters, queries, strict=True)]
        for (count, found), (count_now, found_now) in zip(before, after, strict=True):
            if found != found_now:
                assert count_now != count
                changes += 1
        before = after
    assert changes >= len(appends)
    kept = index.counter("transaction.state", "tx_2")()
    log.append("transaction.state", transactionId="tx_1", event="failed")
    assert index.counter("transaction.state", "tx_2")() == kept  # another transaction's
