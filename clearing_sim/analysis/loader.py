"""Loading workload files: read, parse with positions, validate, check, build a ``Workload``.

Public names: ``load_workload``, ``parse_workload``, ``read_text``, ``read_workload``.

The machinery is the scenario loader's (``clearing_sim.scenario``): YAML parsed keeping every
node's line and column, the JSON Schema (``workload.schema.json``), then the checks the schema
cannot express, each a ``Problem`` at its ``path:line:col``: names used but not defined (asset
codes, webhook participants), duplicate names, issuer profiles the service would refuse,
outcome probabilities adding up to more than 1, empty ranges (uniform amounts, outages), a
swap share with no second asset to swap into. Every problem of a file is reported together
as one ``ScenarioInvalid`` (the CLI's exit code 2).
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

from attrs import evolve

from clearing_sim.analysis.model import (
    AMOUNT_DIGITS_MAX,
    Amount,
    Arrivals,
    IssuerLoad,
    MemberLoad,
    Outage,
    ReceiverLoad,
    WebhookLoad,
    Workload,
)
from clearing_sim.analysis.schema import workload_problems
from clearing_sim.scenario.errors import ScenarioInvalid, ScenarioNotFound, ScenarioUnreadable
from clearing_sim.scenario.loader import read_bounded
from clearing_sim.scenario.read_world import read_calendar, read_issuer_terms, read_network
from clearing_sim.scenario.reading import Reader, Symbols
from clearing_sim.scenario.source import Document, FieldPath, parse_yaml
from clearing_sim.sim.world import WorldConfig

__all__ = ["load_workload", "parse_workload", "read_text", "read_workload"]

_REQUIRED = {"members": ("arrivals",), "issuers": (), "webhooks": ("participant", "url",
                                                                    "events")}


def read_text(path: str | Path, what: str = "workload") -> str:
    """A file's text, or the ``ScenarioError`` that says why it cannot be read."""
    name = str(path)
    file = Path(path)
    if not file.exists():
        raise ScenarioNotFound(name, "no such file")
    if file.is_dir():
        raise ScenarioUnreadable(name, f"is a folder; expected a {what} file")
    return read_bounded(file, name, what)


def load_workload(path: str | Path) -> Workload:
    """Read and check one workload file; ``ScenarioError`` if it cannot be used."""
    return parse_workload(read_text(path), str(path))


def parse_workload(text: str, path: str) -> Workload:
    """A workload from its text; ``path`` names the file in problems."""
    document = parse_yaml(text, path)
    if not isinstance(document.data, dict):
        found = workload_problems(document)
        raise ScenarioInvalid(path, [problem for _, problem in found])
    return read_workload(document)


def read_workload(document: Document) -> Workload:
    """A workload from a parsed document (a sweep passes one with overrides applied)."""
    found = workload_problems(document)
    reader = Reader(document, (p for p, _ in found if p is not None))
    reader.problems.extend(problem for _, problem in found)
    symbols = Symbols.read(reader)
    data: dict[str, Any] = document.data
    issuers = tuple(_issuer(reader, key, raw, path)
                    for key, raw, path in _entries(reader, "issuers"))
    members = tuple(_member(reader, symbols, key, raw, path)
                    for key, raw, path in _entries(reader, "members"))
    webhooks = tuple(_webhook(reader, symbols, key, raw, path)
                     for key, raw, path in _entries(reader, "webhooks"))
    _unique_names(reader, issuers, members)
    horizon = reader.get(data, (), "horizon")
    horizon_ms = reader.duration(("horizon",), horizon) if horizon is not None else 0
    if horizon is not None and horizon_ms <= 0:
        reader.report(("horizon",), "expected a horizon longer than 0")
    drain = reader.get(data, (), "drain")
    world = reader.get(data, (), "world", {})
    epoch = reader.get(world, ("world",), "epoch")
    if epoch is not None and reader.timestamp_ms(("world", "epoch"), epoch) is None:
        epoch = None
    calendar = read_calendar(reader, world, ("world",))
    if reader.problems:
        raise ScenarioInvalid(document.path, reader.problems)
    return Workload(
        name=data["workload"], path=document.path, horizon_ms=horizon_ms, issuers=issuers,
        members=members, webhooks=webhooks, description=data.get("description", ""),
        epoch=epoch or WorldConfig().epoch,
        drain_ms=None if drain is None else reader.duration(("drain",), drain),
        rtgs_calendar=calendar, data=data)


def _entries(r: Reader, section: str) -> list[tuple[str, dict[str, Any], FieldPath]]:
    data = r.document.data.get(section)
    if not isinstance(data, dict) or r.blocked((section,)):
        return []
    return [(name, spec, (section, name)) for name, spec in data.items()
            if isinstance(spec, dict) and not r.blocked((section, name), _REQUIRED[section])]


