"""What the issuer kit holds against a gateway: refused answers, broken rules, early moves.

Public names: ``EXECUTE_HOLD_MS``, ``WAITS_FOR_EXECUTE``, ``peer_problems``,
``waits_for_execute``, ``webhook_problems``, ``webhook_steps``.

Every answer the HTTP gateway refused (``issuer.answer_refused``) and every status change it
read as a broken rule (``issuer.protocol_violation``) is evidence: ``peer_problems`` names
each once, with the request it answered and the count of repeats, so a verdict says which
rule the gateway broke ("onchain.ledgerSequence must be an integer (GET …, ×38)") rather
than what followed from it (``approval_sla_exceeded``). Status webhooks are read with the
same rules, and their signatures checked (``webhook_problems``); the statuses they tell for
one instruction are held to the allowed order, whatever order they arrived in
(``webhook_steps``): a change a poll missed is still a broken rule, and fails the check of
its transaction.

``waits_for_execute`` judges Mode 2's two-phase rule (spec, issuer instruction statuses: "In
Mode 2 the issuer stops at RECEIVED or PENDING_APPROVAL and does not execute until the execute
call arrives"; execute is "sent only after the RTGS earmark is confirmed"). The kit holds
each execute call back ``EXECUTE_HOLD_MS`` of wall time after the instruction's creation was
answered, reading the instruction meanwhile (``HttpGateway._hold_execute``); a read answered
EXECUTING, COMPLETED or with an on-chain hash, or a status webhook saying so that arrived,
all before the execute request went out, fails it. Only evidence from before the request
counts: a gateway that moves as execute arrives did wait.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clearing_sim.conformance.report import Check, Evidence, Verdict
from clearing_sim.domain.instruction import FINAL, InstructionStatus
from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.domain.signing import verify
from clearing_sim.gateway.answers import moved_before_execute, read_status_body, step_problem

if TYPE_CHECKING:
    from clearing_sim.gateway.client import CallbackQueue, HttpGateway
    from clearing_sim.sim.conformance import ConformanceRun
    from clearing_sim.sim.eventlog import EventLog

__all__ = ["EXECUTE_HOLD_MS", "WAITS_FOR_EXECUTE", "peer_problems", "waits_for_execute",
           "webhook_problems", "webhook_steps"]

#: wall time from an instruction's creation answer to its execute call, in the kit: longer
#: than the reference gateway's worst time to move at 300 ms per status step (3 × 450 ms)
EXECUTE_HOLD_MS = 2_000
_S = InstructionStatus
_SEVEN = tuple(s.value for s in InstructionStatus)
_ORDERED = tuple(InstructionStatus)
_APPROVED = (_S.APPROVED, _S.EXECUTING, _S.COMPLETED)
WAITS_FOR_EXECUTE = (
    "waits_for_execute", "Mode 2: nothing moves before the execute call",
    "spec, issuer instruction statuses: \"In Mode 2 the issuer stops at RECEIVED or "
    "PENDING_APPROVAL and does not execute until the execute call arrives\"; execute is "
    "\"sent only after the RTGS earmark is confirmed\"")


def _fold(items: list[str]) -> list[str]:
    """Each distinct item once, in first-seen order, with its count when repeated."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return [item if n == 1 else f"{item} (×{n})" for item, n in counts.items()]


def peer_problems(log: EventLog, transaction_id: str | None) -> list[str]:
    """The rules the gateway broke while serving one transaction, each named once."""
    if transaction_id is None:
        return []
    items = []
    for record in log.select("issuer.", transactionId=transaction_id):
        if record.kind == "issuer.answer_refused":
            items.append(f"{record['problem']} ({record['method']} {record['url']} answered "
                         f"{record['status'] if record['status'] is not None else 'nothing'})")
        elif record.kind == "issuer.protocol_violation":
            items.append(f"{record['problem']} (instruction {record['instructionId']})")
    return _fold(items)


def _parsed(raw: bytes) -> Any:
    try:
        return parse_untrusted(raw)
    except ValueError:
        return None


def webhook_problems(queue: CallbackQueue, secret: str) -> list[str]:
    """Status webhooks that are not signed with the issued secret (Authentication 8: signed
    like outgoing webhooks), or whose body breaks the rules an instruction read is held to."""
    items = []
    for signature, raw, arrived_s in queue.received:
        if signature is None:
            items.append("a status webhook without a Service-Signature header: status "
                         "webhooks are signed like outgoing webhooks")
        elif not verify(secret, signature, raw, arrived_s):
            items.append("a status webhook whose Service-Signature failed verification with "
                         "the issued signing secret (HMAC-SHA256 over t.body, 300 s window)")
        body = _parsed(raw)
        if not isinstance(body, dict):
            items.append("a status webhook's body is not a JSON object")
            continue
        instruction_id = body.get("instructionId")
        if not isinstance(instruction_id, str) or not instruction_id:
            items.append("a status webhook without an instructionId (a string)")
            continue
        read = read_status_body(body, instruction_id)
        if isinstance(read, str):
            items.append(f"{read} (a status webhook)")
    return _fold(items)


