"""The webhook side of a scenario run: fault injection, and what deliveries and receivers saw.

Public names: ``apply_fault``, ``check_deliveries``, ``check_receiver``.

Faults change the world from now on. A receiver outage makes the endpoint behind a
subscription's URL answer ``status`` (for ``for``, then 200; for ever without it), keeping its
latency and network settings; a network fault replaces the loss, duplication and reordering
of the way to it; a forged issuer webhook sends one status webhook for the transaction's
latest instruction at that issuer to the service's inbox (``clearing_sim.sim.forgery``), which
must drop it, or, when correctly signed, treat it as a prompt only.

A ``deliveries`` expectation looks at one subscription's deliveries in creation order, only
those of ``transaction`` and of type ``event`` when given: ``types`` is the list of their
event types; ``attempts``, ``offsets``, ``statuses`` and ``outcome`` describe the one delivery
picked, so they need the filters to leave exactly one. An attempt's offset is from the first
attempt's sending; its status is what the endpoint answered (``null``: lost or too late).
"""

from __future__ import annotations

from typing import Any

from attrs import evolve

from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.scenario.expectations import RECEIVER_COUNTS, Deliveries, ReceiverView
from clearing_sim.scenario.matchers import describe, matcher_json, matches, render
from clearing_sim.scenario.model import ForgedIssuerWebhook, NetworkFault, ReceiverOutage
from clearing_sim.scenario.results import Verdict
from clearing_sim.scenario.stage import NETWORK_FIELDS, Stage, StepFailed
from clearing_sim.sim.forgery import Forgery, forge_issuer_webhook
from clearing_sim.sim.webhook_channel import Delivery

__all__ = ["apply_fault", "check_deliveries", "check_receiver"]

_FORGERIES = {"missing": Forgery.UNSIGNED, "wrong": Forgery.WRONG_SIGNATURE,
              "wrong_secret": Forgery.WRONG_SECRET, "stale": Forgery.STALE,
              "valid": Forgery.LYING_BODY}


# faults ------------------------------------------------------------------------------------
def apply_fault(stage: Stage, fault: ReceiverOutage | NetworkFault | ForgedIssuerWebhook) -> None:
    if isinstance(fault, ForgedIssuerWebhook):
        _forge(stage, fault)
        return
    channel = stage.world.webhooks
    url = stage.webhooks[fault.webhook]["url"]
    current = channel.receivers.behaviour(url)
    if isinstance(fault, ReceiverOutage):
        until = None if fault.for_ms is None else stage.world.now_ms + fault.for_ms
        channel.set_receiver(url, evolve(current, status=fault.status, until_ms=until,
                                         recovered_status=200))
        return
    changes = {NETWORK_FIELDS[name]: value for name, value in fault.changes}
    channel.set_receiver(url, evolve(current, **changes))


def _forge(stage: Stage, fault: ForgedIssuerWebhook) -> None:
    issuer_id = stage.parties[fault.issuer].id
    tx_id = str(stage.fill(fault.transaction))
    sent = stage.select("issuer.instruction", issuerId=issuer_id, transactionId=tx_id)
    if not sent:
        raise StepFailed(f"forged_issuer_webhook: {fault.issuer} holds no instruction of "
                         f"{tx_id} yet; wait_until its issuer.instruction record first")
    forge_issuer_webhook(stage.world, issuer_id, str(sent[-1]["instructionId"]),
                         _FORGERIES[fault.signature], InstructionStatus(fault.status))


# deliveries --------------------------------------------------------------------------------
def _attempts(stage: Stage, delivery: Delivery) -> list[Any]:
    return stage.select("webhook.attempt", eventId=delivery.event.id,
                        subscriptionId=delivery.subscription_id)


def _picked(stage: Stage, expectation: Deliveries) -> list[Delivery]:
    subscription = stage.webhooks[expectation.webhook]["id"]
    found = stage.world.webhooks.deliveries_of(subscription)
    if expectation.transaction is not None:
        tx_id = stage.fill(expectation.transaction)
        found = [d for d in found if d.event.transaction_id == tx_id]
    if expectation.event is not None:
        found = [d for d in found if d.event.type.value == expectation.event]
    return found


def _offset(ms: int) -> str:
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def _which(expectation: Deliveries, stage: Stage) -> str:
    parts = [f"to {expectation.webhook}"]
    if expectation.transaction is not None:
        parts.append(f"of {stage.fill(expectation.transaction)}")
    if expectation.event is not None:
        parts.append(f"of type {expectation.event}")
    return " ".join(parts)