def _decimal(r: Reader, raw: dict[str, Any], path: FieldPath, key: str,
             default: str | None = None) -> Decimal | None:
    value = r.get(raw, path, key, default)
    return None if value is None else Decimal(value)


# issuers -----------------------------------------------------------------------------------
def _issuer(r: Reader, key: str, raw: dict[str, Any], path: FieldPath) -> IssuerLoad:
    terms = read_issuer_terms(r, raw, path)
    return IssuerLoad(key, r.get(raw, path, "name", key), terms.profile, terms.behaviour,
                      terms.assets,
                      _decimal(r, raw, path, "rtgs", "0.00") or Decimal("0.00"),
                      r.get(raw, path, "currency", "GBP"))


# members -----------------------------------------------------------------------------------
def _member(r: Reader, s: Symbols, key: str, raw: dict[str, Any],
            path: FieldPath) -> MemberLoad:
    wallets = []
    for code, amount in r.get(raw, path, "wallets", {}).items():
        _known_asset(r, s, (*path, "wallets", code), code)
        wallets.append((code, Decimal(amount)))
    weights = r.get(raw, path, "assets")
    if weights is None:
        assets = tuple((code, 1.0) for code, _ in wallets)
        if not assets:
            r.report(path, "expected assets (source asset → weight) or wallets to redeem from")
    else:
        for code in weights:
            _known_asset(r, s, (*path, "assets", code), code)
        assets = tuple((code, float(weight)) for code, weight in weights.items())
        if weights and not any(weight > 0 for _, weight in assets):
            r.report((*path, "assets"), "expected at least one weight above 0")
    mix = _mix(r, raw, path)
    if dict(mix).get("swap", 0.0) > 0 and len(assets) < 2:
        r.report((*path, "mix", "swap"), "a swap needs a second asset to swap into; expected "
                 "at least two assets in the member's assets (or wallets)")
    arrivals_raw = r.get(raw, path, "arrivals", {})
    rate = float(r.get(arrivals_raw, (*path, "arrivals"), "rate_per_hour", 0.0))
    intraday = r.get(arrivals_raw, (*path, "arrivals"), "intraday")
    if intraday is not None and not any(v > 0 for v in intraday):
        r.report((*path, "arrivals", "intraday"), "expected at least one multiplier above 0")
    arrivals = Arrivals(rate, None if intraday is None else tuple(float(v) for v in intraday))
    amount = _amount(r, r.get(raw, path, "amount"), (*path, "amount"))
    return MemberLoad(key, r.get(raw, path, "name", key), arrivals, assets,
                      _decimal(r, raw, path, "rtgs", "0.00") or Decimal("0.00"),
                      tuple(wallets), mix, amount)


def _known_asset(r: Reader, s: Symbols, path: FieldPath, code: str) -> None:
    if s.kind(code) != "asset":
        r.report(path, f"no issuer in this file issues {code!r}; expected an asset code listed "
                 "under some issuer's assets", key=True)


def _mix(r: Reader, raw: dict[str, Any], path: FieldPath) -> tuple[tuple[str, float], ...]:
    mix_raw = r.get(raw, path, "mix")
    if mix_raw is None:
        return (("redeem", 1.0),)
    mix = tuple((use_case, float(mix_raw[use_case])) for use_case in ("redeem", "swap")
                if use_case in mix_raw)
    if not any(weight > 0 for _, weight in mix):
        r.report((*path, "mix"), "expected a weight above 0 for redeem or swap")
    return mix


def _amount(r: Reader, raw: Any, path: FieldPath) -> Amount:
    if raw is None:
        return Amount.fixed(Decimal("100.00"))
    # a list, not a generator: every amount with too many digits is reported, not the first
    if not all([_amount_fits(r, where, text, key) for where, text, key in _amounts(raw, path)]):
        return Amount.fixed(Decimal("100.00"))  # never sampled: the file is refused
    if isinstance(raw, str):
        raw = {"fixed": raw}
    ((kind, value),) = raw.items()
    if kind == "fixed":
        amount = Amount.fixed(Decimal(value))
    elif kind == "uniform":
        amount = Amount("uniform", low=Decimal(value[0]), high=Decimal(value[1]))
    elif kind == "lognormal":
        low, high = value.get("min"), value.get("max")
        amount = Amount("lognormal", median=Decimal(value["median"]),
                        sigma=float(value.get("sigma", 1.0)),
                        low=None if low is None else Decimal(low),
                        high=None if high is None else Decimal(high))
        if amount.median is not None and amount.median <= 0:  # its log is the draws' mean
            r.report((*path, kind, "median"), f"expected a median above 0, got "
                     f"{value['median']}")
    else:
        amount = Amount("choice", choices=tuple((Decimal(a), float(w)) for a, w in value.items()))
        weights = [weight for _, weight in amount.choices]
        if not any(weight > 0 for weight in weights):
            r.report((*path, kind), "expected at least one weight above 0")
        elif not math.isfinite(sum(weights)):  # random.choices draws below their total
            r.report((*path, kind), "expected weights whose total is a finite number")
    if amount.low is not None and amount.high is not None and amount.low > amount.high:
        r.report((*path, kind), f"expected the lower amount first: {amount.low} is above "
                 f"{amount.high}")
    return amount


