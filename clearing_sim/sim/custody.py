"""On-chain account signers and thresholds, the operator's co-signer keys, and the delegation check.

Public names: ``CustodyRegistry``, ``DelegationCheck``, ``SIGNERS_MAX``, ``SIGNER_WEIGHT_MAX``,
``Signer``, ``SignerConfig``, ``Thresholds``, ``meets_policy``, ``parse_account``.

Every ledger account has signers (``{key, weight}``) and thresholds (``low``, ``medium``,
``high``), modelled on Stellar for all three chains (an EVM Safe or a Solana multisig is the
same idea: weighted keys and a bar to clear). A new account has its own key at weight 1 and
thresholds 0/0/0, as on Stellar. The operator holds one co-signer key per ledger, derived from
the world's ids in that ledger's key format (``serviceOperatorKey``).

A Mode 1 issuer's issuing account is configured at its first Mode 1 profile save with the
operator as co-signer: issuer 1, operator 1, thresholds 1/2/2 (``configure_for_profile``).
``set_signers`` is the engine-level way (scenario files, the operator) to model any other
configuration, a misconfigured one included; each change is one ``custody.signers`` record.

The delegation policy (``meets_policy``; docs/semantics.md), with ``op`` the operator key's
weight and ``others`` the total weight of every other signer:

    op > 0                                   the operator key is a signer
    others < min(medium, high)               nothing moves, and no signer or threshold
                                             changes, without the operator's signature
    others + op >= max(medium, high)         all signers together can operate the account

The low threshold (trust lines, sequence bumps) moves no value and is not part of the policy.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from attrs import field, frozen, validators

from clearing_sim.domain.profile import IssuerProfile, Ledger, SettlementMode
from clearing_sim.sim.chain_formats import account_id
from clearing_sim.sim.seams import Engine

if TYPE_CHECKING:
    from clearing_sim.sim.ledger import ChainLedger
    from clearing_sim.sim.participants import Participant

__all__ = ["SIGNERS_MAX", "SIGNER_WEIGHT_MAX", "CustodyRegistry", "CustodyWorld", "DelegationCheck",
           "Signer", "SignerConfig", "Thresholds", "meets_policy", "parse_account"]

SIGNER_WEIGHT_MAX = 255  # Stellar's bound on weights and thresholds
SIGNERS_MAX = 20
_WEIGHT = validators.and_(validators.instance_of(int), validators.ge(0),
                          validators.le(SIGNER_WEIGHT_MAX))
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_EVM = re.compile(r"0x[0-9a-fA-F]{40}")


@frozen
class Signer:
    key: str
    weight: int = field(validator=_WEIGHT)


@frozen
class Thresholds:
    low: int = field(validator=_WEIGHT)
    medium: int = field(validator=_WEIGHT)
    high: int = field(validator=_WEIGHT)


@frozen
class SignerConfig:
    """An account's signers (in the order set) and thresholds."""

    signers: tuple[Signer, ...]
    thresholds: Thresholds

    @classmethod
    def new_account(cls, account: str) -> SignerConfig:
        """A fresh account: its own key at weight 1, thresholds 0/0/0 (as on Stellar)."""
        return cls((Signer(account, 1),), Thresholds(0, 0, 0))

    @classmethod
    def none(cls) -> SignerConfig:
        """What an account that does not exist shows: no signers, zero thresholds."""
        return cls((), Thresholds(0, 0, 0))

    def weight_of(self, key: str) -> int:
        return sum(s.weight for s in self.signers if s.key == key)


def meets_policy(config: SignerConfig, operator_key: str) -> bool:
    """The delegation policy of the module docstring."""
    operator = config.weight_of(operator_key)
    others = sum(s.weight for s in config.signers) - operator
    t = config.thresholds
    return (operator > 0 and others < min(t.medium, t.high)
            and others + operator >= max(t.medium, t.high))


@frozen
class DelegationCheck:
    """One on-chain look at an account, as the verify-delegation route reports it."""

    ledger: Ledger
    account: str
    verified: bool  # the account exists on that chain
    config: SignerConfig
    operator_key: str
    meets_policy: bool


def _base58_decode(text: str) -> bytes | None:
    if not text or any(c not in _B58 for c in text):
        return None
    n = 0
    for c in text:
        n = n * 58 + _B58.index(c)
    pad = len(text) - len(text.lstrip("1"))
    return b"\0" * pad + (n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b"")


