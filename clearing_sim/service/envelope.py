"""The envelopes: ``{data, meta}`` for success, ``{errors, meta}`` for failure.

Public names: ``success``, ``failure``.

The one place a refusal (``DomainError``) becomes an HTTP status and an error body: each
problem is ``{type, code, message, param?}`` with the refusal's ``type``; ``meta`` carries
the request's ``commandId`` (a UUID), and list responses ``meta.nextCursor``.
"""

from __future__ import annotations

from typing import Any

from clearing_sim.domain.errors import DomainError
from clearing_sim.service.context import ABSENT, Reply

__all__ = ["failure", "success"]


def success(reply: Reply, command_id: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"commandId": command_id}
    if reply.next_cursor is not ABSENT:
        meta["nextCursor"] = reply.next_cursor
    return {"data": reply.data, "meta": meta}


def failure(error: DomainError, command_id: str) -> dict[str, Any]:
    errors = []
    for problem in error.problems:
        item: dict[str, Any] = {"type": error.type, "code": problem.code,
                                "message": problem.message}
        if problem.param is not None:
            item["param"] = problem.param
        errors.append(item)
    return {"errors": errors, "meta": {"commandId": command_id}}
