"""Checking one expectation against the step's response and the stage: expected vs actual.

Public names: ``Answer``, ``check``, ``read_transaction``.

Response expectations look at the response of the step's own call, an ``Answer``: the
response with its body decoded once, for the step's saves and each of its expectations.
``transaction`` and ``resource`` read through the API (``GET``) as the participant named, like
the spec's polling client; the transaction's fields are paths inside its ``data``, a
resource's inside the whole body. Balances read the ledgers and the RTGS adapter; timing,
events and counts read the event log; webhook deliveries and the reference receiver's view
are checked by ``clearing_sim.scenario.channel``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from attrs import frozen

from clearing_sim.scenario.channel import check_deliveries, check_receiver
from clearing_sim.scenario.expectations import (
    Balance,
    Conservation,
    Deliveries,
    Digest,
    Events,
    Expectation,
    LogCount,
    Matcher,
    ReceiverView,
    ResourceState,
    ResponseError,
    ResponseField,
    ResponseHeader,
    ResponseStatus,
    Timing,
    TransactionState,
)
from clearing_sim.scenario.fieldpath import MISSING, lookup, parse_field_path
from clearing_sim.scenario.matchers import (
    describe,
    fields_json,
    matcher_json,
    matches,
    render,
    same,
)
from clearing_sim.scenario.results import Verdict
from clearing_sim.scenario.stage import Stage, StepFailed
from clearing_sim.scenario.timing import judge_timing
from clearing_sim.service.messages import Response

__all__ = ["Answer", "check", "read_transaction"]


@frozen
class Answer:
    """A response and its body as JSON (``None`` when it has none), decoded once: read it,
    never change it."""

    response: Response
    body: Any

    @classmethod
    def of(cls, response: Response) -> Answer:
        return cls(response, response.json() if response.body else None)


def _fields(data: Any, fields: tuple[tuple[str, Matcher], ...], stage: Stage,
            where: str = "") -> Verdict:
    """Every field path of ``fields`` in ``data`` matches; the JSON values are the matchers
    and the values found, by path (a missing one left out)."""
    wanted = [(path, Matcher(tuple((k, stage.fill(v)) for k, v in matcher.checks)))
              for path, matcher in fields]
    found = [(path, lookup(data, parse_field_path(path))) for path, _ in wanted]
    expected_value = {path: matcher_json(matcher) for path, matcher in wanted}
    actual_value = fields_json(found)
    failed = [(path, matcher, value) for (path, matcher), (_, value) in zip(wanted, found,
                                                                             strict=True)
              if not matches(matcher, value)]
    if not failed:
        shown = ", ".join(f"{p}={describe(m)}" for p, m in wanted)
        return Verdict(True, f"{where}{shown}", "", expected_value, actual_value)
    return Verdict(False, "; ".join(f"{where}{p} {describe(m)}" for p, m, _ in failed),
                   "; ".join(f"{p}={render(v)}" for p, _, v in failed),
                   expected_value, actual_value)


def _answer(answer: Answer) -> str:
    body, status = answer.body, answer.response.status
    if isinstance(body, dict) and body.get("errors"):
        return f"{status} " + ", ".join(e.get("code", "?") for e in body["errors"])
    return str(status)


def _answer_json(answer: Answer) -> dict[str, Any]:
    """The response's status, and its error codes when it has some, as JSON."""
    body = answer.body
    answer_json: dict[str, Any] = {"status": answer.response.status}
    if isinstance(body, dict) and body.get("errors"):
        answer_json["errors"] = [e.get("code") for e in body["errors"]
                                 if isinstance(e, dict)]
    return answer_json


def read_transaction(stage: Stage, state: TransactionState) -> tuple[Answer, Any]:
    """``GET`` the transaction as ``state.as_`` (default: its initiator's API key): the
    answer and its ``data``."""
    tx_id = str(stage.fill(state.id))
    as_ = state.as_
    if as_ is None:
        tx = stage.world.transactions.get(tx_id)
        as_ = stage.key_of(tx.initiator_id) if tx is not None else None
    token = stage.token(as_, state.credential) if as_ is not None else None
    answer = Answer.of(stage.request("GET", f"/api/v1/transactions/{tx_id}", token))
    body = answer.body
    return answer, body.get("data") if isinstance(body, dict) else None