def _amounts(raw: Any, path: FieldPath) -> list[tuple[FieldPath, str, bool]]:
    """Every amount a distribution writes (the schema checked each is a decimal string):
    where it is, its text, and whether it is a key (a choice's)."""
    if isinstance(raw, str):
        return [(path, raw, False)]
    ((kind, value),) = raw.items()
    where = (*path, kind)
    if kind == "fixed":
        return [(where, value, False)]
    if kind == "uniform":
        return [((*where, i), text, False) for i, text in enumerate(value)]
    if kind == "lognormal":
        return [((*where, name), value[name], False) for name in ("median", "min", "max")
                if name in value]
    return [((*where, text), text, True) for text in value]


def _amount_fits(r: Reader, path: FieldPath, text: str, key: bool) -> bool:
    """Whether an amount has no more digits than the API's amounts (else it is reported)."""
    whole, _, places = text.partition(".")
    if len(whole.lstrip("0")) <= AMOUNT_DIGITS_MAX and len(places) <= AMOUNT_DIGITS_MAX:
        return True
    shown = text if len(text) <= 40 else f"{text[:40]}…"
    r.report(path, f"expected an amount with at most {AMOUNT_DIGITS_MAX} digits before the "
             f"point and {AMOUNT_DIGITS_MAX} after, as the API's, got {shown}", key=key)
    return False


# webhooks ----------------------------------------------------------------------------------
def _webhook(r: Reader, s: Symbols, key: str, raw: dict[str, Any],
             path: FieldPath) -> WebhookLoad:
    if s.kind(raw["participant"]) not in ("member", "issuer"):
        r.report((*path, "participant"), f"{raw['participant']!r} is not a participant of this "
                 "file; expected the name of a member or an issuer")
    receiver = _receiver(r, r.get(raw, path, "receiver", {}), (*path, "receiver"))
    where = r.site(path)
    site = f"{r.document.path}:{where.line}:{where.column}: {where.field}"
    return WebhookLoad(key, raw["participant"], raw["url"], tuple(raw["events"]), site,
                       r.get(raw, path, "description"), receiver)


def _receiver(r: Reader, raw: dict[str, Any], path: FieldPath) -> ReceiverLoad:
    changes: dict[str, Any] = {}
    if r.get(raw, path, "status") is not None:
        changes["status"] = raw["status"]
    if r.get(raw, path, "latency") is not None:
        changes["latency"] = r.latency((*path, "latency"), raw["latency"])
    changes.update(read_network(r, r.get(raw, path, "network", {}), (*path, "network")))
    outages = []
    previous_until = -1
    for i, outage in enumerate(r.get(raw, path, "outages", ())):
        where = (*path, "outages", i)
        if not isinstance(outage, dict) or r.blocked(where, ("from", "until")):
            continue
        start = r.duration((*where, "from"), outage["from"])
        end = r.duration((*where, "until"), outage["until"])
        if end <= start:
            r.report((*where, "until"), f"expected an outage to end after it starts "
                     f"({outage['from']})")
        elif start < previous_until:
            r.report((*where, "from"), "expected outages in time order, not overlapping")
        previous_until = max(previous_until, end)
        outages.append(Outage(start, end, int(outage.get("status", 503))))
    changes["outages"] = tuple(outages)
    return evolve(ReceiverLoad(), **changes)


def _unique_names(r: Reader, issuers: tuple[IssuerLoad, ...],
                  members: tuple[MemberLoad, ...]) -> None:
    seen: dict[str, str] = {}
    parties: list[tuple[str, str, str]] = [("issuers", i.key, i.name) for i in issuers]
    parties += [("members", m.key, m.name) for m in members]
    for section, key, name in parties:
        first = seen.setdefault(name, key)
        if first != key:
            r.report((section, key, "name"), f"participantName {name!r} is also {first}'s; "
                     "expected each participant to have its own name")
