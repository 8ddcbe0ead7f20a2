"""Operator routes for the cast: create participants, list them, issue credentials.

Public names: ``ROUTES``, ``DEFAULT_MODE_BY_LEDGER``.

``POST /sim/v1/participants`` reads the whole body before changing anything, so a refusal
changes nothing. A clearing member may bring ``wallets`` (asset code → decimal string,
funded by minting on the asset's ledger) and an ``rtgsBalanceGbp``; a stablecoin issuer
``assets`` (``[{code, ledger, currency?}]``, all on its profile's ledger), a ``profile`` (the
spec's issuer capability profile, validated as ``PUT /api/v1/issuers/{id}/capabilities``
does) and a ``behaviour`` (``clearing_sim.http.behaviour``). An issuer with assets and no
profile gets the ledger's usual mode (stellar 1, evm 2, solana 3) with the example
profile of that mode (``clearing_sim.sim.examples.issuer_profile``). Names are unique as in
onboarding (case-insensitive, spaces collapsed): a clash is 409 ``organisation_name_taken``.

The world is changed exactly as these in-process calls would: ``add_issuer`` then
``issue_asset`` per asset (or ``add_member``), then ``issue_api_key``, then
``issue_session``.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from attrs import frozen

from clearing_sim.domain.errors import InvalidRequest, NotAllowed, Problem
from clearing_sim.domain.money import GBP, AmountError, Asset, parse_amount
from clearing_sim.domain.parties import ParticipantKind
from clearing_sim.domain.profile import IssuerProfile, Ledger, parse_profile
from clearing_sim.http.behaviour import read_behaviour
from clearing_sim.http.surface import OperatorContext, OperatorRoute, no_query, participant_of
from clearing_sim.service import wire
from clearing_sim.service.auth import SESSION_TTL_S
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Reply
from clearing_sim.sim.examples import issuer_profile
from clearing_sim.sim.issuer import IssuerBehaviour
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.world import World

__all__ = ["DEFAULT_MODE_BY_LEDGER", "ROUTES"]

DEFAULT_MODE_BY_LEDGER = {Ledger.STELLAR: 1, Ledger.EVM: 2, Ledger.SOLANA: 3}
NAME_LENGTH_MAX = 200
_KINDS = tuple(kind.value for kind in ParticipantKind)
_MEMBER_ONLY = ("wallets",)
_ISSUER_ONLY = ("assets", "profile", "behaviour")
_CODE = re.compile(r"[A-Za-z0-9]{1,12}")
_CURRENCY = re.compile(r"[A-Z]{3}")
_ZERO = re.compile(r"0(\.0{1,18})?")


@frozen
class _NewParticipant:
    kind: ParticipantKind
    name: str
    rtgs_gbp: Decimal
    wallets: tuple[tuple[Asset, Decimal], ...] = ()
    assets: tuple[tuple[str, str], ...] = ()  # (code, currency)
    profile: IssuerProfile | None = None
    behaviour: IssuerBehaviour | None = None


def _name_key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _gbp(f: Fields, name: str) -> Decimal:
    text = f.text(name, required=False, length_max=40)
    if text is None:
        return Decimal("0.00")
    if _ZERO.fullmatch(text):
        return Decimal("0.00")
    try:
        return parse_amount(text, GBP).amount
    except AmountError as error:
        f.problem(name, "invalid_amount", f"{f.path(name)}: {error}")
        return Decimal("0.00")


def _wallets(f: Fields, world: World) -> tuple[tuple[Asset, Decimal], ...]:
    given = f.object("wallets", required=False)
    if given is None:
        return ()
    funded = []
    for code, amount in given.obj.items():
        matches = [a for p in world.participants for a in p.assets if a.code == code]
        if not matches:
            given.problem(code, "unknown_asset", f"{given.path(code)}: no issuer issues an "
                                                 f"asset {code[:20]!r}")
        elif len(matches) > 1:
            given.problem(code, "invalid_value", f"{given.path(code)}: several issuers issue "
                                                 f"{code}; the code is ambiguous")
        else:
            try:
                funded.append((matches[0], parse_amount(amount, matches[0]).amount))
            except AmountError as error:
                given.problem(code, "invalid_amount", f"{given.path(code)}: {error}")
    return tuple(funded)


def _profile(f: Fields) -> IssuerProfile | None:
    if f.object("profile", required=False) is None:
        return None
    try:
        return parse_profile(f.obj["profile"])
    except InvalidRequest as error:
        for p in error.problems:
            param = f"profile.{p.param}" if p.param else "profile"
            f.problems.append(Problem(param, p.code, p.message))
        return None


def _assets(f: Fields, profile: IssuerProfile | None) -> tuple[tuple[tuple[str, str], ...],
                                                                  Ledger | None]:
    """The issuer's ``(code, currency)`` pairs and the ledger they name."""
    items = f.array("assets", required=False) or []
    chosen: list[tuple[str, str]] = []
    ledgers: list[Ledger] = []
    for index, item in enumerate(items):
        at = f"assets[{index}]"
        if not isinstance(item, dict):
            f.problem(at, "invalid_type", f"{f.path(at)} must be an object")
            continue
        a = Fields(item, f"{f.path(at)}.", f.problems)
        code = a.text("code", length_max=12)
        ledger = a.text("ledger", choices=[ledger.value for ledger in Ledger])
        currency = a.text("currency", required=False, length_max=3) or "GBP"
        a.check_unknown()
        if code is not None and not _CODE.fullmatch(code):
            a.problem("code", "invalid_value", f"{a.path('code')} must be 1 to 12 letters "
                                               "or digits")
        elif code is not None and any(code == c for c, _ in chosen):
            a.problem("code", "invalid_value", f"{a.path('code')} repeats {code}")
        elif code is not None:
            chosen.append((code, currency))
        if not _CURRENCY.fullmatch(currency):
            a.problem("currency", "invalid_value", f"{a.path('currency')} must be three "
                                                   "capital letters (GBP)")
        if ledger is not None:
            expected = profile.ledger if profile is not None else (
                ledgers[0] if ledgers else None)
            if expected is not None and ledger != expected.value:
                a.problem("ledger", "invalid_value",
                          f"{a.path('ledger')} must be {expected.value}: an issuer issues "
                          "on its profile's ledger")
            ledgers.append(Ledger(ledger))
    return tuple(chosen), (ledgers[0] if ledgers else None)


