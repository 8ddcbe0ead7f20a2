"""The on-chain ledgers: identifier formats per chain and the five saga operations.

``clearing_sim.sim.ledger`` / ``chain_formats``: stellar accounts are StrKey ``G…`` (56
characters with a CRC16-XModem checksum) and hashes 64 hex digits; evm accounts ``0x`` + 40
hex, hashes ``0x`` + 64; solana accounts base58 of 32 bytes, signatures base58 of 64 bytes.
Each operation waits its finality, then applies atomically with one ``ledger.<op>`` record;
supply = Σ balances + Σ locked for every asset; an interrupted operation changes nothing.
"""

from __future__ import annotations

import base64
import re
from decimal import Decimal
from typing import Any

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.money import Asset, Money
from clearing_sim.domain.profile import Ledger
from clearing_sim.sim import chain_formats
from clearing_sim.sim.chain_formats import BLOCK_MS, GENESIS_SEQUENCE
from clearing_sim.sim.examples import example_world, redeem, swap
from clearing_sim.sim.ledger import ChainLedger, LedgerRefused
from clearing_sim.sim.world import World
from tests.sim.simkit import call

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58decode(text: str) -> bytes:
    n = 0
    for char in text:
        n = n * 58 + _B58.index(char)
    pad = len(text) - len(text.lstrip("1"))
    return b"\0" * pad + (n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b"")


