"""A ready cast for examples, tests, benchmarks and notebooks: one member, one issuer per mode.

Public names: ``issuer_profile``, ``Cast``, ``example_world``, ``redeem``, ``swap``.

``example_world(seed)`` builds a world with the clearing member ``Northbank`` (10 000 of each
issued asset, no fiat) and three GBP stablecoin issuers, one per settlement mode, on three
ledgers: ``Stellar Sterling`` (Mode 1, asset GBPS, stellar), ``Ether Pound`` (Mode 2, GBPE,
evm, signed webhooks) and ``Sol Quid`` (Mode 3, GBPQ, solana, polling), each with
£10 000 000 at the RTGS adapter.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from attrs import frozen

from clearing_sim.domain.initiation import AssetRef, InitiateRequest, LegRequest
from clearing_sim.domain.money import Asset
from clearing_sim.domain.profile import IssuerProfile, parse_profile
from clearing_sim.domain.transaction import UseCase
from clearing_sim.sim.issuer import IssuerBehaviour
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.world import World, WorldConfig

__all__ = ["Cast", "example_world", "issuer_profile", "redeem", "swap"]

_LEDGER = {1: "stellar", 2: "evm", 3: "solana"}
_FEEDBACK = {1: ("POLLABLE_RESOURCE",), 2: ("SIGNED_WEBHOOK",), 3: ("POLLABLE_RESOURCE",)}


def issuer_profile(mode: int, *, ledger: str | None = None,
                   feedback: tuple[str, ...] | None = None, approval_sla_s: int = 900,
                   custody: str = "POOLED_ISSUER_WALLET",
                   fiat_leg: str = "NUVANTE_SETTLES_RTGS") -> IssuerProfile:
    """A valid profile that derives ``mode`` (1, 2 or 3), through the same validation."""
    body: dict[str, Any] = {
        "commitPoint": "ON_OBSERVATION" if mode == 1 else "ON_INSTRUCTION",
        "custodyModel": custody,
        "feedbackChannel": list(feedback or _FEEDBACK[mode]),
        "fiatLeg": fiat_leg,
        "ledger": ledger or _LEDGER[mode],
        "approvalSlaSeconds": approval_sla_s,
        "mintDeliveryTarget": "REGISTERED_HANDLE",
        "finalityClass": "DETERMINISTIC",
    }
    if mode != 1:
        body["preBurnTransferRequired"] = mode == 3
        body["apiBaseUrl"] = f"https://issuer-{mode}.example/api"
        body["webhookUrl"] = "https://service.example/issuer-webhooks"
    return parse_profile(body)


@frozen
class Cast:
    world: World
    member: Participant
    issuers: dict[int, Participant]

    def asset(self, mode: int) -> Asset:
        return self.issuers[mode].assets[0]


def example_world(seed: int = 0, *, approval_sla_s: int = 900,
                  feedback: dict[int, tuple[str, ...]] | None = None,
                  behaviours: dict[int, IssuerBehaviour] | None = None,
                  member_rtgs_gbp: Decimal = Decimal("0.00"),
                  config: WorldConfig | None = None, **world_options: Any) -> Cast:
    """``world_options`` go to ``World`` (``log_sink``, ``retain_log``, ``forget_terminal``)."""
    world = World(config or WorldConfig(seed=seed), **world_options)
    names = {1: ("Stellar Sterling", "GBPS"), 2: ("Ether Pound", "GBPE"), 3: ("Sol Quid", "GBPQ")}
    issuers = {}
    for mode, (name, code) in names.items():
        profile = issuer_profile(mode, approval_sla_s=approval_sla_s,
                                 feedback=(feedback or {}).get(mode))
        issuers[mode] = world.add_issuer(name, profile, (code,), Decimal("10000000.00"),
                                         (behaviours or {}).get(mode))
    wallets = {issuers[m].assets[0]: Decimal("10000.00") for m in names}
    member = world.add_member("Northbank", member_rtgs_gbp, wallets)
    return Cast(world, member, issuers)


def redeem(asset: Asset, amount: str = "100.00", reference: str = "INV-0001") -> InitiateRequest:
    """Redeem ``amount`` of ``asset`` for the same amount of its fiat currency."""
    return InitiateRequest(UseCase.REDEEM, reference,
                           LegRequest(amount, AssetRef(asset.code, asset.issuer)),
                           LegRequest(amount, AssetRef(asset.currency)))


def swap(source: Asset, target: Asset, amount: str = "100.00",
         reference: str = "SWP-0001") -> InitiateRequest:
    return InitiateRequest(UseCase.SWAP, reference,
                           LegRequest(amount, AssetRef(source.code, source.issuer)),
                           LegRequest(amount, AssetRef(target.code, target.issuer)))
