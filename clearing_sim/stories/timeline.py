"""One transaction's story in virtual time, read from a world's event log.

Public names: ``Entry``, ``describe``, ``offset_text``, ``related_records``, ``render_story``,
``transaction_story``.

``transaction_story(world, transaction_id)`` picks every record about the transaction: its
state changes and public events, saga steps and notes, the instructions sent to issuers and
the statuses they took (and, through the instruction ids, the issuer's status webhooks and
forged ones), ledger and RTGS actions, and every webhook event fanned out for it with each
delivery attempt, arrival and final outcome. Status polls of the issuer are left out unless
``polls`` is set: a Mode 2 burn can poll hundreds of times. ``render_story`` prints one line
per entry, with the time since the transaction was initiated and the absolute ISO time.
Given ``names`` (id → the name a scenario file uses), ids are shown as those names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from attrs import frozen

from clearing_sim.domain.timefmt import duration_text
from clearing_sim.sim.eventlog import Record
from clearing_sim.sim.world import World

__all__ = ["Entry", "describe", "offset_text", "related_records", "render_story",
           "transaction_story"]


@frozen
class Entry:
    at_ms: int
    seq: int
    lane: str  # state | saga | issuer | ledger | rtgs | webhook | fault
    text: str


class _Name(str):
    """A name from the scenario file: shown whole, never shortened like an id."""

    __slots__ = ()


def _short(value: Any, n: int = 12) -> str:
    text = str(value)
    return text if isinstance(value, _Name) or len(text) <= n + 1 else text[:n] + "…"


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def _state(r: Record) -> str:
    parked = " (parked)" if r["parked"] else ""
    reason = f", reason {r['reason']}" if r.get("reason") else ""
    return f"{r['lifecycleStatus']}{parked}: event {r['event']}{reason}"


def _step(r: Record) -> str:
    return f"step {int(str(r['index'])) + 1} {r['name']}: {r['status']}"


def _saga_event(r: Record) -> str:
    extra = {k: v for k, v in r.fields.items() if k not in ("transactionId", "event")}
    shown = ", ".join(f"{k} {_short(v)}" for k, v in extra.items())
    return f"{r['event']}" + (f" ({shown})" if shown else "")


def _sent(r: Record) -> str:
    return (f"{r['leg']} instruction sent to issuer {_short(r['issuerId'], 8)} "
            f"(idempotency key {_short(r['idempotencyKey'], 8)}, {_parks_in(r)})")


def _execute_sent(r: Record) -> str:
    return f"{r['leg']} execute sent for {_short(r['instructionId'], 8)} ({_parks_in(r)})"


def _parks_in(r: Record) -> str:
    """When the request's SLA runs out; a Mode 2 instruction's counts from its execute."""
    if r.get("deadlineMs") is None:
        return "its SLA counts from the execute call"
    return f"parks in {duration_text(int(str(r['deadlineMs'])) - r.at_ms)} without an answer"


def _ledger(r: Record) -> str:
    op = r.kind.split(".", 1)[1]
    to = f" to {_short(r['toAccount'])}" if r.get("toAccount") else ""
    return (f"{r['ledger']} {op} {r['amount']} {r['asset']} from {_short(r['account'])}{to} "
            f"(tx {_short(r['txHash'])}, sequence {r['ledgerSequence']})")


def _rtgs(r: Record) -> str:
    if r.kind == "rtgs.closed_wait":  # the scheme is closed (an RTGS calendar, beyond the spec)
        reopens = r.get("reopensAt")
        return (f"{r['operation']} waits: the RTGS is closed, "
                f"{'reopens ' + str(reopens) if reopens is not None else 'never reopens'}")
    op = r.kind.split(".", 1)[1]
    fee = f", fee {r['feeGbp']}" if r.get("feeGbp") else ""
    return f"{op} {r['amountGbp']} GBP, account {_short(r['account'])}{fee}"


def _attempt(r: Record) -> str:
    sent = int(str(r["sentAtMs"]))
    answer = (f"answered {r['status']} after {duration_text(r.at_ms - sent)}"
              if r["status"] is not None else f"{r['fault']} after {duration_text(r.at_ms - sent)}")
    following = (f"; next attempt {duration_text(int(str(r['nextAttemptAtMs'])) - sent)} after "
                 "this one was sent" if r.get("nextAttemptAtMs") is not None else "")
    return (f"attempt {r['attempt']} of {_short(r['eventId'], 16)} to {r['url']}: "
            f"{answer}, {r['outcome']}{following}")


_TEXT: dict[str, tuple[str, Callable[[Record], str]]] = {
    "transaction.state": ("state", _state),
    "saga.step": ("saga", _step),
    "saga.event": ("saga", _saga_event),
    "saga.instruction_sent": ("issuer", _sent),
    "saga.execute_sent": ("issuer", _execute_sent),
    "saga.compensation": ("saga", lambda r: f"compensated: the source issuer gave the burned "
                          f"value back ({r['reason']})"),
    "saga.refund": ("saga", lambda r: f"refund noted ({r['reason']})"),
    "issuer.instruction": ("issuer", lambda r: f"{r['leg']} instruction "
                           f"{_short(r['instructionId'], 8)}: {r['status']}"),
    "issuer.armed": ("issuer", lambda r: f"conformance armed: {r['outcome']}"),
    "issuer.armed_applied": ("issuer", lambda r: f"armed outcome applied: {r['outcome']}"),
    "issuer.silent": ("issuer", lambda r: f"issuer goes silent at {r['status']}"),
    "issuer.expired": ("issuer", lambda r: f"instruction closed at the issuer ({r['status']})"),
    "issuer.refund": ("issuer", lambda r: f"refund {r['status']} ({r['reason']})"),
    "issuer.request": ("issuer", lambda r: f"{r['route']}"),
    "issuer.webhook": ("issuer", lambda r: "status webhook "
                       + ("verified: a prompt" if r["verified"] else "not verified: dropped")),
    "fault.issuer_webhook": ("fault", lambda r: f"forged issuer webhook ({r['forgery']}, "
                             f"claims {r['claimedStatus']})"),
    "rtgs.refused": ("rtgs", lambda r: f"refused {r['amountGbp']} GBP"),
    "webhook.event": ("webhook", lambda r: f"event {r['type']} {_short(r['eventId'], 16)} to "
                      f"{_count(r['subscriptionIds'])} subscription(s)"),
    "webhook.attempt": ("webhook", _attempt),
    "webhook.arrival": ("webhook", lambda r: f"arrival of {_short(r['eventId'], 16)} attempt "
                        f"{r['attempt']}" + (" (network duplicate)" if r["copy"] else "")
                        + f" at {r['url']}: answered {r['status']}"),
    "webhook.delivery_failed": ("webhook", lambda r: f"delivery of {_short(r['eventId'], 16)} "
                                f"failed after {r['attempts']} attempts"),
    "webhook.delivery_dropped": ("webhook", lambda r: f"delivery of "
                                 f"{_short(r['eventId'], 16)} dropped ({r['reason']})"),
}


def describe(r: Record) -> tuple[str, str]:
    """The lane and the one-line text of a record about a transaction."""
    if r.kind in _TEXT:
        lane, text = _TEXT[r.kind]
        return lane, text(r)
    if r.kind.startswith("ledger."):
        return "ledger", _ledger(r)
    if r.kind.startswith("rtgs."):
        return "rtgs", _rtgs(r)
    fields = ", ".join(f"{k}={_short(v)}" for k, v in r.fields.items() if k != "transactionId")
    return r.kind.split(".", 1)[0], f"{r.kind} {fields}"


def related_records(records: Iterable[Record], transaction_id: str,
                    polls: bool) -> list[Record]:
    """Every record about the transaction, in log order (issuer polls only with ``polls``)."""
    instructions: set[str] = set()
    events: set[str] = set()
    picked: list[Record] = []
    for r in records:
        if r.kind == "api.request":
            continue
        if r.get("transactionId") == transaction_id:
            if r.kind == "issuer.instruction":
                instructions.add(str(r["instructionId"]))
            elif r.kind == "webhook.event":
                events.add(str(r["eventId"]))
            picked.append(r)
        elif r.get("instructionId") in instructions:
            if polls or r.kind != "issuer.request":
                picked.append(r)
        elif r.get("eventId") in events:
            picked.append(r)
    return picked


def _named(r: Record, names: Mapping[str, str]) -> Record:
    """The record with every id the file gave a name to (a participant, its wallet, a
    subscription, an agent, a saved transaction) replaced by that name."""
    if not names:
        return r
    fields = {k: _Name(names[v]) if isinstance(v, str) and v in names
              and k != "transactionId" else v for k, v in r.fields.items()}
    return Record(r.at_ms, r.seq, r.kind, fields)


def transaction_story(world: World, transaction_id: str, *, polls: bool = False,
                      names: Mapping[str, str] | None = None) -> list[Entry]:
    """Every fact about one transaction, in log order; ``names`` maps ids to the names a
    scenario file gave them, shown instead of the ids."""
    entries = []
    for r in related_records(world.log, transaction_id, polls):
        lane, text = describe(_named(r, names or {}))
        entries.append(Entry(r.at_ms, r.seq, lane, text))
    return entries


def offset_text(ms: int) -> str:
    """``+H:MM:SS.mmm`` (hours right-aligned in five characters)."""
    sign = "-" if ms < 0 else "+"
    ms = abs(ms)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{sign + str(hours):>5}:{minutes:02}:{rest / 1000:06.3f}"


def render_story(world: World, entries: list[Entry]) -> list[str]:
    """``+H:MM:SS.mmm  ISO-time  lane     text`` per entry, from the first entry's time."""
    if not entries:
        return []
    start = entries[0].at_ms
    return [f"{offset_text(e.at_ms - start)}  {world.iso(e.at_ms)}  {e.lane:<7}  {e.text}"
            for e in entries]
