"""List cursors: opaque, bound to the caller and the query, and unforgeable.

Public names: ``CursorCodec``, ``Position``, ``CURSOR_LENGTH_MAX``.

A cursor names where the last page stopped: the last item's id (a UUID, 16 bytes) and its
virtual creation time (8 bytes, for when that item has since been forgotten). Its bytes are
those 24 and a 16-byte HMAC-SHA256 tag over them, the caller's participant id, the list's
path and its query without ``cursor`` (``limit`` included), under a per-world key derived
from the portal signing key (so, in a served world, from the operator's secret:
docs/semantics.md). The text is url-safe base64 without padding, 54 characters. Anything
else, a cursor of another participant or another query included, is 400 ``invalid_cursor``,
judged before any work; a cursor reveals nothing about other participants' items.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

from attrs import frozen

from clearing_sim.domain import b64url
from clearing_sim.domain.errors import InvalidRequest

__all__ = ["CURSOR_LENGTH_MAX", "CursorCodec", "Position"]

CURSOR_LENGTH_MAX = 64
_TAG_BYTES = 16
_BODY_BYTES = 24


@frozen
class Position:
    """Where a page stopped: the last item's id and its creation time (virtual ms)."""

    item_id: str
    at_ms: int


def _invalid() -> InvalidRequest:
    return InvalidRequest.one("cursor", "invalid_cursor",
                              "cursor must be a meta.nextCursor value this list gave you, "
                              "with the same query")


class CursorCodec:
    """Cursors under one key (``key``: at least 16 secret bytes)."""

    def __init__(self, key: bytes) -> None:
        self._key = hashlib.sha256(b"clearing-sim list cursor\x00" + key).digest()

    def _tag(self, body: bytes, participant_id: str, scope: str) -> bytes:
        bound = b"\x00".join((body, participant_id.encode(), scope.encode()))
        return hmac.new(self._key, bound, hashlib.sha256).digest()[:_TAG_BYTES]

    def encode(self, position: Position, participant_id: str, scope: str) -> str:
        """``scope``: the list's path and query without the cursor (``query_scope``)."""
        body = uuid.UUID(position.item_id).bytes + position.at_ms.to_bytes(8, "big")
        raw = body + self._tag(body, participant_id, scope)
        return b64url.encode(raw)

    def decode(self, text: str, participant_id: str, scope: str) -> Position:
        """The position, or 400 ``invalid_cursor`` for anything this codec did not issue
        for this participant and scope."""
        if not 0 < len(text) <= CURSOR_LENGTH_MAX or not text.isascii():
            raise _invalid()
        try:
            raw = b64url.decode(text)  # one spelling (domain.b64url)
        except ValueError:
            raise _invalid() from None
        if len(raw) != _BODY_BYTES + _TAG_BYTES:
            raise _invalid()
        body, tag = raw[:_BODY_BYTES], raw[_BODY_BYTES:]
        if not hmac.compare_digest(tag, self._tag(body, participant_id, scope)):
            raise _invalid()
        return Position(str(uuid.UUID(bytes=body[:16])), int.from_bytes(body[16:], "big"))

    @staticmethod
    def query_scope(path: str, query: tuple[tuple[str, str], ...], limit: int) -> str:
        """What a cursor is bound to: the path, the effective ``limit`` and every other
        parameter but ``cursor``, in order."""
        rest = "&".join(f"{k}={v}" for k, v in query if k not in ("cursor", "limit"))
        return f"{path}?limit={limit}&{rest}"