def parse_account(ledger: Ledger, text: str) -> str | None:
    """The account in its canonical form if ``text`` is a well-formed account of ``ledger``.

    stellar: a ``G…`` StrKey with a valid checksum; evm: ``0x`` + 40 hex digits (any case,
    lowercased; checksum case is not checked); solana: base58 of exactly 32 bytes."""
    if ledger is Ledger.EVM:
        return text.lower() if _EVM.fullmatch(text) else None
    if ledger is Ledger.STELLAR:
        if len(text) != 56 or not text.startswith("G"):
            return None
        try:
            payload = base64.b32decode(text)
        except (binascii.Error, ValueError):
            return None
        key = payload[1:33]
        return text if account_id(ledger, key) == text else None
    raw = _base58_decode(text) if 32 <= len(text) <= 44 else None
    if raw is None or len(raw) != 32:
        return None
    return text if account_id(ledger, raw) == text else None


class CustodyWorld(Engine, Protocol):
    """What the registry reads of its run (``sim.seams``): the ledgers whose accounts it
    configures."""

    @property
    def ledgers(self) -> Mapping[Ledger, ChainLedger]: ...


class CustodyRegistry:
    """Signer configurations of the world's ledger accounts, and the operator's keys."""

    def __init__(self, world: CustodyWorld) -> None:
        self.world = world
        self.operator_keys: dict[Ledger, str] = {
            ledger: account_id(ledger, world.ids.raw(f"operator-key:{ledger}", 32))
            for ledger in Ledger}
        self._configs: dict[tuple[Ledger, str], SignerConfig] = {}

    def exists(self, ledger: Ledger, account: str) -> bool:
        return account in self.world.ledgers[ledger].balances

    def config(self, ledger: Ledger, account: str) -> SignerConfig | None:
        """The account's signers and thresholds; ``None`` when it does not exist."""
        if not self.exists(ledger, account):
            return None
        return self._configs.get((ledger, account)) or SignerConfig.new_account(account)

    def check(self, ledger: Ledger, account: str) -> DelegationCheck:
        """Look at the account on-chain: exists?, signers, thresholds, policy met?"""
        operator_key = self.operator_keys[ledger]
        config = self.config(ledger, account)
        if config is None:
            return DelegationCheck(ledger, account, False, SignerConfig.none(), operator_key,
                                   False)
        return DelegationCheck(ledger, account, True, config, operator_key,
                               meets_policy(config, operator_key))

    def set_signers(self, ledger: Ledger, account: str, signers: Sequence[Signer],
                    thresholds: Thresholds, cause: str = "operator") -> SignerConfig:
        """Replace an account's signers and thresholds (``ValueError`` if malformed)."""
        if not self.exists(ledger, account):
            raise ValueError(f"no account {account} on {ledger}")
        if len(signers) > SIGNERS_MAX:
            raise ValueError(f"an account has at most {SIGNERS_MAX} signers")
        keys = [s.key for s in signers]
        for key in keys:
            if parse_account(ledger, key) != key:
                raise ValueError(f"signer key {key!r} is not a {ledger} key in canonical form")
        if len(set(keys)) != len(keys):
            raise ValueError("each signer key may appear once")
        config = SignerConfig(tuple(signers), thresholds)
        self._configs[(ledger, account)] = config
        self.world.log.append(
            "custody.signers", ledger=ledger.value, account=account, cause=cause,
            signers=[{"key": s.key, "weight": s.weight} for s in config.signers],
            thresholds={"low": thresholds.low, "medium": thresholds.medium,
                        "high": thresholds.high})
        return config

    def delegate(self, ledger: Ledger, account: str, cause: str = "operator") -> SignerConfig:
        """Make the operator a co-signer: account 1, operator 1, thresholds 1/2/2."""
        signers = (Signer(account, 1), Signer(self.operator_keys[ledger], 1))
        return self.set_signers(ledger, account, signers, Thresholds(1, 2, 2), cause)

    def configure_for_profile(self, issuer: Participant, profile: IssuerProfile) -> None:
        """At an issuer's first Mode 1 save (call before appending it), delegate its account."""
        mode_1 = SettlementMode.MODE_1
        if profile.mode is not mode_1 or any(p.mode is mode_1 for p in issuer.profiles):
            return
        assert issuer.issuing_account is not None, "the first save opens the issuing account"
        self.delegate(profile.ledger, issuer.issuing_account, cause="mode_1_profile")
