"""Operator routes that move or change the world: the clock, reset, fixes, behaviours.

Public names: ``ROUTES``.

- ``GET /sim/v1/clock``; ``POST /sim/v1/clock/advance`` with exactly one of ``seconds`` (a
  number ≥ 0, whole milliseconds), ``until`` (ISO 8601 with a zone), ``untilTerminal`` (a
  transaction id; 404 ``transaction_not_found``) or ``untilIdle`` (true), the last two with
  an optional ``maxSeconds`` bound (default 366 days); backwards is 400. It answers the
  clock, ``stoppedAt`` (and ``stoppedAtMs``), ``met`` and ``reason`` (``reached``,
  ``terminal``, ``idle``, ``max_seconds``).
- ``POST /sim/v1/reset`` with an optional ``seed`` (default: the current one): a fresh world,
  built again from the world file when the shim was started with one.
- ``POST /sim/v1/operator/transactions/{id}/resolve``: the operator's fix of a parked
  transaction (``World.resolve``); 404 ``transaction_not_found``, 409 ``not_parked``.
- ``GET``/``PUT /sim/v1/operator/issuers/{issuerId}/behaviour``: the simulated issuer's
  latencies and outcome probabilities (PUT replaces them all; omitted fields take the
  defaults); 404 for a participant that is not an issuer, 409 ``profile_required`` before
  the issuer's first profile (its gateway does not exist yet).
- ``PUT /sim/v1/receivers``: the simulated endpoint behind a URL answers ``status`` until
  ``until`` (for ever without it), then 200, after ``latencyMs`` (default: the engine's
  log-normal latency, median 80 ms), losing or duplicating requests at the given rates.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from clearing_sim.domain.errors import NotAllowed, NotFound
from clearing_sim.domain.latency import Fixed
from clearing_sim.domain.parties import ParticipantKind
from clearing_sim.http.clock import ADVANCE_MS_MAX
from clearing_sim.http.surface import (
    OperatorContext,
    OperatorRoute,
    participant_of,
    read_number,
    read_timestamp_ms,
)
from clearing_sim.service.behaviour import behaviour_wire, read_behaviour
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Reply
from clearing_sim.service.wire import transaction_full
from clearing_sim.sim.issuer import IssuerGateway
from clearing_sim.sim.receivers import ReceiverBehaviour
from clearing_sim.sim.world import World

__all__ = ["ROUTES"]

_STATUS_ANSWERED = (100, 599)
_LATENCY_MS_MAX = 3_600_000
_FORMS = ("seconds", "until", "untilTerminal", "untilIdle")
_FORMS_TEXT = ("seconds (a number), until (an ISO 8601 timestamp), untilTerminal (a "
               "transaction id) or untilIdle (true)")


# the clock ---------------------------------------------------------------------------------
async def clock(ctx: OperatorContext) -> Reply:
    return Reply(200, ctx.clock.wire())


def _seconds_ms(f: Fields, name: str) -> int | None:
    """``name`` (``seconds``, ``maxSeconds``) as whole milliseconds: a number, not negative,
    at most 3 decimals."""
    value = f.obj.get(name)
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        f.problem(name, "invalid_value",
                  f"{name} must not be negative: the clock never moves backwards")
        return None
    seconds = read_number(f, name, low=0.0, high=ADVANCE_MS_MAX / 1000)
    if seconds is None:
        return None
    scaled = seconds * 1000
    if scaled != scaled.to_integral_value():
        f.problem(name, "invalid_value",
                  f"{name} must be a whole number of milliseconds (at most 3 decimal places)")
        return None
    return int(scaled)


def _one_form(f: Fields) -> str | None:
    """The one advance form the body gives; a problem naming the field at fault otherwise
    (the second form given; ``maxSeconds`` beside ``seconds`` or ``until``)."""
    given = [name for name in _FORMS if f.obj.get(name) is not None]
    if not given:
        f.problem(None, "required", f"give exactly one of {_FORMS_TEXT}")
        return None
    if len(given) > 1:
        f.problem(given[1], "invalid_value", f"{given[1]} beside {given[0]}: give exactly "
                                             f"one of {_FORMS_TEXT}")
        return None
    if given[0] in ("seconds", "until") and f.obj.get("maxSeconds") is not None:
        f.problem("maxSeconds", "invalid_value", f"maxSeconds bounds untilTerminal and "
                                                 f"untilIdle; {given[0]} names its own instant")
        return None
    return given[0]


async def advance(ctx: OperatorContext) -> Reply:
    f = ctx.fields()
    by_ms = _seconds_ms(f, "seconds")
    until_ms = read_timestamp_ms(f, "until", ctx.world, before_epoch_ok=True)
    terminal_id = f.text("untilTerminal", required=False, length_max=64)
    if f.flag("untilIdle", required=False) is False:
        f.problem("untilIdle", "invalid_value", "untilIdle takes true or nothing")
    max_ms = _seconds_ms(f, "maxSeconds")
    form = _one_form(f) if not f.problems else None
    f.done("seconds", "maxSeconds")
    stop = await ctx.clock.advance(
        by_ms=by_ms if form == "seconds" else None,
        until_ms=until_ms if form == "until" else None, terminal_id=terminal_id,
        idle=form == "untilIdle", max_ms=ADVANCE_MS_MAX if max_ms is None else max_ms)
    return Reply(200, {**ctx.clock.wire(), "stoppedAt": ctx.world.iso(stop.at_ms),
                       "stoppedAtMs": stop.at_ms, "met": stop.met, "reason": stop.reason})


async def reset(ctx: OperatorContext) -> Reply:
    f = ctx.fields(empty_ok=True)
    seed = f.integer("seed", required=False)
    f.done()
    sim = ctx.sim
    async with sim.clock_lock, sim.world_lock:
        sim.build(seed if seed is not None else sim.seed)
        ctx.clock.rebase()
        return Reply(200, {
            "seed": sim.seed, "environment": sim.world.config.environment.value,
            "clock": ctx.clock.wire(),
            "participants": [{"key": s.key, "participantId": s.participant.id,
                              "participantName": s.participant.name, "apiKey": s.api_key}
                             for s in sim.staged]})


# operator fixes and behaviours -----------------------------------------------------------
async def resolve(ctx: OperatorContext) -> Reply:
    ctx.fields(empty_ok=True).done()
    world = ctx.world
    transaction_id = ctx.params["id"]
    if world.transactions.get(transaction_id) is None:
        raise NotFound.one(None, "transaction_not_found",
                           f"no transaction {transaction_id[:64]}")
    tx = world.resolve(transaction_id)
    return Reply(200, transaction_full(tx, world.epoch_ms))


def _gateway(world: World, issuer_id: str) -> IssuerGateway:
    issuer = participant_of(world, issuer_id, param=None)
    if issuer.kind is not ParticipantKind.STABLECOIN_ISSUER:
        raise NotFound.one(None, "participant_not_found",
                           f"{issuer.name} ({issuer.id}) is not a stablecoin issuer")
    gateway = world.issuers.get(issuer.id)
    if gateway is None:
        raise NotAllowed.one(None, "profile_required",
                             f"{issuer.name} has no capability profile yet, so no simulated "
                             "gateway: save one with PUT /api/v1/issuers/{issuerId}/capabilities")
    if not isinstance(gateway, IssuerGateway):
        raise NotAllowed.one(None, "real_gateway",
                             f"{issuer.name} is on its real gateway: it has no simulated behaviour")
    return gateway


async def get_behaviour(ctx: OperatorContext) -> Reply:
    gateway = _gateway(ctx.world, ctx.params["issuerId"])
    return Reply(200, {"issuerId": gateway.issuer_id, **behaviour_wire(gateway.behaviour)})


async def put_behaviour(ctx: OperatorContext) -> Reply:
    f = ctx.fields()
    behaviour = read_behaviour(f)
    f.done()
    gateway = _gateway(ctx.world, ctx.params["issuerId"])
    assert behaviour is not None
    gateway.behaviour = behaviour
    return Reply(200, {"issuerId": gateway.issuer_id, **behaviour_wire(behaviour)})


# simulated receivers -------------------------------------------------------------------------
async def put_receiver(ctx: OperatorContext) -> Reply:
    f = ctx.fields()
    world = ctx.world
    url = f.text("url", length_max=2048)
    status = f.integer("status")
    if status is not None and not _STATUS_ANSWERED[0] <= status <= _STATUS_ANSWERED[1]:
        f.problem("status", "invalid_value", "status must be an HTTP status, 100 to 599")
    until_ms = read_timestamp_ms(f, "until", world)
    latency_ms = f.integer("latencyMs", required=False)
    if latency_ms is not None and not 0 <= latency_ms <= _LATENCY_MS_MAX:
        f.problem("latencyMs", "invalid_value", "latencyMs must be 0 to 3600000")
    loss = read_number(f, "lossRate", low=0.0, high=1.0)
    duplicate = read_number(f, "duplicateRate", low=0.0, high=1.0)
    f.done("lossRate", "duplicateRate")
    assert url is not None and status is not None
    changes: dict[str, Any] = {"p_lost": float(loss or Decimal(0)),
                               "p_duplicate": float(duplicate or Decimal(0))}
    if latency_ms is not None:
        changes["latency"] = Fixed(latency_ms)
    behaviour = ReceiverBehaviour.failing(status, until_ms, **changes)
    world.webhooks.set_receiver(url, behaviour)
    return Reply(200, {"url": url, "status": status,
                       "until": None if until_ms is None else world.iso(until_ms),
                       "latencyMs": latency_ms, "lossRate": behaviour.p_lost,
                       "duplicateRate": behaviour.p_duplicate})


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("GET", "/sim/v1/clock", clock, "the virtual clock"),
    OperatorRoute("POST", "/sim/v1/clock/advance", advance,
                  "run every event due up to a later virtual time, then answer the clock",
                  exclusive=False),
    OperatorRoute("POST", "/sim/v1/reset", reset, "a fresh world, with a seed",
                  exclusive=False),
    OperatorRoute("POST", "/sim/v1/operator/transactions/{id}/resolve", resolve,
                  "the operator's fix of a parked transaction: back to in-flight"),
    OperatorRoute("GET", "/sim/v1/operator/issuers/{issuerId}/behaviour", get_behaviour,
                  "a simulated issuer's latencies and outcome probabilities"),
    OperatorRoute("PUT", "/sim/v1/operator/issuers/{issuerId}/behaviour", put_behaviour,
                  "set a simulated issuer's latencies and outcome probabilities"),
    OperatorRoute("PUT", "/sim/v1/receivers", put_receiver,
                  "how the simulated endpoint behind a webhook URL answers"),
)
