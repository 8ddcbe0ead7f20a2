"""Adding a participant mid-run: the one reading of its terms and the one change to the world.

Public names: ``Admitted``, ``DEFAULT_MODE_BY_LEDGER``, ``NAME_LENGTH_MAX``, ``NewParticipant``,
``admit``, ``read_new_participant``.

Two doors add a participant to a running world and must change it identically, so that a
session recorded by the shim replays to the same digest: ``POST /sim/v1/participants``
(``clearing_sim.http.participants``) and the scenario step ``operator: {add_participant}``
(``clearing_sim.scenario``). Both read the body here (``read_new_participant``, the operator
body's wire names) and both call ``admit``.

A clearing member may bring ``wallets`` (asset code → decimal string, funded by minting on
the asset's ledger) and an ``rtgsBalanceGbp``; a stablecoin issuer ``assets``
(``[{code, ledger, currency?}]``, all on its profile's ledger), a ``profile`` (the spec's
issuer capability profile, validated as ``PUT /api/v1/issuers/{id}/capabilities`` does) and
a ``behaviour`` (``clearing_sim.service.behaviour``). An issuer with assets and no profile
gets the ledger's usual mode (stellar 1, evm 2, solana 3) with the example profile of that
mode (``clearing_sim.sim.examples.issuer_profile``). Names are unique as in onboarding
(case-insensitive, spaces collapsed): a clash is ``organisation_name_taken``.

``admit`` changes the world exactly as these calls would: ``add_issuer`` then
``issue_asset`` per asset (or ``add_member``), then ``issue_api_key``, then
``issue_session``.
"""

from __future__ import annotations

import re
from decimal import Decimal

from attrs import frozen

from clearing_sim.domain.errors import InvalidRequest, NotAllowed, Problem
from clearing_sim.domain.money import GBP, AmountError, Asset, parse_amount
from clearing_sim.domain.parties import ParticipantKind
from clearing_sim.domain.profile import IssuerProfile, Ledger, parse_profile
from clearing_sim.service.auth import Credentials
from clearing_sim.service.behaviour import read_behaviour
from clearing_sim.service.body import Fields
from clearing_sim.service.onboarding import NAME_LENGTH_MAX
from clearing_sim.sim.examples import issuer_profile
from clearing_sim.sim.issuer import IssuerBehaviour
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.world import World

__all__ = ["DEFAULT_MODE_BY_LEDGER", "NAME_LENGTH_MAX", "Admitted", "NewParticipant", "admit",
           "read_new_participant"]

DEFAULT_MODE_BY_LEDGER = {Ledger.STELLAR: 1, Ledger.EVM: 2, Ledger.SOLANA: 3}
_KINDS = tuple(kind.value for kind in ParticipantKind)
_MEMBER_ONLY = ("wallets",)
_ISSUER_ONLY = ("assets", "profile", "behaviour")
_CODE = re.compile(r"[A-Za-z0-9]{1,12}")
_CURRENCY = re.compile(r"[A-Z]{3}")
_ZERO = re.compile(r"0(\.0{1,18})?")


@frozen
class NewParticipant:
    kind: ParticipantKind
    name: str
    rtgs_gbp: Decimal
    wallets: tuple[tuple[Asset, Decimal], ...] = ()
    assets: tuple[tuple[str, str], ...] = ()  # (code, currency)
    profile: IssuerProfile | None = None
    behaviour: IssuerBehaviour | None = None


@frozen
class Admitted:
    """The participant added and the credentials issued to it."""

    participant: Participant
    api_key_id: str
    api_key: str
    admin_token: str


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


def _wallets(f: Fields, world: World | None) -> tuple[tuple[Asset, Decimal], ...]:
    given = f.object("wallets", required=False)
    if given is None or world is None:  # no world yet: its assets are looked up at the run
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


def read_new_participant(f: Fields, world: World | None) -> NewParticipant:
    """The participant the body ``f`` describes, or ``InvalidRequest`` with every problem
    (the first decides the code), then ``NotAllowed`` for a name already taken. ``world``
    None: a scenario file being read, before any world exists; what needs the world (the
    wallets' assets, the name clash) is checked when the step runs."""
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
        wallets = _wallets(f, world)
    elif kind is ParticipantKind.STABLECOIN_ISSUER:
        profile = _profile(f)
        assets, ledger = _assets(f, profile)
        if profile is None and ledger is not None and "profile" not in f.obj:
            profile = issuer_profile(DEFAULT_MODE_BY_LEDGER[ledger], ledger=ledger.value)
        given = f.object("behaviour", required=False)
        if given is not None:
            behaviour = read_behaviour(given)
            given.check_unknown()
    f.done(*foreign, *(("wallets",) if world is None else ()))
    assert kind is not None and name is not None
    taken = None if world is None else next(
        (p for p in world.participants if _name_key(p.name) == _name_key(name)), None)
    if taken is not None:
        raise NotAllowed.one("name", "organisation_name_taken",
                             f"a participant named {taken.name!r} already exists")
    return NewParticipant(kind, name, rtgs, wallets, assets, profile, behaviour)


def admit(world: World, credentials: Credentials, new: NewParticipant) -> Admitted:
    """Add ``new`` to the world, then issue its API key and a tenant-admin session."""
    if new.kind is ParticipantKind.STABLECOIN_ISSUER:
        participant = world.add_issuer(new.name, new.profile, (), new.rtgs_gbp, new.behaviour)
        for code, currency in new.assets:
            world.issue_asset(participant.id, code, currency)
    else:
        participant = world.add_member(new.name, new.rtgs_gbp, dict(new.wallets))
    key_id, key = credentials.issue_api_key(participant.id)
    token = credentials.issue_session(participant.id)
    return Admitted(participant, key_id, key, token)
