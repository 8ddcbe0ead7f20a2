"""API date versions: what ``Service-Version`` may pin, and the answer to one we lack.

Public names: ``SUPPORTED_VERSIONS``, ``CURRENT_VERSION``, ``negotiate``.

Every response carries ``Service-Version``: the pinned version when the request sent a
supported one, the current version otherwise. An unsupported or malformed pin is a 400
``unsupported_version`` naming the supported list (docs/api.md).
"""

from __future__ import annotations

from clearing_sim.domain.errors import InvalidRequest

__all__ = ["CURRENT_VERSION", "SUPPORTED_VERSIONS", "negotiate"]

SUPPORTED_VERSIONS: tuple[str, ...] = ("2025-10-01", "2026-06-01")
CURRENT_VERSION = SUPPORTED_VERSIONS[-1]


def negotiate(pinned: str | None) -> str:
    if pinned is None:
        return CURRENT_VERSION
    if pinned.strip() not in SUPPORTED_VERSIONS:
        raise InvalidRequest.one("Service-Version", "unsupported_version",
                                 f"Service-Version {pinned[:40]!r} is not supported; "
                                 f"supported: {', '.join(SUPPORTED_VERSIONS)}")
    return pinned.strip()
