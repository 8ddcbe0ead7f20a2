"""Reading a scenario's world: settings, members, issuers, agents and webhook subscriptions.

Public names: ``BEHAVIOUR_LATENCIES``, ``IssuerTerms``, ``WorldPart``,
``read_behaviour_changes``, ``read_calendar``, ``read_issuer_terms``, ``read_network``,
``read_receiver``, ``read_world``.

Each issuer's profile goes through the engine's own validation (``parse_profile``), so a
profile the API would refuse is refused here, at its line; its behaviour is built as the
engine's ``IssuerBehaviour``, so impossible outcome probabilities are caught before a run.
An RTGS calendar (``world.rtgs_calendar``) goes through ``parse_calendar``, the operator
surface's own reading, each problem at its field's line.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from attrs import evolve, frozen

from clearing_sim.domain.calendar import OperatingCalendar, parse_calendar
from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.domain.profile import IssuerProfile, parse_profile
from clearing_sim.scenario.model import (
    AgentSpec,
    IssuerSpec,
    MemberSpec,
    ReceiverSpec,
    WebhookSpec,
    WorldSpec,
)
from clearing_sim.scenario.read_gateway import read_gateway
from clearing_sim.scenario.reading import Reader, Symbols
from clearing_sim.scenario.source import FieldPath
from clearing_sim.service.behaviour import BEHAVIOUR_LATENCIES, HOLD_POINT_NAMES
from clearing_sim.sim.issuer import IssuerBehaviour

__all__ = ["BEHAVIOUR_LATENCIES", "HOLD_POINT_NAMES", "IssuerTerms", "WorldPart",
           "read_behaviour_changes", "read_calendar", "read_issuer_terms", "read_network",
           "read_receiver", "read_world"]

_OUTCOMES = {"rejected": "p_rejected", "failed": "p_failed", "silence": "p_silence"}


@frozen
class WorldPart:
    world: WorldSpec
    members: tuple[MemberSpec, ...]
    issuers: tuple[IssuerSpec, ...]
    agents: tuple[AgentSpec, ...]
    webhooks: tuple[WebhookSpec, ...]


_REQUIRED = {"members": (), "issuers": (), "agents": ("member",), "webhooks": ("participant",)}


def _entries(r: Reader, section: str) -> list[tuple[str, dict[str, Any], FieldPath]]:
    data = r.document.data.get(section)
    if not isinstance(data, dict) or r.blocked((section,)):
        return []
    return [(name, spec, (section, name)) for name, spec in data.items()
            if isinstance(spec, dict) and not r.blocked((section, name), _REQUIRED[section])]


def _settings(r: Reader) -> WorldSpec:
    raw = r.document.data.get("world")
    if not isinstance(raw, dict) or r.blocked(("world",)):
        return WorldSpec()
    path: FieldPath = ("world",)
    spec = WorldSpec()
    epoch = r.get(raw, path, "epoch")
    if epoch is not None and r.timestamp_ms((*path, "epoch"), epoch) is None:
        epoch = None
    dns = tuple((host, tuple(addresses))
                for host, addresses in r.get(raw, path, "dns", {}).items())
    return evolve(spec, seed=r.get(raw, path, "seed", spec.seed), epoch=epoch or spec.epoch,
                  environment=r.get(raw, path, "environment", spec.environment), dns=dns,
                  rtgs_calendar=read_calendar(r, raw, path))


_PARAM = re.compile(r"([A-Za-z]+)(?:\[([0-9]+)\])?")
#: a file's snake_case calendar keys (docs/scenarios.md: keys of our own) → the wire's
_CALENDAR_KEYS = {"time_zone": "timeZone", "opens": "opens", "cut_off": "cutOff",
                 "closes": "closes", "closed_weekdays": "closedWeekdays",
                 "holidays": "holidays"}
_FILE_KEY = {wire: key for key, wire in _CALENDAR_KEYS.items()}


def read_calendar(r: Reader, raw: dict[str, Any], path: FieldPath) -> OperatingCalendar | None:
    """``rtgs_calendar`` under ``path`` (a world section), read by the operator surface's
    ``parse_calendar``: None when absent or refused, each problem reported at its field
    (``holidays[2]`` at that holiday's line)."""
    where = (*path, "rtgs_calendar")
    body = r.get(raw, path, "rtgs_calendar")
    if body is None:
        return None
    try:  # an unknown key is the schema's to report (with a "did you mean")
        return parse_calendar({_CALENDAR_KEYS[k]: v for k, v in body.items()
                               if k in _CALENDAR_KEYS})
    except InvalidRequest as error:
        for problem in error.problems:
            match = _PARAM.fullmatch(problem.param or "")
            at: FieldPath = where if match is None else (*where, _FILE_KEY[match[1]])
            if match is not None and match[2] is not None:
                at = (*at, int(match[2]))
            message = problem.message
            for wire, key in _FILE_KEY.items():
                message = message.replace(wire, key)
            r.report(at, f"invalid RTGS calendar ({problem.code}): {message}")
        return None


def _member(r: Reader, s: Symbols, key: str, raw: dict[str, Any], path: FieldPath) -> MemberSpec:
    wallets = []
    for code, amount in r.get(raw, path, "wallets", {}).items():
        if s.kind(code) != "asset":
            r.report((*path, "wallets", code), f"no issuer in this file issues {code!r}; expected "
                     "an asset code listed under some issuer's assets", key=True)
        wallets.append((code, Decimal(amount)))
    return MemberSpec(key, r.get(raw, path, "name", key), r.site(path),
                      Decimal(r.get(raw, path, "rtgs", "0.00")), tuple(wallets))


def _profile(r: Reader, raw: Any, path: FieldPath) -> IssuerProfile | None:
    try:
        return parse_profile(raw)
    except InvalidRequest as error:
        for problem in error.problems:
            where = (*path, problem.param) if problem.param else path
            r.report(where, f"invalid profile ({problem.code}): {problem.message}")
        return None


def read_behaviour_changes(r: Reader, raw: dict[str, Any],
                           path: FieldPath) -> tuple[tuple[str, Any], ...]:
    """``{latency: {...}, outcomes: {...}, hold_at: ...}`` → ``IssuerBehaviour`` attribute
    changes. An unknown name is skipped: the schema has reported it (with a "did you mean")."""
    changes: list[tuple[str, Any]] = []
    for name, value in r.get(raw, path, "latency", {}).items():
        latency = r.latency((*path, "latency", name), value)
        if latency is not None and name in BEHAVIOUR_LATENCIES:
            changes.append((BEHAVIOUR_LATENCIES[name], latency))
    for name, value in r.get(raw, path, "outcomes", {}).items():
        if name in _OUTCOMES:
            changes.append((_OUTCOMES[name], float(value)))
    hold_at = r.get(raw, path, "hold_at")
    if isinstance(hold_at, str) and hold_at in HOLD_POINT_NAMES:  # else the schema reported it
        changes.append(("hold_at", InstructionStatus(hold_at)))
    return tuple(changes)


@frozen
class IssuerTerms:
    """What a scenario's and a workload's issuer entries share: ``profile`` (None when it
    is absent or refused), the ``assets`` it issues, its ``behaviour``."""

    profile: IssuerProfile | None
    assets: tuple[str, ...]
    behaviour: IssuerBehaviour


def read_issuer_terms(r: Reader, raw: dict[str, Any], path: FieldPath) -> IssuerTerms:
    """An issuer entry's profile, assets and behaviour, each problem reported at its line."""
    profile_raw = r.get(raw, path, "profile")
    profile = _profile(r, profile_raw, (*path, "profile")) if profile_raw is not None else None
    assets = tuple(r.get(raw, path, "assets", ()))
    if assets and "profile" not in raw:
        r.report((*path, "assets"), "an issuer issues assets on the ledger of its profile; "
                 "expected a profile beside assets")
    behaviour = IssuerBehaviour()
    behaviour_raw = r.get(raw, path, "behaviour")
    if behaviour_raw is not None:
        changes = read_behaviour_changes(r, behaviour_raw, (*path, "behaviour"))
        try:
            behaviour = evolve(behaviour, **dict(changes))
        except ValueError as error:
            r.report((*path, "behaviour", "outcomes"), f"expected outcome probabilities that "
                     f"add up to 1 at most: {error}")
    return IssuerTerms(profile, assets, behaviour)


def _issuer(r: Reader, key: str, raw: dict[str, Any], path: FieldPath) -> IssuerSpec:
    terms = read_issuer_terms(r, raw, path)
    profile, assets, behaviour = terms.profile, terms.assets, terms.behaviour
    gateway = read_gateway(r, raw, path)
    if gateway and (profile is None or not profile.mode.has_instructions):
        r.report((*path, "gateway"), "only an ON_INSTRUCTION issuer (Mode 2 or 3) has a "
                 "gateway to call; expected a profile with commitPoint ON_INSTRUCTION")
    return IssuerSpec(key, r.get(raw, path, "name", key), r.site(path),
                      Decimal(r.get(raw, path, "rtgs", "0.00")),
                      r.get(raw, path, "currency", "GBP"), assets, profile, behaviour,
                      gateway)


def _agent(r: Reader, s: Symbols, world: WorldSpec, key: str, raw: dict[str, Any],
           path: FieldPath) -> AgentSpec:
    if s.kind(raw["member"]) != "member":
        r.report((*path, "member"), f"{raw['member']!r} is not a member of this file; expected "
                 "the name of a member, whose tenant admin mints the agent")
    if world.environment == "production":
        r.report(path, "agents exist only in the sandbox; expected world.environment: sandbox")
    expires = r.get(raw, path, "expires_in")
    capabilities = r.get(raw, path, "capabilities", {})
    return AgentSpec(key, raw["member"], r.site(path), tuple(capabilities.items()),
                     24 * 3_600_000 if expires is None
                     else r.duration((*path, "expires_in"), expires),
                     r.get(raw, path, "amount_cap_gbp"))


def read_receiver(r: Reader, raw: dict[str, Any], path: FieldPath) -> ReceiverSpec:
    spec = ReceiverSpec()
    changes: dict[str, Any] = {}
    for key, name in (("status", "status"), ("then", "then_status"), ("app", "app")):
        if r.get(raw, path, key) is not None:
            changes[name] = raw[key]
    if r.get(raw, path, "until") is not None:
        changes["until_ms"] = r.duration((*path, "until"), raw["until"])
    if r.get(raw, path, "latency") is not None:
        changes["latency"] = r.latency((*path, "latency"), raw["latency"])
    changes.update(read_network(r, r.get(raw, path, "network", {}), (*path, "network")))
    return evolve(spec, **changes)


def read_network(r: Reader, raw: dict[str, Any], path: FieldPath) -> dict[str, Any]:
    """``{loss, duplicate, reorder, reorder_delay, duplicate_delay}`` → ``ReceiverSpec`` fields."""
    changes: dict[str, Any] = {}
    for name in ("loss", "duplicate", "reorder"):
        if r.get(raw, path, name) is not None:
            changes[name] = float(raw[name])
    for name in ("reorder_delay", "duplicate_delay"):
        if r.get(raw, path, name) is not None:
            changes[name] = r.latency((*path, name), raw[name])
    return changes


def _webhook(r: Reader, s: Symbols, key: str, raw: dict[str, Any],
             path: FieldPath) -> WebhookSpec:
    if s.kind(raw["participant"]) not in ("member", "issuer"):
        r.report((*path, "participant"), f"{raw['participant']!r} is not a participant of this "
                 "file; expected the name of a member or an issuer")
    receiver = read_receiver(r, r.get(raw, path, "receiver", {}), (*path, "receiver"))
    return WebhookSpec(key, raw["participant"], r.site(path), r.get(raw, path, "url", ""),
                       tuple(r.get(raw, path, "events", ())), r.get(raw, path, "description"),
                       receiver)


def _unique_names(r: Reader, parties: tuple[MemberSpec | IssuerSpec, ...]) -> None:
    seen: dict[str, MemberSpec | IssuerSpec] = {}
    for party in parties:
        first = seen.setdefault(party.name, party)
        if first is not party:
            r.report(tuple(party.site.field.split(".")), f"participantName {party.name!r} is "
                     f"also {first.key}'s (line {first.site.line}); expected each participant "
                     "to have its own name")


def read_world(r: Reader, s: Symbols) -> WorldPart:
    world = _settings(r)
    members = tuple(_member(r, s, k, raw, p) for k, raw, p in _entries(r, "members"))
    issuers = tuple(_issuer(r, k, raw, p) for k, raw, p in _entries(r, "issuers"))
    _unique_names(r, (*issuers, *members))
    agents = tuple(_agent(r, s, world, k, raw, p) for k, raw, p in _entries(r, "agents"))
    webhooks = tuple(_webhook(r, s, k, raw, p) for k, raw, p in _entries(r, "webhooks"))
    return WorldPart(world, members, issuers, agents, webhooks)