def _read(answer: Answer, fields: Verdict, expected_status: Any,
          failed: tuple[str, str] | None = None) -> Verdict:
    """A GET's verdict: its fields' (or ``failed``: the status's text), with the status and
    the fields in the JSON values."""
    expected = {"status": expected_status, "fields": fields.expected_value}
    actual = {**_answer_json(answer), "fields": fields.actual_value}
    if failed is not None:
        return Verdict(False, failed[0], failed[1], expected, actual)
    return Verdict(fields.passed, fields.expected, fields.actual, expected, actual)


def _transaction(stage: Stage, state: TransactionState) -> Verdict:
    answer, data = read_transaction(stage, state)
    fields = _fields(data, state.fields, stage)
    failed = (None if answer.response.status == 200
              else ("GET transaction answers 200", _answer(answer)))
    return _read(answer, fields, {"equals": 200}, failed)


def _resource(stage: Stage, state: ResourceState) -> Verdict:
    token = stage.token(state.as_, state.credential)
    answer = Answer.of(stage.request("GET", str(stage.fill(state.get)), token))
    fields = _fields(answer.body, state.fields, stage)
    status = None if state.status is None else matcher_json(state.status)
    failed = None
    if state.status is not None and not matches(state.status, answer.response.status):
        failed = (f"status {describe(state.status)}", _answer(answer))
    return _read(answer, fields, status, failed)


def _balance(stage: Stage, balance: Balance) -> Verdict:
    """Balances are amounts, compared as decimals: ``"0"`` equals ``"0.00"`` (not a matcher:
    a field matcher compares JSON values, where ``"100.0"`` is not ``"100.00"``)."""
    party = stage.parties[balance.participant]
    if balance.account == "rtgs":
        held = stage.world.rtgs.balances.get(party.id, Decimal(0))
    else:
        asset = stage.assets[balance.account]
        issuer = stage.world.participants.issuer_of(asset)
        assert issuer is not None
        ledger = stage.world.ledgers[issuer.profile.ledger]
        account = (party.issuing_account if party is issuer
                   else party.wallets.get(issuer.profile.ledger))
        held = Decimal(0) if account is None else ledger.balance(account, asset).amount
    wanted, found = f"{balance.amount:f}", f"{held:f}"
    return Verdict(held == balance.amount, wanted, found, wanted, found)


def _conservation(stage: Stage) -> Verdict:
    broken = [ledger.value for ledger, chain in stage.world.ledgers.items()
              if not chain.conserved()]
    total = stage.world.rtgs.total()
    if total != stage.fiat_total:
        broken.append(f"RTGS total {total:f} (started at {stage.fiat_total:f})")
    return Verdict(not broken, "every ledger and the RTGS total conserved",
                   "not conserved: " + ", ".join(broken) if broken else "conserved",
                   {"conserved": True}, {"conserved": not broken, "broken": broken})


def _subsequence(wanted: tuple[str, ...], seen: list[str]) -> bool:
    it = iter(seen)
    return all(any(item == event for event in it) for item in wanted)


def _events(stage: Stage, events: Events) -> Verdict:
    tx_id = stage.fill(events.transaction)
    seen = [str(r["event"]) for r in stage.select("transaction.state", transactionId=tx_id)
            if r.get("event")]
    checks = []
    wanted: dict[str, list[str]] = {}
    if events.equals is not None:
        wanted["equals"] = list(events.equals)
        checks.append((f"exactly {render(wanted['equals'])}", wanted["equals"] == seen))
    if events.includes is not None:
        wanted["includes"] = list(events.includes)
        checks.append((f"including {render(wanted['includes'])} in order",
                       _subsequence(events.includes, seen)))
    if events.excludes is not None:
        wanted["excludes"] = list(events.excludes)
        checks.append((f"none of {render(wanted['excludes'])}",
                       not any(event in events.excludes for event in seen)))
    return Verdict(all(ok for _, ok in checks), " and ".join(t for t, _ in checks),
                   render(seen), wanted, seen)


