"""Checking one expectation against the step's response and the stage: expected vs actual.

Public names: ``check``, ``read_transaction``.

Response expectations look at the response of the step's own call. ``transaction`` and
``resource`` read through the API (``GET``) as the participant named, like the spec's polling
client; the transaction's fields are paths inside its ``data``, a resource's inside the whole
body. Balances read the ledgers and the RTGS adapter; timing, events and counts read the event
log; webhook deliveries and the reference receiver's view are checked by
``clearing_sim.scenario.channel``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

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
from clearing_sim.scenario.matchers import describe, matches, render, same
from clearing_sim.scenario.results import Verdict, duration_text
from clearing_sim.scenario.stage import Stage, StepFailed
from clearing_sim.service.messages import Response

__all__ = ["check", "read_transaction"]


def _fields(data: Any, fields: tuple[tuple[str, Matcher], ...], stage: Stage,
            where: str = "") -> Verdict:
    failed = []
    for path, matcher in fields:
        value = lookup(data, parse_field_path(path))
        wanted = Matcher(tuple((k, stage.fill(v)) for k, v in matcher.checks))
        if not matches(wanted, value):
            failed.append((path, wanted, value))
    if not failed:
        shown = ", ".join(f"{p}={describe(m)}" for p, m in fields)
        return Verdict(True, f"{where}{shown}", "")
    return Verdict(False, "; ".join(f"{where}{p} {describe(m)}" for p, m, _ in failed),
                   "; ".join(f"{p}={render(v)}" for p, _, v in failed))


def _answer(response: Response) -> str:
    body = response.json() if response.body else None
    if isinstance(body, dict) and body.get("errors"):
        return f"{response.status} " + ", ".join(e.get("code", "?") for e in body["errors"])
    return str(response.status)


def read_transaction(stage: Stage, state: TransactionState) -> tuple[Response, Any]:
    """``GET`` the transaction as ``state.as_`` (default: its initiator's API key)."""
    tx_id = str(stage.fill(state.id))
    as_ = state.as_
    if as_ is None:
        tx = stage.world.transactions.get(tx_id)
        as_ = stage.key_of(tx.initiator_id) if tx is not None else None
    token = stage.token(as_, state.credential) if as_ is not None else None
    response = stage.request("GET", f"/api/v1/transactions/{tx_id}", token)
    body = response.json() if response.body else None
    return response, body.get("data") if isinstance(body, dict) else None


def _transaction(stage: Stage, state: TransactionState) -> Verdict:
    response, data = read_transaction(stage, state)
    if response.status != 200:
        return Verdict(False, "GET transaction answers 200", _answer(response))
    return _fields(data, state.fields, stage)


def _resource(stage: Stage, state: ResourceState) -> Verdict:
    token = stage.token(state.as_, state.credential)
    response = stage.request("GET", str(stage.fill(state.get)), token)
    body = response.json() if response.body else None
    if state.status is not None and not matches(state.status, response.status):
        return Verdict(False, f"status {describe(state.status)}", _answer(response))
    return _fields(body, state.fields, stage)


def _balance(stage: Stage, balance: Balance) -> Verdict:
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
    return Verdict(held == balance.amount, f"{balance.amount:f}", f"{held:f}")


def _conservation(stage: Stage) -> Verdict:
    broken = [ledger.value for ledger, chain in stage.world.ledgers.items()
              if not chain.conserved()]
    total = stage.world.rtgs.total()
    if total != stage.fiat_total:
        broken.append(f"RTGS total {total:f} (started at {stage.fiat_total:f})")
    return Verdict(not broken, "every ledger and the RTGS total conserved",
                   "not conserved: " + ", ".join(broken) if broken else "conserved")


def _timing(stage: Stage, timing: Timing) -> Verdict:
    end = stage.fact_ms(timing.of)
    start = 0 if timing.after is None else stage.fact_ms(timing.after)
    bounds = [f"{name} {duration_text(ms)}" for name, ms in (("equals", timing.equals_ms),
                                                   ("at least", timing.at_least_ms),
                                                   ("at most", timing.at_most_ms))
              if ms is not None]
    expected = " and ".join(bounds)
    if end is None or start is None:
        missing = "of" if end is None else "after"
        return Verdict(False, expected, f"the {missing} fact has not happened")
    took = end - start
    passed = ((timing.equals_ms is None or took == timing.equals_ms)
              and (timing.at_least_ms is None or took >= timing.at_least_ms)
              and (timing.at_most_ms is None or took <= timing.at_most_ms))
    return Verdict(passed, expected, duration_text(took))


def _subsequence(wanted: tuple[str, ...], seen: list[str]) -> bool:
    it = iter(seen)
    return all(any(item == event for event in it) for item in wanted)


def _events(stage: Stage, events: Events) -> Verdict:
    tx_id = stage.fill(events.transaction)
    seen = [str(r["event"]) for r in stage.world.log.select("transaction.state",
                                                               transactionId=tx_id)
            if r.get("event")]
    checks = []
    if events.equals is not None:
        checks.append((f"exactly {list(events.equals)}", list(events.equals) == seen))
    if events.includes is not None:
        checks.append((f"including {list(events.includes)} in order",
                       _subsequence(events.includes, seen)))
    if events.excludes is not None:
        checks.append((f"none of {list(events.excludes)}",
                       not set(events.excludes) & set(seen)))
    return Verdict(all(ok for _, ok in checks), " and ".join(t for t, _ in checks), str(seen))


def _log_count(stage: Stage, count: LogCount) -> Verdict:
    match = {str(k): stage.fill(v) for k, v in count.where}
    found = len(stage.world.log.select(count.record, **match))
    where = f" where {render(match)}" if match else ""
    return Verdict(matches(count.count, found),
                   f"{count.record} records{where}: {describe(count.count)}", str(found))


def _response(expectation: Expectation, response: Response) -> Verdict:
    body = response.json() if response.body else None
    if isinstance(expectation, ResponseStatus):
        return Verdict(matches(expectation.matcher, response.status),
                       describe(expectation.matcher), _answer(response))
    if isinstance(expectation, ResponseHeader):
        value = response.header(expectation.name)
        found = MISSING if value is None else value
        return Verdict(matches(expectation.matcher, found), describe(expectation.matcher),
                       render(found))
    if isinstance(expectation, ResponseField):
        value = lookup(body, parse_field_path(expectation.path))
        return Verdict(matches(expectation.matcher, value), describe(expectation.matcher),
                       render(value))
    assert isinstance(expectation, ResponseError)
    errors = body.get("errors", []) if isinstance(body, dict) else []
    wanted = dict(expectation.fields)
    hit = any(all(same(e.get(k, MISSING), v) for k, v in wanted.items()) for e in errors)
    shown = [{k: e.get(k) for k in ("type", "code", "param")} for e in errors]
    return Verdict(hit, f"an error with {render(wanted)}", render(shown) if shown else
                   f"no errors (status {response.status})")


def check(stage: Stage, expectation: Expectation, response: Response | None) -> Verdict:
    """Evaluate one expectation now; ``StepFailed`` if it cannot be evaluated at all."""
    if isinstance(expectation, ResponseStatus | ResponseHeader | ResponseField | ResponseError):
        if response is None:
            raise StepFailed("this step made no request to check")
        expectation = _filled(stage, expectation)
        return _response(expectation, response)
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
        return Verdict(digest == expectation.digest, expectation.digest, digest)
    if isinstance(expectation, Timing):
        return _timing(stage, expectation)
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
        matcher = Matcher(tuple((k, stage.fill(v)) for k, v in expectation.matcher.checks))
        if isinstance(expectation, ResponseStatus):
            return ResponseStatus(expectation.site, matcher)
        if isinstance(expectation, ResponseHeader):
            return ResponseHeader(expectation.site, expectation.name, matcher)
        return ResponseField(expectation.site, expectation.path, matcher)
    return expectation
