"""Idempotency keys: the same key and request replays the original answer; changes nothing.

Public names: ``IdempotencyStore``, ``fingerprint``, ``check_key``, ``redact_secrets``,
``ANONYMOUS``, ``IDEMPOTENCY_KEY_LENGTH_MAX``, ``SECRET_FIELDS``, ``RETENTION_MS``.

A key is 1 to 256 characters (characters, not bytes). It is scoped to the caller's
participant (or to anonymous callers of public routes). An anonymous caller cannot be told
from another one who knows the same key and body, so a replay in the anonymous scope never
carries a secret: every ``SECRET_FIELDS`` member of the stored answer is null in the replay
(the secret is shown once, to the caller whose request created it). The
request's fingerprint is its method, path and body (JSON compared by value, so whitespace
and key order do not matter). Only answers that changed or created something (2xx) are kept:
a refusal changes nothing, so retrying it with the same key runs it again
(docs/semantics.md). Entries are kept ``RETENTION_MS`` of virtual time (24 hours); one
past its use is dropped at the next ``store`` (the oldest first: virtual time never moves
back), so a long-served world keeps a day of entries, not its whole history.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from attrs import frozen

from clearing_sim.domain.errors import InvalidRequest, NotAllowed
from clearing_sim.service.messages import Request, Response, encode_json

__all__ = ["ANONYMOUS", "IDEMPOTENCY_KEY_LENGTH_MAX", "RETENTION_MS", "SECRET_FIELDS",
           "IdempotencyStore", "check_key", "fingerprint", "redact_secrets"]

IDEMPOTENCY_KEY_LENGTH_MAX = 256
RETENTION_MS = 24 * 3600 * 1000
ANONYMOUS = "anonymous"
#: Members that carry a secret shown once: never in an anonymous replay.
SECRET_FIELDS = frozenset({"apiKeySecret", "signingSecret", "mandateProof", "token"})


def fingerprint(request: Request) -> str:
    try:
        body = json.dumps(json.loads(request.body), sort_keys=True, separators=(",", ":"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        body = request.body.hex()
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()


def check_key(key: str | None) -> None:
    if key == "":
        raise InvalidRequest.one("Idempotency-Key", "idempotency_key_empty",
                                 "Idempotency-Key is empty; leave it out or give 1 to "
                                 f"{IDEMPOTENCY_KEY_LENGTH_MAX} characters")
    if key is not None and len(key) > IDEMPOTENCY_KEY_LENGTH_MAX:
        raise InvalidRequest.one("Idempotency-Key", "idempotency_key_too_long",
                                 f"Idempotency-Key is {len(key)} characters; at most "
                                 f"{IDEMPOTENCY_KEY_LENGTH_MAX}")


def _redacted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (None if k in SECRET_FIELDS else _redacted(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def redact_secrets(response: Response) -> Response:
    """The answer with every ``SECRET_FIELDS`` member null (same status and headers)."""
    if not response.body:
        return response
    return Response(response.status, response.headers, encode_json(_redacted(response.json())))


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

    def __len__(self) -> int:
        return len(self._entries)

    def store(self, scope: str, key: str, request: Request, response: Response,
              now_ms: int) -> None:
        kept = redact_secrets(response) if scope == ANONYMOUS \
            else Response(response.status, response.headers, response.body)  # bytes only
        entries = self._entries
        entries.pop((scope, key), None)  # an expired entry's key, used again: to the end
        entries[(scope, key)] = _Entry(fingerprint(request), kept, now_ms)
        while True:  # in store order, so in time order: drop what has expired
            oldest = next(iter(entries))
            if now_ms - entries[oldest].stored_at_ms < RETENTION_MS:
                return
            del entries[oldest]
