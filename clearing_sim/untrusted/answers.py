"""Reading a real peer's HTTP answer: bounded in bytes and in time, never inflated.

Public names: ``ASKED``, ``Answer``, ``read_bounded``, ``read_bounded_async``.

A gateway, a webhook receiver or a token endpoint answers whatever it likes. Every door that
calls one asks for ``Accept-Encoding: identity`` and reads the answer's raw bytes: at most
``limit`` (one more tells it was larger), all before a deadline. A compressed answer is not
inflated (two gzip layers of 2.6 KB inflate to 1.5 GB, past any bound counted after the
inflating); it is reported as a problem and its bytes kept as they came. The deadline covers
the body as a whole: a peer dripping one byte a second stays under every read's timeout.
"""

from __future__ import annotations

import time

import httpx
from attrs import frozen

__all__ = ["ASKED", "Answer", "read_bounded", "read_bounded_async"]

#: what every call asks for: the answer's bytes as sent, never compressed
ASKED = {"Accept": "application/json", "Accept-Encoding": "identity"}


@frozen
class Answer:
    """What was read: at most ``limit`` bytes of the body, as they came."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    problem: str | None  # larger than the bound, or encoded though identity was asked


def _answer(response: httpx.Response, chunks: list[bytes], size: int, limit: int) -> Answer:
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    problem = f"the response is larger than {limit} bytes" if size > limit else None
    if encoding not in ("", "identity"):
        problem = (f"the response is Content-Encoding: {encoding[:40]}, but identity was asked "
                   "for (Accept-Encoding: identity): not read")
    return Answer(response.status_code, tuple(response.headers.items()),
                  b"".join(chunks)[:limit], problem)


def read_bounded(response: httpx.Response, limit: int, deadline: float) -> Answer:
    """A streamed ``response``'s raw body: at most ``limit`` bytes, all of it before
    ``deadline`` (``time.monotonic``) or ``httpx.ReadTimeout``."""
    chunks, size = [], 0
    for chunk in response.iter_raw():
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the answer did not come whole in time")
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return _answer(response, chunks, size, limit)


async def read_bounded_async(response: httpx.Response, limit: int) -> Answer:
    """``read_bounded`` for an async client; the caller bounds the time as a whole
    (``asyncio.wait_for`` around the request and this read)."""
    chunks, size = [], 0
    async for chunk in response.aiter_raw():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return _answer(response, chunks, size, limit)
