"""One spelling of base64url (RFC 4648 §5) for every credential the service decodes.

Public names: ``encode``, ``decode``.

A credential (a portal session's signature, a list cursor) is written in the URL-safe
alphabet without padding, and read back only in that same spelling. Python's decoders are
lenient: ``urlsafe_b64decode`` drops characters outside the alphabet, accepts ``=`` padding
and ignores the unused low bits of the last character, so many strings decode to the same
bytes. ``decode`` accepts a string only if ``encode`` of its bytes gives that string back,
so a credential has exactly one accepted form.
"""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["decode", "encode"]

_ALPHABET = re.compile(r"[A-Za-z0-9_-]*")


def encode(data: bytes) -> str:
    """``data`` in base64url without padding."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def decode(text: str) -> bytes:
    """The bytes ``text`` spells, or ``ValueError`` unless ``text`` is their one spelling."""
    if not text.isascii() or _ALPHABET.fullmatch(text) is None or len(text) % 4 == 1:
        raise ValueError("not canonical base64url")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error:
        raise ValueError("not canonical base64url") from None
    if encode(data) != text:  # unused low bits set: another spelling of the same bytes
        raise ValueError("not canonical base64url")
    return data
