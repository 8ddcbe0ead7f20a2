"""Realistic on-chain identifiers per ledger, made from bytes the caller draws.

Public names: ``account_id``, ``tx_hash``, ``block_ms``.

- stellar: accounts are StrKey ``G…`` (56 chars: version byte, 32-byte key, CRC16-XModem,
  base32); transaction hashes are 64 lowercase hex digits; ledgers close every ~5 s.
- evm: accounts ``0x`` + 40 hex digits; hashes ``0x`` + 64; blocks every 12 s.
- solana: accounts base58 of 32 bytes; signatures base58 of 64 bytes; slots every 400 ms.
"""

from __future__ import annotations

import base64
import binascii

from clearing_sim.domain.profile import Ledger

__all__ = ["BLOCK_MS", "GENESIS_SEQUENCE", "account_id", "ledger_sequence", "tx_hash"]

BLOCK_MS = {Ledger.STELLAR: 5000, Ledger.EVM: 12_000, Ledger.SOLANA: 400}
GENESIS_SEQUENCE = {Ledger.STELLAR: 50_000_000, Ledger.EVM: 19_000_000, Ledger.SOLANA: 250_000_000}

#: read at every receipt, bound once: on Python 3.11 reading ``Enum.MEMBER`` goes through
#: ``EnumType.__getattr__``'s slow path (~750 instructions)
_STELLAR, _EVM = Ledger.STELLAR, Ledger.EVM

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _crc16_xmodem(data: bytes) -> int:
    """CRC-16/XMODEM (polynomial 0x1021, initial 0, not reflected): ``binascii.crc_hqx`` from
    0, in C (the bit-by-bit loop in Python cost ~50 us per Stellar account; a scenario's
    world opens a dozen)."""
    return binascii.crc_hqx(data, 0)


#: Every two-digit string in base 58, indexed by its value.
_B58_PAIRS = tuple(high + low for high in _B58 for low in _B58)
#: ``_base58`` cuts four digits per division of the big number: 58**4 is below 2**30, one
#: limb of CPython's ints, so each division stays on the fast single-limb path (58**5 does
#: too, but its five digits cost more to split than the division saves; 58**10 is two limbs).
_B58_QUAD = 58 ** 4


def _base58(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    pairs = _B58_PAIRS
    out: list[str] = []  # two-digit strings, lowest first
    while n:
        n, rem = divmod(n, _B58_QUAD)
        out.append(pairs[rem % 3364])
        out.append(pairs[rem // 3364])
    out.reverse()
    digits = "".join(out).lstrip("1")  # the top pairs may start with zero digits
    pad = len(data) - len(data.lstrip(b"\0"))  # each leading zero byte is one "1"
    return "1" * pad + digits


def account_id(ledger: Ledger, key: bytes) -> str:
    assert len(key) == 32
    if ledger is Ledger.STELLAR:
        payload = bytes([6 << 3]) + key
        checksum = _crc16_xmodem(payload).to_bytes(2, "little")
        return base64.b32encode(payload + checksum).decode()
    if ledger is Ledger.EVM:
        return "0x" + key[:20].hex()
    return _base58(key)


def tx_hash(ledger: Ledger, digest: bytes) -> str:
    assert len(digest) == 64
    if ledger is _STELLAR:
        return digest[:32].hex()
    if ledger is _EVM:
        return "0x" + digest[:32].hex()
    return _base58(digest)


def ledger_sequence(ledger: Ledger, at_ms: int) -> int:
    """The ledger, block or slot number closing at virtual ``at_ms``."""
    return GENESIS_SEQUENCE[ledger] + at_ms // BLOCK_MS[ledger]
