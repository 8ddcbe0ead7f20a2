"""What the operator token keys: the world's key material, the journal's check value and its
sealed credentials.

Public names: ``Sealer``, ``new_salt``, ``token_check``, ``token_key``.

The operator token is the served world's one secret (the seed is printed), so everything
derived from it starts from ``token_key``: scrypt (RFC 7914; N = 2^15, r = 8, p = 1, about
0.1 s and 32 MiB a derivation, once per token per process). Anything an API caller holds
(an API key, a portal session, a webhook's signing secret) or a journal file holds (the
check value) lets its holder test guesses of the token offline; scrypt makes each guess
cost what a password hash costs instead of two SHA-256 blocks.

A journal must never hold a secret in clear, yet replaying it needs the credentials its
requests carried. From ``token_key`` and the journal's random salt, HKDF-SHA256 derives
two values: a *check* value, stored in the header so that a restart with another token is
refused, and a sealing key (AES-256-GCM) under which every ``Authorization`` value of an API
request is stored. The operator token itself is never written (an operator request's
``Authorization`` is dropped: replay authenticates it with the token it was started with).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["Sealer", "new_salt", "token_check"]

_NONCE_BYTES = 12


def new_salt() -> str:
    return os.urandom(16).hex()


#: scrypt's cost (RFC 7914 §2): 2^15 rounds of 128 * r bytes, 32 MiB, about 0.1 s here
_SCRYPT = {"n": 1 << 15, "r": 8, "p": 1, "maxmem": 64 << 20}


@functools.lru_cache(maxsize=16)
def token_key(token: str) -> bytes:
    """32 bytes keyed by the operator token, slowly (scrypt): what every other value the
    token keys is derived from."""
    return hashlib.scrypt(token.encode(), salt=b"clearing-sim operator token", dklen=32,
                          **_SCRYPT)


def _derive(token: str, salt: str, purpose: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=bytes.fromhex(salt),
                info=b"clearing-sim journal " + purpose).derive(token_key(token))


def token_check(token: str, salt: str) -> str:
    """The header's check value: tells the right token from a wrong one, reveals nothing."""
    return _derive(token, salt, b"token check").hex()


class Sealer:
    """Seals and opens credential values with the key derived from the token and salt."""

    def __init__(self, token: str, salt: str) -> None:
        self._aead = AESGCM(_derive(token, salt, b"seal"))

    def seal(self, text: str) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        return base64.b64encode(nonce + self._aead.encrypt(nonce, text.encode(), None)).decode()

    def open(self, sealed: str) -> str:
        """The value sealed; ``ValueError`` when it was not sealed with this key."""
        try:
            raw = base64.b64decode(sealed, validate=True)
            return self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], None).decode()
        except (InvalidTag, ValueError) as error:
            raise ValueError(f"a sealed credential does not open with this key: {error}") \
                from None
