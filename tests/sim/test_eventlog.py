"""The event log: records, selection, canonical JSON lines and the run's digest.

DESIGN.md, "The event log is the spine": every observable fact is one record; the canonical
JSON-lines form (sorted keys, no spaces) hashes to the run's digest, sha256 of the lines
joined by ``\\n``. The public events (spec, "Events") are exactly six types.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest

from clearing_sim.domain.instruction import Outcome
from clearing_sim.sim.eventlog import EventLog, Record
from clearing_sim.sim.examples import Cast, example_world, redeem, swap

PUBLIC_EVENTS = {"transaction.received", "transaction.in_flight", "transaction.settled",
                 "transaction.cancelled", "transaction.parked", "transaction.failed"}


@pytest.fixture
def log() -> EventLog:
    times = [0, 5, 5, 12]
    log = EventLog(lambda: times.pop(0) if times else 20)
    log.append("ledger.lock", z=1, a="x y", amount="100.00")
    log.append("ledger.burn", account="£ acct")
    log.append("rtgs.earmark", amountGbp="1.00", transactionId="t1")
    log.append("ledger.lock", z=2, transactionId="t1")
    return log


def test_records_carry_time_sequence_kind_and_fields(log: EventLog) -> None:
    assert [(r.at_ms, r.seq, r.kind) for r in log] == [
        (0, 0, "ledger.lock"), (5, 1, "ledger.burn"), (5, 2, "rtgs.earmark"),
        (12, 3, "ledger.lock")]
    first = next(iter(log))
    assert (first["a"], first.get("missing"), first.get("missing", 7)) == ("x y", None, 7)
    assert len(log) == 4


def test_select_by_kind_family_and_fields(log: EventLog) -> None:
    assert [r.seq for r in log.select("ledger.lock")] == [0, 3]
    assert [r.seq for r in log.select("ledger.")] == [0, 1, 3]
    assert [r.seq for r in log.select("ledger")] == []  # a family needs its dot
    assert [r.seq for r in log.select(None, transactionId="t1")] == [2, 3]
    assert [r.seq for r in log.select("ledger.lock", z=2)] == [3]


def test_canonical_form_is_sorted_keys_without_spaces(log: EventLog) -> None:
    lines = list(log.lines())
    assert lines[0] == '{"a":"x y","amount":"100.00","at":0,"kind":"ledger.lock","seq":0,"z":1}'
    assert lines[1] == '{"account":"£ acct","at":5,"kind":"ledger.burn","seq":1}'


def test_digest_is_sha256_of_the_lines_joined_by_newlines(log: EventLog) -> None:
    expected = hashlib.sha256("\n".join(log.lines()).encode()).hexdigest()
    assert log.digest() == log.digest() == expected
    log.append("x.y")
    assert log.digest() != expected


def test_write_jsonl_writes_the_canonical_lines(log: EventLog, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with path.open("w", encoding="utf-8") as out:
        log.write_jsonl(out)
    assert path.read_text(encoding="utf-8") == "".join(line + "\n" for line in log.lines())


def test_listeners_see_every_record_as_it_is_appended() -> None:
    seen: list[Record] = []
    log = EventLog(lambda: 0)
    log.listen(seen.append)
    log.append("a.b", n=1)
    log.append("a.c")
    assert seen == list(log)


def _busy_run() -> Cast:
    cast = example_world(0)
    world = cast.world
    for mode in (1, 2, 3):
        world.initiate(cast.member.id, redeem(cast.asset(mode), reference=f"R{mode}"))
    rejected = world.initiate(cast.member.id, swap(cast.asset(2), cast.asset(3)))
    world.arm(rejected.id, Outcome.REJECTED)
    silent = world.initiate(cast.member.id, swap(cast.asset(3), cast.asset(2)))
    world.arm(silent.id, Outcome.SILENCE)
    cancelled = world.initiate(cast.member.id, redeem(cast.asset(2), reference="C"))
    world.cancel(cancelled.id)
    world.run_all()
    return cast


_ENVELOPE = ("at", "seq", "kind")


def test_a_run_logs_canonical_json_in_time_order() -> None:
    cast = _busy_run()
    records = list(cast.world.log)
    for i, (record, line) in enumerate(zip(records, cast.world.log.lines(), strict=True)):
        body = json.loads(line)
        assert json.dumps(body, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False) == line
        assert (body["at"], body["seq"]) == (record.at_ms, i)
        fields = {k: v for k, v in record.fields.items() if k not in _ENVELOPE}
        assert {k: v for k, v in body.items() if k not in _ENVELOPE} == fields  # JSON only
    assert all(a.at_ms <= b.at_ms for a, b in itertools.pairwise(records))


def test_canonical_line_keeps_the_record_kind() -> None:
    """Every observable fact is one record: its kind must survive into the JSONL export,
    which analysis and timelines read."""
    cast = _busy_run()
    kinds = [json.loads(line)["kind"] for line in cast.world.log.lines()]
    assert kinds == [r.kind for r in cast.world.log]


def test_digest_of_a_run_is_stable() -> None:
    first, second = _busy_run(), _busy_run()
    assert first.world.log.digest() == second.world.log.digest()
    assert list(first.world.log.lines()) == list(second.world.log.lines())


def test_only_the_six_public_event_types_are_published() -> None:
    cast = _busy_run()
    events = {r["event"] for r in cast.world.log.select("transaction.state")}
    assert events == PUBLIC_EVENTS  # this run reaches all six, and nothing else


def test_every_saga_step_change_is_logged() -> None:
    """The last ``saga.step`` record of each index is the step as the transaction holds it."""
    cast = _busy_run()
    world = cast.world
    for tx in world.transactions:
        last: dict[int, tuple[str, str]] = {}
        for r in world.log.select("saga.step", transactionId=tx.id):
            last[int(str(r["index"]))] = (str(r["name"]), str(r["status"]))
        assert [last[i] for i in range(len(tx.saga.steps))] == [
            (s.name.value, s.status.value) for s in tx.saga.steps]



def test_a_listener_for_one_kind_hears_only_it_and_unlisten_stops_any_listener() -> None:
    log = EventLog(lambda: 0)
    every: list[str] = []
    some: list[str] = []

    def hear_every(record: Record) -> None:
        every.append(record.kind)

    def hear_some(record: Record) -> None:
        some.append(record.kind)

    log.listen(hear_every)
    log.listen(hear_some, "a.b")
    log.append("a.b")
    log.append("c.d")
    assert every == ["a.b", "c.d"] and some == ["a.b"]
    log.unlisten(hear_some)
    log.unlisten(hear_every)
    log.append("a.b")
    assert every == ["a.b", "c.d"] and some == ["a.b"]
    with pytest.raises(ValueError):
        log.unlisten(hear_some)


def _floats(value: object, path: str) -> list[str]:
    if isinstance(value, float):
        return [path]
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in _floats(v, f"{path}.{k}")]
    if isinstance(value, list | tuple):
        return [f for i, v in enumerate(value) for f in _floats(v, f"{path}[{i}]")]
    return []


def test_the_log_holds_no_float_across_the_scenario_library_and_a_workload(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The canonical form (``jsontext.canonical_encoder``) is ``json.dumps``'s byte for byte
    for every value but floats: every record of the scenario library's runs and of the
    analysts' mixed workload (swaps, drawn outcomes, webhooks, a receiver outage) is free
    of them (amounts are decimal strings, times integer milliseconds)."""
    from click.testing import CliRunner

    from clearing_sim.analysis.driver import WorkloadDriver
    from clearing_sim.analysis.loader import load_workload
    from clearing_sim.cli import main

    found: list[str] = []
    kinds: set[str] = set()
    append = EventLog.append

    def scanning(self: EventLog, kind: str, /, **fields: object) -> Record:
        kinds.add(kind)
        found.extend(_floats(fields, kind))
        return append(self, kind, **fields)  # type: ignore[arg-type]

    monkeypatch.setattr(EventLog, "append", scanning)
    root = Path(__file__).resolve().parents[2]
    # -j 1: the scan patches this process's EventLog, so the scenarios must play here
    result = CliRunner().invoke(main, ["run", str(root / "scenarios"), "-j", "1"])
    assert result.exit_code == 0, result.output
    WorkloadDriver(load_workload(root / "notebooks" / "inputs" / "mixed.yaml"), 0).run()
    assert len(kinds) > 40 and found == []
