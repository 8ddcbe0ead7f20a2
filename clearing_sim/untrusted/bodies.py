"""Reading a request's body on the project's own servers (the reference gateway, the
reference receiver): at most a bound, never the whole of whatever a client sends.

Public names: ``read_body``.

Starlette's ``await request.body()`` reads the body whole before anything can look at its
size: one client posting gigabytes to ``clearing-sim issuer serve`` or ``receiver serve``
takes that much memory. ``read_body`` refuses a declared ``Content-Length`` past the bound
unread, and stops reading a streamed body once it passes it.
"""

from __future__ import annotations

from starlette.requests import Request

__all__ = ["read_body"]


async def read_body(request: Request, limit: int) -> bytes | None:
    """The body, or None when it is larger than ``limit`` bytes (not read further)."""
    declared = (request.headers.get("content-length") or "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
