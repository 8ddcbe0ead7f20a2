"""Credentials: sandbox machine API keys and tenant-admin portal sessions (signed JWTs).

Public names: ``Principal``, ``Credentials``, ``SESSION_TTL_S``.

API keys are ``sk_sandbox_`` + 64 hex digits, issued with a key id (uuid). Only their
sha256 is stored; a presented key is hashed and compared in constant time. Portal sessions
are HS256 JWTs signed with the world's portal key, carrying the participant (``sub``), the
issue and expiry times in virtual unix seconds, and a ``jti``; they expire after
``SESSION_TTL_S`` of virtual time (docs/semantics.md). Capabilities come from the table in
``clearing_sim.domain.parties``. Key material is derived from the world's seed sealed with
its key secret (``IdFactory.key``): a served world's needs the operator's token too.

A session token is checked outside in: its shape (three bounded base64url parts), then its
signature over the first two parts, and only a token that verifies has its claims parsed, so
no forged token reaches the JSON parser; every malformed credential is 401
``invalid_credential``. ``cursors`` signs list cursors under a key derived from the same
signing key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import TYPE_CHECKING, Any

from attrs import frozen

from clearing_sim.domain import b64url
from clearing_sim.domain.errors import Unauthenticated
from clearing_sim.domain.parties import (
    Capability,
    CredentialKind,
    ParticipantKind,
    capabilities_for,
)
from clearing_sim.service.cursors import CursorCodec

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["SESSION_TTL_S", "Credentials", "Principal", "bearer_token"]

SESSION_TTL_S = 8 * 3600
_API_KEY_PREFIX = "sk_sandbox_"
_TOKEN_LENGTH_MAX = 4096


@frozen
class Principal:
    """Who is calling: a participant, through which kind of credential, holding what."""

    participant_id: str
    participant_kind: ParticipantKind
    credential: CredentialKind
    capabilities: tuple[Capability, ...]
    credential_id: str  # the API key id or the session's jti

    def holds(self, capability: Capability) -> bool:
        return capability in self.capabilities


def bearer_token(authorization: str | None) -> str | None:
    """The credential of an ``Authorization`` header as ``authenticate`` reads it (the
    scheme ``Bearer`` in any case, spaces around the token), or None when it holds none."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _invalid(message: str) -> Unauthenticated:
    return Unauthenticated.one(None, "invalid_credential", message)


class Credentials:
    """The world's issued API keys and its portal signing key."""

    def __init__(self, world: World) -> None:
        self.world = world
        # sha256 hex of the secret → (that digest, key id, participant id); never the secret
        self._keys: dict[str, tuple[str, str, str]] = {}
        self._signing_key = world.ids.key("portal-signing-key", 32)
        self.cursors = CursorCodec(self._signing_key)

    # issuing ------------------------------------------------------------------------------
    def issue_api_key(self, participant_id: str) -> tuple[str, str]:
        """A new sandbox machine key: ``(apiKeyId, apiKeySecret)``; the secret is not kept."""
        key_id = self.world.ids.uuid("api-key")
        secret = _API_KEY_PREFIX + self.world.ids.key_hex("api-key-secret", 32)
        digest = hashlib.sha256(secret.encode()).hexdigest()
        self._keys[digest] = (digest, key_id, participant_id)
        self.world.log.append("auth.api_key", participantId=participant_id, apiKeyId=key_id)
        return key_id, secret

    def issue_session(self, participant_id: str, ttl_s: int = SESSION_TTL_S) -> str:
        """A tenant-admin portal JWT for the participant, valid ``ttl_s`` virtual seconds."""
        now_s = (self.world.epoch_ms + self.world.now_ms) // 1000
        jti = self.world.ids.uuid("session")
        claims = {"iss": "clearing-sim", "sub": participant_id, "role": "tenant_admin",
                  "iat": now_s, "exp": now_s + ttl_s, "jti": jti}
        header = b64url.encode(json.dumps({"alg": "HS256", "typ": "JWT"},
                                          separators=(",", ":")).encode())
        payload = b64url.encode(json.dumps(claims, separators=(",", ":")).encode())
        signature = b64url.encode(self._sign(f"{header}.{payload}"))
        self.world.log.append("auth.session", participantId=participant_id, jti=jti,
                              expiresAtS=now_s + ttl_s)
        return f"{header}.{payload}.{signature}"

    def _sign(self, signing_input: str) -> bytes:
        return hmac.new(self._signing_key, signing_input.encode(), hashlib.sha256).digest()

    # verifying ----------------------------------------------------------------------------
    def authenticate(self, authorization: str | None) -> Principal:
        """The principal behind an ``Authorization`` header, or ``Unauthenticated``."""
        if authorization is None or not authorization.strip():
            raise Unauthenticated.one(None, "authentication_required",
                                      "this route needs Authorization: Bearer <credential>")
        token = bearer_token(authorization)
        if token is None:
            raise _invalid("the Authorization header must be 'Bearer <credential>'")
        if len(token) > _TOKEN_LENGTH_MAX or not token.isascii():
            raise _invalid("the bearer credential is neither an API key nor a portal session")
        if token.startswith(_API_KEY_PREFIX):
            return self._api_key(token)
        return self._session(token)

    def _api_key(self, token: str) -> Principal:
        digest = hashlib.sha256(token.encode()).hexdigest()
        found = self._keys.get(digest)
        if found is None or not hmac.compare_digest(found[0], digest):
            raise _invalid("unknown API key")
        _, key_id, participant_id = found
        return self._principal(participant_id, CredentialKind.API_KEY, key_id)

    def _session(self, token: str) -> Principal:
        parts = token.split(".")
        if len(parts) != 3:
            raise _invalid("the bearer credential is neither an API key nor a portal session")
        header, payload, signature = parts
        try:
            presented = b64url.decode(signature)
        except ValueError:
            raise _invalid("the portal session token is malformed") from None
        if not hmac.compare_digest(presented, self._sign(f"{header}.{payload}")):
            raise _invalid("the portal session's signature does not verify")
        try:  # only a token this world signed gets here
            claims: Any = json.loads(b64url.decode(payload))
        except (ValueError, RecursionError):
            raise _invalid("the portal session token is malformed") from None
        if not isinstance(claims, dict) or claims.get("role") != "tenant_admin":
            raise _invalid("the portal session carries no tenant-admin role")
        now_s = (self.world.epoch_ms + self.world.now_ms) // 1000
        expires = claims.get("exp")
        if not isinstance(expires, int) or now_s >= expires:
            raise Unauthenticated.one(None, "credential_expired", "the portal session has expired")
        return self._principal(str(claims.get("sub")), CredentialKind.TENANT_ADMIN,
                               str(claims.get("jti")))

    def _principal(self, participant_id: str, credential: CredentialKind,
                   credential_id: str) -> Principal:
        participant = self.world.participants.get(participant_id)
        if participant is None:
            raise _invalid("the credential's participant no longer exists")
        return Principal(participant.id, participant.kind, credential,
                         capabilities_for(participant.kind, credential), credential_id)