def check_deliveries(stage: Stage, expectation: Deliveries) -> Verdict:
    found = _picked(stage, expectation)
    expected: list[str] = []
    actual: list[str] = []
    expected_value: dict[str, Any] = {}
    actual_value: dict[str, Any] = {}
    passed = True

    def compare(name: str, wanted: Any, seen: Any, ok: bool | None = None,
                values: tuple[Any, Any] | None = None) -> None:
        nonlocal passed
        hit = (wanted == seen) if ok is None else ok
        passed = passed and hit
        expected.append(f"{name} {wanted if isinstance(wanted, str) else render(wanted)}")
        actual.append(f"{name} {seen if isinstance(seen, str) else render(seen)}")
        expected_value[name], actual_value[name] = (wanted, seen) if values is None else values

    if expectation.types is not None:
        compare("types", list(expectation.types), [d.event.type.value for d in found])
    one = (expectation.attempts, expectation.offsets_ms, expectation.statuses,
           expectation.outcome)
    if any(item is not None for item in one):
        if len(found) != 1:
            return Verdict(False, f"exactly one delivery {_which(expectation, stage)}",
                           f"{len(found)} deliveries; name transaction and event to pick one",
                           {"deliveries": 1}, {"deliveries": len(found)})
        delivery = found[0]
        records = _attempts(stage, delivery)
        if expectation.attempts is not None:
            compare("attempts", describe(expectation.attempts), str(delivery.attempts),
                    matches(expectation.attempts, delivery.attempts),
                    (matcher_json(expectation.attempts), delivery.attempts))
        if expectation.offsets_ms is not None:
            first = int(records[0]["sentAtMs"]) if records else 0
            seen_ms = [int(r["sentAtMs"]) - first for r in records]
            compare("offsets", [_offset(ms) for ms in expectation.offsets_ms],
                    [_offset(ms) for ms in seen_ms], list(expectation.offsets_ms) == seen_ms,
                    (list(expectation.offsets_ms), seen_ms))
            expected_value["offsetsMs"] = expected_value.pop("offsets")
            actual_value["offsetsMs"] = actual_value.pop("offsets")
        if expectation.statuses is not None:
            compare("statuses", list(expectation.statuses), [r["status"] for r in records])
        if expectation.outcome is not None:
            compare("outcome", expectation.outcome, delivery.status.value)
    if not expected:
        compare("deliveries", f"at least one {_which(expectation, stage)}",
                f"{len(found)}", bool(found), ({"ge": 1}, len(found)))
    return Verdict(passed, "; ".join(expected), "; ".join(actual), expected_value,
                   actual_value)


# the reference receiver ----------------------------------------------------------------------
def check_receiver(stage: Stage, expectation: ReceiverView) -> Verdict:
    receiver = stage.reference[expectation.webhook]
    failed: list[tuple[str, str, str]] = []
    shown: list[str] = []
    expected_value: dict[str, Any] = {}
    actual_value: dict[str, Any] = {}
    if expectation.transaction is not None and expectation.state:
        tx_id = str(stage.fill(expectation.transaction))
        view = receiver.views.get(tx_id)
        data = None if view is None else {"lifecycleStatus": view.lifecycle_status,
                                          "parked": view.parked, "terminal": view.terminal}
        expected_value["state"] = {name: matcher_json(m) for name, m in expectation.state}
        actual_value["state"] = data  # null: the receiver has no view of the transaction
        for name, matcher in expectation.state:
            value = "no view" if data is None else data.get(name, "no such field")
            shown.append(f"{name} {describe(matcher)}")
            if not matches(matcher, value):
                failed.append((name, describe(matcher), render(value)))
    if expectation.counts:
        expected_value["counts"] = {name: matcher_json(m) for name, m in expectation.counts}
        actual_value["counts"] = {}
    for name, matcher in expectation.counts:
        count = getattr(receiver, RECEIVER_COUNTS[name])
        actual_value["counts"][name] = count
        shown.append(f"{name} {describe(matcher)}")
        if not matches(matcher, count):
            failed.append((name, describe(matcher), str(count)))
    if not failed:
        return Verdict(True, "; ".join(shown), "", expected_value, actual_value)
    return Verdict(False, "; ".join(f"{n} {e}" for n, e, _ in failed),
                   "; ".join(f"{n}={a}" for n, _, a in failed), expected_value, actual_value)