def crc16_xmodem(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def is_account(ledger: Ledger, account: str) -> bool:
    if ledger is Ledger.STELLAR:
        if not re.fullmatch(r"G[A-Z2-7]{55}", account):
            return False
        raw = base64.b32decode(account)
        return len(raw) == 35 and raw[0] == 6 << 3 \
            and crc16_xmodem(raw[:33]).to_bytes(2, "little") == raw[33:]
    if ledger is Ledger.EVM:
        return re.fullmatch(r"0x[0-9a-f]{40}", account) is not None
    return set(account) <= set(_B58) and len(b58decode(account)) == 32


def is_tx_hash(ledger: Ledger, tx_hash: str) -> bool:
    if ledger is Ledger.STELLAR:
        return re.fullmatch(r"[0-9a-f]{64}", tx_hash) is not None
    if ledger is Ledger.EVM:
        return re.fullmatch(r"0x[0-9a-f]{64}", tx_hash) is not None
    return set(tx_hash) <= set(_B58) and len(b58decode(tx_hash)) == 64


# formats ----------------------------------------------------------------------------------
@pytest.mark.parametrize("ledger", list(Ledger))
def test_account_ids_have_the_chain_format(ledger: Ledger) -> None:
    world = World()
    accounts = [world.ledgers[ledger].open_account(f"a{i}") for i in range(50)]
    assert all(is_account(ledger, a) for a in accounts), accounts
    assert len(set(accounts)) == 50
    if ledger is Ledger.STELLAR:
        assert all(len(a) == 56 and a.startswith("G") for a in accounts)


def test_every_ledger_record_of_a_run_has_chain_formats_and_sequences() -> None:
    """Accounts, hashes and ledger sequences (genesis + at_ms // block time) per chain."""
    cast = example_world(0)
    world = cast.world
    for src, dst in ((1, 2), (2, 3), (3, 1)):
        world.initiate(cast.member.id, swap(cast.asset(src), cast.asset(dst)))
    for mode in (1, 2, 3):
        world.initiate(cast.member.id, redeem(cast.asset(mode)))
    world.run_all()
    records = world.log.select("ledger.")
    ops = {r.kind for r in records}
    assert {"ledger.lock", "ledger.burn", "ledger.mint", "ledger.transfer"} <= ops
    for r in records:
        ledger = Ledger(str(r["ledger"]))
        for field in ("account", "toAccount"):
            if field in r.fields:
                assert is_account(ledger, str(r[field])), r
        if "txHash" in r.fields:
            assert is_tx_hash(ledger, str(r["txHash"])), r
            assert r["ledgerSequence"] == GENESIS_SEQUENCE[ledger] + r.at_ms // BLOCK_MS[ledger]
    hashes = [r["txHash"] for r in records if "txHash" in r.fields]
    assert len(set(hashes)) == len(hashes)


# operations -------------------------------------------------------------------------------
class Chain:
    """A bare world's evm ledger with one asset and two funded accounts."""

    def __init__(self) -> None:
        self.world = World()
        self.ledger: ChainLedger = self.world.ledgers[Ledger.EVM]
        self.asset = Asset("TST", self.ledger.open_account("issuer"))
        self.a = self.ledger.open_account("a")
        self.b = self.ledger.open_account("b")
        self.ledger.mint_now(self.a, self.money("100.00"))

    def money(self, amount: str) -> Money:
        return Money.of(amount, self.asset)

    def held(self, account: str) -> Decimal:
        return self.ledger.balance(account, self.asset).amount

    def state(self) -> tuple[Any, ...]:
        return (self.held(self.a), self.held(self.b), self.ledger.locked(self.asset),
                self.ledger.supply[self.asset])

    def run(self, op: Any) -> Any:
        result = call(self.world, op)
        assert self.ledger.conserved()
        return result


@pytest.fixture
def chain() -> Chain:
    return Chain()


def test_lock_moves_the_amount_into_escrow_after_finality(chain: Chain) -> None:
    start = chain.world.now_ms
    receipt = chain.run(chain.ledger.lock("tx-1", chain.a, chain.money("40.00")))
    assert chain.state() == (Decimal("60.00"), 0, Decimal("40.00"), Decimal("100.00"))
    assert receipt.finalized_at_ms == chain.world.now_ms > start
    assert receipt.ledger_sequence == GENESIS_SEQUENCE[Ledger.EVM] + chain.world.now_ms // 12_000
    [record] = chain.world.log.select("ledger.lock")
    assert (record["txHash"], record["amount"], record["account"], record["transactionId"]) \
        == (receipt.tx_hash, "40.00", chain.a, "tx-1")


def test_return_to_sender_releases_the_lock(chain: Chain) -> None:
    chain.run(chain.ledger.lock("tx-1", chain.a, chain.money("40.00")))
    chain.run(chain.ledger.return_to_sender("tx-1"))
    assert chain.state() == (Decimal("100.00"), 0, 0, Decimal("100.00"))
    assert "tx-1" not in chain.ledger.locks


def test_return_now_is_instant(chain: Chain) -> None:
    """The cancel form: the lock comes back at the current instant."""
    chain.run(chain.ledger.lock("tx-1", chain.a, chain.money("40.00")))
    now = chain.world.now_ms
    receipt = chain.ledger.return_now("tx-1")
    assert (receipt.finalized_at_ms, chain.world.now_ms) == (now, now)
    assert chain.state() == (Decimal("100.00"), 0, 0, Decimal("100.00"))


def test_transfer_locked_moves_the_escrow_to_another_account(chain: Chain) -> None:
    chain.run(chain.ledger.lock("tx-1", chain.a, chain.money("40.00")))
    chain.run(chain.ledger.transfer_locked("tx-1", chain.b))
    assert chain.state() == (Decimal("60.00"), Decimal("40.00"), 0, Decimal("100.00"))
    [record] = chain.world.log.select("ledger.transfer")
    assert (record["account"], record["toAccount"]) == (chain.a, chain.b)


def test_burn_locked_destroys_the_escrow(chain: Chain) -> None:
    chain.run(chain.ledger.lock("tx-1", chain.a, chain.money("40.00")))
    chain.run(chain.ledger.burn_locked("tx-1"))
    assert chain.state() == (Decimal("60.00"), 0, 0, Decimal("60.00"))


def test_burn_and_mint_change_supply(chain: Chain) -> None:
    chain.run(chain.ledger.burn("tx-1", chain.a, chain.money("30.00")))
    chain.run(chain.ledger.mint("tx-2", chain.b, chain.money("25.00")))
    assert chain.state() == (Decimal("70.00"), Decimal("25.00"), 0, Decimal("95.00"))
    assert [r.kind for r in chain.world.log.select("ledger.")][-2:] == ["ledger.burn",
                                                                        "ledger.mint"]


def test_transfer_between_accounts(chain: Chain) -> None:
    chain.run(chain.ledger.transfer("tx-1", chain.a, chain.b, chain.money("10.00")))
    assert chain.state() == (Decimal("90.00"), Decimal("10.00"), 0, Decimal("100.00"))


@pytest.mark.parametrize("op", ["lock", "burn", "transfer"])
def test_chain_refuses_more_than_the_balance_and_changes_nothing(chain: Chain, op: str) -> None:
    before = chain.state()
    too_much = chain.money("100.01")
    operation = {"lock": lambda: chain.ledger.lock("tx-1", chain.a, too_much),
                 "burn": lambda: chain.ledger.burn("tx-1", chain.a, too_much),
                 "transfer": lambda: chain.ledger.transfer("tx-1", chain.a, chain.b, too_much)}
    with pytest.raises(LedgerRefused):
        call(chain.world, operation[op]())
    assert chain.state() == before and not chain.ledger.locks
    [refused] = chain.world.log.select("ledger.refused")
    assert (refused["op"], refused["amount"], refused["account"]) == (op, "100.01", chain.a)
    assert not chain.world.log.select(f"ledger.{op}")


def test_interrupted_operation_changes_nothing(chain: Chain) -> None:
    """A cancel interrupts the saga while the chain has not finalised: nothing applies."""
    def attempt() -> Any:
        try:
            yield from chain.ledger.lock("tx-1", chain.a, chain.money("40.00"))
        except simpy.Interrupt:
            return "interrupted"
        return "locked"

    before = chain.state()
    process = chain.world.env.process(attempt())
    chain.world.advance(1)
    process.interrupt("cancelled")
    assert chain.world.env.run(until=process) == "interrupted"
    chain.world.run_all()
    assert chain.state() == before and not chain.ledger.locks
    assert not chain.world.log.select("ledger.lock")


def test_conserved_detects_tokens_from_nowhere(chain: Chain) -> None:
    assert chain.ledger.conserved()
    chain.ledger.balances[chain.b][chain.asset] = Decimal("1.00")
    assert not chain.ledger.conserved()


def _base58_digit_by_digit(data: bytes) -> str:
    n, digits = int.from_bytes(data, "big"), ""
    while n:
        n, rem = divmod(n, 58)
        digits = _B58[rem] + digits
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + digits


@settings(max_examples=300)
@given(st.integers(0, 4).flatmap(
    lambda zeros: st.binary(max_size=64 - zeros).map(lambda rest: b"\0" * zeros + rest)))
def test_base58_is_the_digit_by_digit_encoding_and_decodes_back(data: bytes) -> None:
    """Solana accounts and signatures are base58 (one "1" per leading zero byte); the
    encoder's four digits per division give the same text as one digit at a time."""
    assert chain_formats._base58(data) == _base58_digit_by_digit(data)
    assert b58decode(chain_formats._base58(data)) == data


@settings(max_examples=300)
@given(st.binary(max_size=40))
def test_the_stellar_checksum_is_crc16_xmodem_bit_by_bit(data: bytes) -> None:
    """StrKey's checksum is CRC-16/XMODEM: the C routine gives what the polynomial's bit by
    bit loop gives (the check value of ``123456789`` is 0x31C3)."""
    assert chain_formats._crc16_xmodem(data) == crc16_xmodem(data)
    assert chain_formats._crc16_xmodem(b"123456789") == 0x31C3
