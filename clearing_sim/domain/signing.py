"""The webhook signature scheme, both directions (spec, Events: Signature).

Public names: ``sign``, ``signature_header``, ``verify``, ``REPLAY_WINDOW_S``.

``Service-Signature: t=<unix seconds>,v1=<hex>`` where ``v1`` is lowercase hex HMAC-SHA256
with the signing secret over ``<t>.<raw body>``. Verification compares in constant time and
rejects a ``t`` more than 300 s from the verifier's clock, which is passed in.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re

__all__ = ["REPLAY_WINDOW_S", "sign", "signature_header", "verify"]

REPLAY_WINDOW_S = 300
_T = re.compile(r"[0-9]{1,15}")
_V1 = re.compile(r"[0-9a-f]{64}")


@functools.lru_cache(maxsize=64)
def _keyed(secret: str) -> hmac.HMAC:
    """An HMAC-SHA256 keyed with ``secret`` and fed nothing: each signature copies it (a
    one-shot ``hmac.digest`` looks the digest up and keys a new context every call)."""
    return hmac.new(secret.encode(), digestmod=hashlib.sha256)


@functools.lru_cache(maxsize=1, typed=True)
def sign(secret: str, t: int, body: bytes) -> str:
    """The ``v1`` hex digest. The last one is kept: a simulated issuer's webhook is signed
    and then verified with the same secret, time and body, one HMAC for both."""
    mac = _keyed(secret).copy()
    mac.update(b"%d." % t)
    mac.update(body)
    return mac.hexdigest()


def signature_header(secret: str, t: int, body: bytes) -> str:
    return f"t={t},v1={sign(secret, t, body)}"


def verify(secret: str, header: str | None, body: bytes, now_s: int) -> bool:
    """True when ``header`` signs ``body`` with ``secret`` and ``t`` is within the window."""
    if not header:
        return False
    parts: dict[str, str] = {}
    for item in header.split(","):
        key, sep, value = item.strip().partition("=")
        if sep and key not in parts:
            parts[key] = value
    t_text, v1 = parts.get("t", ""), parts.get("v1", "")
    if not _T.fullmatch(t_text) or not _V1.fullmatch(v1):
        return False
    t = int(t_text)
    if abs(now_s - t) > REPLAY_WINDOW_S:
        return False
    return hmac.compare_digest(sign(secret, t, body), v1)
