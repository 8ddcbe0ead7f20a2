"""Simulated issuer behaviour on the wire: read from an operator body, rendered back.

Public names: ``BEHAVIOUR_LATENCIES``, ``HOLD_POINT_NAMES``, ``SIGMA_MAX``,
``behaviour_wire``, ``latency_wire``, ``read_behaviour``.

Read by the operator surface (``PUT /sim/v1/issuers/{id}/behaviour``,
``POST /sim/v1/participants``) and by the scenario step that adds a participant, so both
doors take the same body.

The body has the scenario files' shape (docs/scenarios.md): ``{latency: {request, ack,
approval, execution, webhook, refund}, outcomes: {rejected, failed, silence}, holdAt}``
(``holdAt``: where a Mode 2 instruction waits for execute, ``RECEIVED``,
``PENDING_APPROVAL`` or ``APPROVED``; the scenario files spell it ``hold_at``), each latency
a duration (``"5s"``, or whole milliseconds) or one of ``{fixed: D}``, ``{uniform: [D, D]}``,
``{exponential: D}``, ``{lognormal: {median: D, sigma: X, max: D}}``, each outcome a
probability; fields left out take the engine's defaults (``IssuerBehaviour``). The rendering
is the same shape, every latency in whole milliseconds, so it can be sent back as it is.
"""

from __future__ import annotations

from typing import Any

from attrs import evolve

from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.domain.latency import (
    SIGMA_MAX,
    Exponential,
    Fixed,
    Latency,
    LogNormal,
    parse_latency,
)
from clearing_sim.service.body import Fields, read_number
from clearing_sim.sim.issuer import HOLD_POINTS, IssuerBehaviour

__all__ = ["BEHAVIOUR_LATENCIES", "HOLD_POINT_NAMES", "SIGMA_MAX", "behaviour_wire",
           "latency_wire", "read_behaviour"]

#: ``behaviour.latency`` keys → ``IssuerBehaviour`` attributes.
BEHAVIOUR_LATENCIES = {"request": "request_latency", "ack": "ack_latency",
                       "approval": "approval_latency", "execution": "execution_latency",
                       "webhook": "webhook_latency", "refund": "refund_latency"}
#: ``behaviour.hold_at`` values: where a simulated Mode 2 issuer waits for execute.
HOLD_POINT_NAMES = tuple(status.value for status in HOLD_POINTS)

_OUTCOMES = {"rejected": "p_rejected", "failed": "p_failed", "silence": "p_silence"}


def read_behaviour(f: Fields) -> IssuerBehaviour | None:
    """The behaviour ``f`` describes; problems are collected on ``f`` (None if any). The
    caller checks ``f`` itself for fields it does not know."""
    changes: dict[str, Any] = {}
    before = len(f.problems)
    latency = f.object("latency", required=False)
    if latency is not None:
        for name, attribute in BEHAVIOUR_LATENCIES.items():
            if name not in latency.obj:
                continue
            try:
                changes[attribute] = _latency(latency.obj[name])
            except (ValueError, TypeError) as error:
                latency.problem(name, "invalid_value", f"{latency.path(name)}: {error}")
        latency.check_unknown(*BEHAVIOUR_LATENCIES)
    outcomes = f.object("outcomes", required=False)
    if outcomes is not None:
        for name, attribute in _OUTCOMES.items():
            value = read_number(outcomes, name, low=0.0, high=1.0)
            if value is not None:
                changes[attribute] = float(value)
        outcomes.check_unknown(*_OUTCOMES)
    hold_at = f.text("holdAt", required=False, choices=HOLD_POINT_NAMES)
    if hold_at is not None:
        changes["hold_at"] = InstructionStatus(hold_at)
    if len(f.problems) > before:
        return None
    try:
        return evolve(IssuerBehaviour(), **changes)
    except ValueError as error:
        f.problem("outcomes", "invalid_value", f"{f.path('outcomes')}: {error}")
        return None


def _latency(spec: object) -> Latency:
    latency = parse_latency(spec)
    return latency


def latency_wire(latency: Latency) -> Any:
    """A latency as the readers accept it, durations in whole milliseconds."""
    if isinstance(latency, Fixed):
        return {"fixed": latency.ms}
    if isinstance(latency, Exponential):
        return {"exponential": latency.mean_ms}
    if isinstance(latency, LogNormal):
        return {"lognormal": {"median": latency.median_ms, "sigma": latency.sigma,
                              "max": latency.max_ms}}
    return {"uniform": [latency.low_ms, latency.high_ms]}


def behaviour_wire(behaviour: IssuerBehaviour) -> dict[str, Any]:
    return {
        "latency": {name: latency_wire(getattr(behaviour, attribute))
                    for name, attribute in BEHAVIOUR_LATENCIES.items()},
        "outcomes": {name: getattr(behaviour, attribute)
                     for name, attribute in _OUTCOMES.items()},
        "holdAt": behaviour.hold_at.value,
    }
