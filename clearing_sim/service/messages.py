"""Requests and responses as plain values: what every door turns HTTP into, and back.

Public names: ``Request``, ``Response``, ``encode_json``.

The API layer speaks bytes: a ``Request`` carries the raw body and a ``Response`` the exact
bytes to send, so the scenario runner, the HTTP shim and the analysts' workloads get the same
answer byte for byte. Header names are matched case-insensitively, as in HTTP.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from attrs import field, frozen

from clearing_sim.domain.jsontext import compact_encoder

__all__ = ["Request", "Response", "encode_json"]

Headers = tuple[tuple[str, str], ...]
#: ``json.dumps(payload, ensure_ascii=False, separators=(",", ":"))``, made once
_api_json = compact_encoder(sort_keys=False, ensure_ascii=False)


def encode_json(payload: Any) -> bytes:
    """The one JSON encoding of the API: compact, UTF-8, field order as built."""
    return _api_json(payload).encode()


def _find(headers: Headers, name: str) -> str | None:
    wanted = name.lower()
    for key, value in headers:
        if key.lower() == wanted:
            return value
    return None


def _split_target(target: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The path and the query pairs of ``target``, as ``urlsplit`` and ``parse_qsl`` give
    them; a plain path (no query, fragment or authority, nothing ``urlsplit`` strips) is its
    own path, without their cost (every request of a workload's driver)."""
    if target.startswith("/") and not target.startswith("//") and "?" not in target \
            and "#" not in target and target.isprintable():
        return target, ()
    parts = urlsplit(target)
    # a percent-escape that is not UTF-8 stays a lone surrogate, refused by the door's text
    # check, rather than becoming U+FFFD and being read as if it had been sent
    return parts.path, tuple(parse_qsl(parts.query, keep_blank_values=True,
                                       errors="surrogateescape"))


@frozen
class Request:
    method: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    headers: Headers = ()
    body: bytes = b""

    @classmethod
    def build(cls, method: str, target: str, *, token: str | None = None,
              json_body: Any = None, body: bytes | None = None,
              headers: dict[str, str] | None = None) -> Request:
        """A request from a target (path with optional ``?query``), a bearer token and a body.

        ``json_body`` is encoded with ``encode_json``; ``body`` is sent as given."""
        path, query = _split_target(target)
        merged: list[tuple[str, str]] = []
        if token is not None:
            merged.append(("Authorization", f"Bearer {token}"))
        if json_body is not None or body is not None:
            merged.append(("Content-Type", "application/json"))
        merged.extend((headers or {}).items())
        raw = body if body is not None else (b"" if json_body is None else encode_json(json_body))
        return cls(method.upper(), path, query, tuple(merged), raw)

    def header(self, name: str) -> str | None:
        return _find(self.headers, name)

    def query_param(self, name: str) -> str | None:
        return next((value for key, value in self.query if key == name), None)


@frozen(eq=False)
class Response:
    """An answer: status, headers and the exact bytes of its body. ``payload`` is the JSON
    value the door encoded ``body`` from (``None`` for an answer made from bytes): a caller
    in the same process (the workload driver) reads it instead of decoding the bytes again.
    It is not compared, and nothing changes it.

    ``Response.deferred(status, headers, payload)`` is an answer whose bytes are encoded
    (``encode_json``) when ``body`` is first read, and kept: the same bytes as encoding at
    once, for a caller that holds the payload unchanged meanwhile and may never read them
    (the workload driver, ``ServiceAPI.handle(request, encode=False)``)."""

    status: int
    headers: Headers
    _body: bytes | None = field(alias="body")
    payload: Any = field(default=None, repr=False)

    @classmethod
    def deferred(cls, status: int, headers: Headers, payload: Any) -> Response:
        return cls(status, headers, None, payload)

    @property
    def body(self) -> bytes:
        """The exact bytes of the answer (encoded from ``payload`` on first use if deferred)."""
        found = self._body
        if found is None:
            found = encode_json(self.payload)
            object.__setattr__(self, "_body", found)
        return found

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Response):
            return NotImplemented
        return (self.status, self.headers, self.body) == (other.status, other.headers,
                                                          other.body)

    def __hash__(self) -> int:
        return hash((self.status, self.headers, self.body))

    def __repr__(self) -> str:
        return f"Response(status={self.status!r}, headers={self.headers!r}, body={self.body!r})"

    def header(self, name: str) -> str | None:
        return _find(self.headers, name)

    def json(self) -> Any:
        body = self.body
        return json.loads(body) if body else None
