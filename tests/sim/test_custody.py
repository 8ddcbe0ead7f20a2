"""On-chain signers, the operator's co-signer keys and the delegation policy.

Spec, "Issuers": "the service checks the account on-chain itself, for any custody model";
"the verify-delegation call confirms the operator key is an on-chain co-signer before Mode 1
goes live". Spec, "Custody delegation result": signers, thresholds, serviceOperatorKey,
meetsPolicyRequirement.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.profile import Ledger
from clearing_sim.sim import chain_formats
from clearing_sim.sim.custody import (
    Signer,
    SignerConfig,
    Thresholds,
    meets_policy,
    parse_account,
)
from clearing_sim.sim.examples import Cast, example_world, issuer_profile

OP = "operator"
ISSUER = "issuer"


def _config(issuer: int, operator: int, low: int, medium: int, high: int,
            extra: int = 0) -> SignerConfig:
    signers = [Signer(ISSUER, issuer), Signer(OP, operator)]
    if extra:
        signers.append(Signer("other", extra))
    return SignerConfig(tuple(signers), Thresholds(low, medium, high))


@pytest.mark.parametrize(("config", "meets"), [
    (_config(1, 1, 1, 2, 2), True),  # the Mode 1 delegation
    (_config(1, 2, 0, 2, 3), True),
    (_config(1, 0, 1, 2, 2), False),  # operator present at weight 0: not a signer
    (_config(2, 1, 1, 2, 2), False),  # the issuer alone reaches medium
    (_config(1, 1, 1, 1, 2), False),  # medium 1: payments without the operator
    (_config(1, 1, 1, 2, 1), False),  # high 1: the issuer alone can remove the operator
    (_config(1, 1, 1, 3, 3), False),  # together they cannot reach medium: account stuck
    (_config(1, 1, 0, 0, 0), False),  # Stellar's default thresholds
    (_config(1, 1, 1, 2, 2, extra=1), False),  # the two others reach medium together
    (_config(1, 2, 1, 3, 3, extra=1), True),
])
def test_policy_operator_needed_for_value_and_signers_together_can_operate(
        config: SignerConfig, meets: bool) -> None:
    assert meets_policy(config, OP) is meets


def test_policy_fails_when_the_operator_is_not_a_signer() -> None:
    assert not meets_policy(SignerConfig((Signer(ISSUER, 1),), Thresholds(0, 0, 0)), OP)


@pytest.mark.parametrize("ledger", list(Ledger))
@given(key=st.binary(min_size=32, max_size=32))
def test_every_generated_account_parses_as_itself(ledger: Ledger, key: bytes) -> None:
    account = chain_formats.account_id(ledger, key)
    assert parse_account(ledger, account) == account


@pytest.mark.parametrize(("ledger", "text"), [
    (Ledger.STELLAR, ""),
    (Ledger.STELLAR, "G" * 56),  # right shape, wrong checksum
    (Ledger.STELLAR, "SDEIAEJ675UXRH75QEX2PJUEH27EJWDCA2673YH3XVKMLBYBPKANDLVD"),
    (Ledger.STELLAR, "0x" + "ab" * 20),
    (Ledger.EVM, "0x" + "ab" * 19),
    (Ledger.EVM, "0x" + "zz" * 20),
    (Ledger.EVM, "ab" * 21),
    (Ledger.SOLANA, "0OIl" * 10),  # not base58
    (Ledger.SOLANA, "1" * 20),
    (Ledger.SOLANA, "0x" + "ab" * 20),
])
def test_malformed_accounts_are_refused(ledger: Ledger, text: str) -> None:
    assert parse_account(ledger, text) is None


def test_a_stellar_account_with_one_character_changed_is_refused(cast: Cast) -> None:
    account = cast.issuers[1].issuing_account
    assert account is not None
    changed = account[:10] + ("A" if account[10] != "A" else "B") + account[11:]
    assert parse_account(Ledger.STELLAR, changed) is None


def test_evm_accounts_are_case_insensitive_and_lowercased() -> None:
    assert parse_account(Ledger.EVM, "0x" + "AB" * 20) == "0x" + "ab" * 20


def test_operator_keys_are_one_per_ledger_in_its_format_and_derived_from_the_seed() -> None:
    first, again, other = (example_world(s).world.custody for s in (5, 5, 6))
    for ledger in Ledger:
        key = first.operator_keys[ledger]
        assert parse_account(ledger, key) == key
        assert again.operator_keys[ledger] == key
        assert other.operator_keys[ledger] != key


def test_a_mode_1_issuer_is_delegated_at_its_first_save_and_meets_the_policy(cast: Cast) -> None:
    custody = cast.world.custody
    account = cast.issuers[1].issuing_account
    assert account is not None
    check = custody.check(Ledger.STELLAR, account)
    assert check.verified and check.meets_policy
    assert check.config.signers == (Signer(account, 1),
                                    Signer(custody.operator_keys[Ledger.STELLAR], 1))
    assert check.config.thresholds == Thresholds(1, 2, 2)
    records = cast.world.log.select("custody.signers", account=account)
    assert [r["cause"] for r in records] == ["mode_1_profile"]


@pytest.mark.parametrize("mode", [2, 3])
def test_a_new_account_has_its_own_key_and_zero_thresholds(cast: Cast, mode: int) -> None:
    """Modes 2 and 3 are not delegated: the default Stellar-like account fails the policy."""
    issuer = cast.issuers[mode]
    assert issuer.issuing_account is not None
    check = cast.world.custody.check(issuer.profile.ledger, issuer.issuing_account)
    assert check.verified and not check.meets_policy
    assert check.config == SignerConfig((Signer(issuer.issuing_account, 1),),
                                        Thresholds(0, 0, 0))


def test_an_unknown_account_is_not_verified(cast: Cast) -> None:
    unknown = chain_formats.account_id(Ledger.SOLANA, b"\x07" * 32)
    check = cast.world.custody.check(Ledger.SOLANA, unknown)
    assert not check.verified and not check.meets_policy
    assert check.config == SignerConfig((), Thresholds(0, 0, 0))
    # an account of another ledger does not exist on this one
    assert not cast.world.custody.check(Ledger.STELLAR, cast.issuers[2].issuing_account or "")\
        .verified


def test_delegation_happens_at_the_first_mode_1_save_not_the_first_save(cast: Cast) -> None:
    world = cast.world
    issuer = world.add_issuer("Late Mover", issuer_profile(2, ledger="stellar"))
    account = issuer.issuing_account
    assert account is not None
    assert not world.custody.check(Ledger.STELLAR, account).meets_policy
    world.save_profile(issuer.id, issuer_profile(1, ledger="stellar"))
    assert world.custody.check(Ledger.STELLAR, account).meets_policy


def test_a_later_mode_1_save_keeps_an_account_the_operator_misconfigured(cast: Cast) -> None:
    world = cast.world
    issuer = cast.issuers[1]
    account = issuer.issuing_account
    assert account is not None
    world.custody.set_signers(Ledger.STELLAR, account, [Signer(account, 1)],
                              Thresholds(0, 0, 0))
    world.save_profile(issuer.id, issuer_profile(1, approval_sla_s=60))
    assert not world.custody.check(Ledger.STELLAR, account).meets_policy


def test_set_signers_replaces_the_configuration_and_logs_it(cast: Cast) -> None:
    world = cast.world
    account = cast.issuers[1].issuing_account
    assert account is not None
    operator = world.custody.operator_keys[Ledger.STELLAR]
    world.custody.set_signers(Ledger.STELLAR, account,
                              [Signer(account, 2), Signer(operator, 1)], Thresholds(1, 2, 2))
    check = world.custody.check(Ledger.STELLAR, account)
    assert check.verified and not check.meets_policy  # the issuer alone reaches medium
    last = world.log.select("custody.signers", account=account)[-1]
    assert last["cause"] == "operator"
    assert last["signers"] == [{"key": account, "weight": 2}, {"key": operator, "weight": 1}]
    assert last["thresholds"] == {"low": 1, "medium": 2, "high": 2}


def test_set_signers_refuses_bad_configurations_and_changes_nothing(cast: Cast) -> None:
    world = cast.world
    account = cast.issuers[1].issuing_account
    assert account is not None
    before = world.custody.config(Ledger.STELLAR, account)
    records = len(world.log)
    unknown = chain_formats.account_id(Ledger.STELLAR, b"\x01" * 32)
    with pytest.raises(ValueError, match="no account"):
        world.custody.set_signers(Ledger.STELLAR, unknown, [], Thresholds(0, 0, 0))
    with pytest.raises(ValueError, match="canonical"):
        world.custody.set_signers(Ledger.STELLAR, account, [Signer("0x" + "ab" * 20, 1)],
                                  Thresholds(0, 0, 0))
    with pytest.raises(ValueError, match="once"):
        world.custody.set_signers(Ledger.STELLAR, account,
                                  [Signer(account, 1), Signer(account, 1)], Thresholds(0, 0, 0))
    with pytest.raises(ValueError, match="at most"):
        world.custody.set_signers(
            Ledger.STELLAR, account,
            [Signer(chain_formats.account_id(Ledger.STELLAR, bytes([i]) * 32), 1)
             for i in range(21)], Thresholds(0, 0, 0))
    with pytest.raises(ValueError):
        Signer(account, 256)
    with pytest.raises(ValueError):
        Thresholds(0, -1, 0)
    assert world.custody.config(Ledger.STELLAR, account) == before
    assert len(world.log) == records


def test_the_issuing_account_stays_delegated_when_funds_move(cast: Cast) -> None:
    """Signers belong to the account, not its balances: funding does not reset them."""
    world = cast.world
    world.fund(cast.member, cast.asset(1), Decimal("5.00"))
    account = cast.issuers[1].issuing_account
    assert account is not None
    assert world.custody.check(Ledger.STELLAR, account).meets_policy