def _read(ctx: OperatorContext) -> _NewParticipant:
    f = ctx.fields()
    kind_text = f.text("kind", choices=_KINDS)
    name = f.text("name", length_max=NAME_LENGTH_MAX)
    rtgs = _gbp(f, "rtgsBalanceGbp")
    kind = ParticipantKind(kind_text) if kind_text is not None else None
    foreign = {ParticipantKind.CLEARING_MEMBER: _ISSUER_ONLY,
               ParticipantKind.STABLECOIN_ISSUER: _MEMBER_ONLY}.get(kind, ()) \
        if kind is not None else ()
    for field_name in foreign:
        if field_name in f.obj:
            f.problem(field_name, "field_not_applicable",
                      f"{field_name} does not apply to a {kind_text}")
    wallets: tuple[tuple[Asset, Decimal], ...] = ()
    assets: tuple[tuple[str, str], ...] = ()
    profile = behaviour = None
    if kind is ParticipantKind.CLEARING_MEMBER:
        wallets = _wallets(f, ctx.world)
    elif kind is ParticipantKind.STABLECOIN_ISSUER:
        profile = _profile(f)
        assets, ledger = _assets(f, profile)
        if profile is None and ledger is not None and "profile" not in f.obj:
            profile = issuer_profile(DEFAULT_MODE_BY_LEDGER[ledger], ledger=ledger.value)
        given = f.object("behaviour", required=False)
        if given is not None:
            behaviour = read_behaviour(given)
            given.check_unknown()
    f.done(*foreign)
    assert kind is not None and name is not None
    taken = next((p for p in ctx.world.participants if _name_key(p.name) == _name_key(name)),
                 None)
    if taken is not None:
        raise NotAllowed.one("name", "organisation_name_taken",
                             f"a participant named {taken.name!r} already exists")
    return _NewParticipant(kind, name, rtgs, wallets, assets, profile, behaviour)


def _add(world: World, new: _NewParticipant) -> Participant:
    if new.kind is ParticipantKind.STABLECOIN_ISSUER:
        issuer = world.add_issuer(new.name, new.profile, (), new.rtgs_gbp, new.behaviour)
        for code, currency in new.assets:
            world.issue_asset(issuer.id, code, currency)
        return issuer
    return world.add_member(new.name, new.rtgs_gbp, dict(new.wallets))


def participant_wire(participant: Participant) -> dict[str, Any]:
    return {**wire.party(participant.party),
            "assets": [wire.asset(asset) for asset in participant.assets]}


async def create(ctx: OperatorContext) -> Reply:
    participant = _add(ctx.world, _read(ctx))
    credentials = ctx.sim.api.credentials
    key_id, key = credentials.issue_api_key(participant.id)
    token = credentials.issue_session(participant.id)
    return Reply(201, {**wire.party(participant.party), "apiKey": key, "apiKeyId": key_id,
                       "adminToken": token,
                       "assets": [wire.asset(asset) for asset in participant.assets]})


async def list_participants(ctx: OperatorContext) -> Reply:
    no_query(ctx)
    return Reply(200, [participant_wire(p) for p in ctx.world.participants], next_cursor=None)


def _participant_id(ctx: OperatorContext) -> Participant:
    f = ctx.fields()
    participant_id = f.text("participantId", length_max=64)
    f.done()
    return participant_of(ctx.world, participant_id)


async def create_session(ctx: OperatorContext) -> Reply:
    participant = _participant_id(ctx)
    token = ctx.sim.api.credentials.issue_session(participant.id)
    expires_ms = ctx.world.now_ms + SESSION_TTL_S * 1000
    return Reply(201, {"token": token, "participantId": participant.id,
                       "expiresAt": ctx.world.iso(expires_ms)})


async def create_api_key(ctx: OperatorContext) -> Reply:
    participant = _participant_id(ctx)
    key_id, key = ctx.sim.api.credentials.issue_api_key(participant.id)
    return Reply(201, {"apiKey": key, "apiKeyId": key_id, "participantId": participant.id})


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("POST", "/sim/v1/participants", create,
                  "add a clearing member or a stablecoin issuer, with its credentials"),
    OperatorRoute("GET", "/sim/v1/participants", list_participants,
                  "every participant of the world"),
    OperatorRoute("POST", "/sim/v1/sessions", create_session,
                  "a tenant-admin portal session (JWT) for a participant"),
    OperatorRoute("POST", "/sim/v1/api-keys", create_api_key,
                  "a new sandbox machine API key for a participant"),
)