def webhook_steps(queue: CallbackQueue) -> dict[str, list[str]]:
    """Status histories the webhooks tell that no allowed order makes, by instruction: a
    change a poll may miss between two reads (APPROVED for 20 ms, then REJECTED). Webhooks
    may arrive out of order, so only what no order allows is judged: REJECTED beside
    APPROVED, EXECUTING or COMPLETED (REJECTED comes before approval, and nothing after
    it), or two different final statuses."""
    told: dict[str, set[InstructionStatus]] = {}
    for _, raw, _ in queue.received:
        body = _parsed(raw)
        instruction_id = body.get("instructionId") if isinstance(body, dict) else None
        status = body.get("status") if isinstance(body, dict) else None
        if isinstance(instruction_id, str) and status in _SEVEN:
            told.setdefault(instruction_id, set()).add(InstructionStatus(status))
    found: dict[str, list[str]] = {}
    for instruction_id, statuses in told.items():
        finals = [s for s in _ORDERED if s in statuses and s in FINAL]
        approved = [s for s in _ORDERED if s in statuses and s in _APPROVED]
        problem = None
        if _S.REJECTED in statuses and approved:
            problem = step_problem(approved[0], _S.REJECTED)
        elif len(finals) > 1:
            problem = step_problem(finals[0], finals[1])
        if problem is not None:
            found[instruction_id] = [f"{problem} (told by its status webhooks: "
                                     f"{', '.join(s.value for s in _ORDERED if s in statuses)})"]
    return found


def _early_webhooks(gateway: HttpGateway, queue: CallbackQueue) -> list[str]:
    """Status webhooks of a move about a Mode 2 instruction that arrived before the execute
    request for it went out (or with none sent at all)."""
    items = []
    for (_, raw, _), arrived in zip(queue.received, queue.arrived_mono, strict=True):
        body = _parsed(raw)
        instruction_id = body.get("instructionId") if isinstance(body, dict) else None
        if not isinstance(instruction_id, str) or instruction_id not in gateway.created_at:
            continue
        sent = gateway.execute_sent_at.get(instruction_id)
        moved = moved_before_execute(body)
        if moved is not None and (sent is None or arrived < sent):
            when = "with no execute sent" if sent is None \
                else f"{(sent - arrived) * 1000:.0f} ms before execute was sent"
            items.append(f"a status webhook for {instruction_id} arrived {when}: {moved}")
    return items


def waits_for_execute(gateway: HttpGateway, queue: CallbackQueue, run: ConformanceRun,
                      mode_2: bool, scenario_of: dict[str, str]) -> Check:
    """The two-phase check over every Mode 2 instruction of the run."""
    check_id, title, rule = WAITS_FOR_EXECUTE
    if not mode_2:
        return Check(check_id, title, rule, Verdict.SKIP, reason="not applicable: Mode 3 has "
                     "no execute call (the pre-burn transfer moves the asset at once)")
    early = [f"{what} (instruction {ins}, {scenario_of.get(tx, tx)})"
             for ins, tx, what in gateway.moved_early] + _early_webhooks(gateway, queue)
    notes = [f"execute held {EXECUTE_HOLD_MS} ms of wall time after each creation answer"]
    for ins_id, (reads, status) in gateway.holds.items():
        ins = gateway.instructions.get(ins_id)
        tx = ins.transaction_id if ins is not None else "?"
        notes.append(f"instruction {ins_id} ({scenario_of.get(tx, tx)}): {reads} reads "
                     f"before execute, last status {status}")
    if early:
        return Check(check_id, title, rule, Verdict.FAIL, Evidence((), notes + early),
                     "the gateway moved before execute: " + "; ".join(_fold(early)))
    if not gateway.holds:
        return Check(check_id, title, rule, Verdict.FAIL, Evidence((), notes),
                     "no Mode 2 instruction was accepted and watched until its execute "
                     "call: nothing shows that the gateway waits for execute")
    notes.append("no read and no status webhook before an execute request said EXECUTING, "
                 "COMPLETED or carried an on-chain hash")
    return Check(check_id, title, rule, Verdict.PASS, Evidence((), notes))