def _log_count(stage: Stage, count: LogCount) -> Verdict:
    match = {str(k): stage.fill(v) for k, v in count.where}
    found = len(stage.select(count.record, **match))
    where = f" where {render(match)}" if match else ""
    return Verdict(matches(count.count, found),
                   f"{count.record} records{where}: {describe(count.count)}", str(found),
                   {"record": count.record, "where": match, "count": matcher_json(count.count)},
                   {"count": found})


def _response(expectation: Expectation, answer: Answer) -> Verdict:
    response, body = answer.response, answer.body
    if isinstance(expectation, ResponseStatus):
        return Verdict(matches(expectation.matcher, response.status),
                       describe(expectation.matcher), _answer(answer),
                       matcher_json(expectation.matcher), response.status)
    if isinstance(expectation, ResponseHeader | ResponseField):
        if isinstance(expectation, ResponseHeader):
            name, value = expectation.name, response.header(expectation.name)
            found = MISSING if value is None else value
        else:
            name = expectation.path
            found = lookup(body, parse_field_path(expectation.path))
        return Verdict(matches(expectation.matcher, found), describe(expectation.matcher),
                       render(found), {name: matcher_json(expectation.matcher)},
                       fields_json([(name, found)]))
    assert isinstance(expectation, ResponseError)
    errors = body.get("errors", []) if isinstance(body, dict) else []
    wanted = dict(expectation.fields)
    hit = any(all(same(e.get(k, MISSING), v) for k, v in wanted.items()) for e in errors)
    shown = [{k: e.get(k) for k in ("type", "code", "param")} for e in errors]
    return Verdict(hit, f"an error with {render(wanted)}", render(shown) if shown else
                   f"no errors (status {response.status})", wanted, shown)


def check(stage: Stage, expectation: Expectation, answer: Answer | None) -> Verdict:
    """Evaluate one expectation now (``answer``: the step's call's); ``StepFailed`` if it
    cannot be evaluated at all."""
    if isinstance(expectation, ResponseStatus | ResponseHeader | ResponseField | ResponseError):
        if answer is None:
            raise StepFailed("this step made no request to check")
        expectation = _filled(stage, expectation)
        return _response(expectation, answer)
    if isinstance(expectation, TransactionState):
        return _transaction(stage, expectation)
    if isinstance(expectation, ResourceState):
        return _resource(stage, expectation)
    if isinstance(expectation, Balance):
        return _balance(stage, expectation)
    if isinstance(expectation, Conservation):
        return _conservation(stage)
    if isinstance(expectation, Digest):
        digest = stage.world.log.digest()
        return Verdict(digest == expectation.digest, expectation.digest, digest,
                       expectation.digest, digest)
    if isinstance(expectation, Timing):
        return judge_timing(stage, expectation)
    if isinstance(expectation, Events):
        return _events(stage, expectation)
    if isinstance(expectation, LogCount):
        return _log_count(stage, expectation)
    if isinstance(expectation, Deliveries):
        return check_deliveries(stage, expectation)
    assert isinstance(expectation, ReceiverView)
    return check_receiver(stage, expectation)


def _filled(stage: Stage, expectation: Expectation) -> Expectation:
    """A response expectation with the ``${…}`` in its expected values resolved."""
    if isinstance(expectation, ResponseError):
        return ResponseError(expectation.site, tuple((k, stage.fill(v))
                                                     for k, v in expectation.fields))
    if isinstance(expectation, ResponseStatus | ResponseHeader | ResponseField):
        checks = tuple((k, stage.fill(v)) for k, v in expectation.matcher.checks)
        if checks == expectation.matcher.checks:
            return expectation  # nothing was resolved (most: a status, a literal value)
        matcher = Matcher(checks)
        if isinstance(expectation, ResponseStatus):
            return ResponseStatus(expectation.site, matcher)
        if isinstance(expectation, ResponseHeader):
            return ResponseHeader(expectation.site, expectation.name, matcher)
        return ResponseField(expectation.site, expectation.path, matcher)
    return expectation
