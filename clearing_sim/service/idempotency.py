"""Idempotency keys: the same key and request replays the original answer; changes nothing.

Public names: ``IdempotencyStore``, ``fingerprint``, ``IDEMPOTENCY_KEY_LENGTH_MAX``,
``RETENTION_MS``.

A key is scoped to the caller's participant (or to anonymous callers of public routes). The
request's fingerprint is its method, path and body (JSON compared by value, so whitespace
and key order do not matter). Only answers that changed or created something (2xx) are kept:
a refusal changes nothing, so retrying it with the same key runs it again
(docs/semantics.md). Entries are kept ``RETENTION_MS`` of virtual time (24 hours).
"""

from __future__ import annotations

import hashlib
import json

from attrs import frozen

from clearing_sim.domain.errors import InvalidRequest, NotAllowed
from clearing_sim.service.messages import Request, Response

__all__ = ["IDEMPOTENCY_KEY_LENGTH_MAX", "RETENTION_MS", "IdempotencyStore", "fingerprint"]

IDEMPOTENCY_KEY_LENGTH_MAX = 256
RETENTION_MS = 24 * 3600 * 1000


def fingerprint(request: Request) -> str:
    try:
        body = json.dumps(json.loads(request.body), sort_keys=True, separators=(",", ":"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        body = request.body.hex()
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()


def check_key(key: str | None) -> None:
    if key is not None and len(key) > IDEMPOTENCY_KEY_LENGTH_MAX:
        raise InvalidRequest.one("Idempotency-Key", "idempotency_key_too_long",
                                 f"Idempotency-Key is {len(key)} characters; at most "
                                 f"{IDEMPOTENCY_KEY_LENGTH_MAX}")


@frozen
class _Entry:
    fingerprint: str
    response: Response
    stored_at_ms: int


class IdempotencyStore:
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}

    def replay(self, scope: str, key: str, request: Request, now_ms: int) -> Response | None:
        """The stored answer for this key, ``None`` if new; 409 if used for another request."""
        entry = self._entries.get((scope, key))
        if entry is None or now_ms - entry.stored_at_ms >= RETENTION_MS:
            return None
        if entry.fingerprint != fingerprint(request):
            raise NotAllowed.one("Idempotency-Key", "idempotency_key_reused",
                                 "this Idempotency-Key was used with a different request")
        return entry.response

    def store(self, scope: str, key: str, request: Request, response: Response,
              now_ms: int) -> None:
        self._entries[(scope, key)] = _Entry(fingerprint(request), response, now_ms)
