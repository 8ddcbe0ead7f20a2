"""What a route handler gets and gives: the ``Context`` of one request and its ``Reply``.

Public names: ``Route``, ``Context``, ``Reply``, ``Handler``, ``Host``.

A handler sees the API that serves it only through ``Host``: the world, the credentials, the
per-kind stores and the private-URL option, the narrow part of
``clearing_sim.service.api.ServiceAPI`` it uses. Nothing here or in a feature module imports
the API class, so the route modules sit below ``api.py`` (which dispatches to them) and not
beside it in a circle.

A ``Route`` row names the method, path template, handler, the capabilities that grant it (any
one of them), which credential kinds may call it, whether it is public or sandbox-only, and a
one-line summary; ``clearing_sim.service.routes`` assembles every feature module's rows into
the one route table that dispatch, ``docs/api.md`` and the OpenAPI document read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from attrs import define, field, frozen

from clearing_sim.domain.parties import Capability, CredentialKind
from clearing_sim.service.body import Fields, parse_json_object

if TYPE_CHECKING:
    from clearing_sim.service.auth import Credentials, Principal
    from clearing_sim.service.messages import Request
    from clearing_sim.sim.participants import Participant
    from clearing_sim.sim.world import World

__all__ = ["ABSENT", "Context", "Handler", "Host", "Reply", "Route"]

T = TypeVar("T")

_BOTH = (CredentialKind.API_KEY, CredentialKind.TENANT_ADMIN)


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


@define
class Reply:
    """A success: status, ``data``, and for lists ``meta.nextCursor`` (``None`` at the end)."""

    status: int
    data: Any = None
    next_cursor: str | _Absent | None = ABSENT


class Host(Protocol):
    """What a handler uses of the API that serves it (``ServiceAPI`` is one)."""

    @property
    def world(self) -> World: ...

    @property
    def credentials(self) -> Credentials: ...

    @property
    def private_webhook_urls(self) -> bool:
        """The HTTP shim's ``--allow-private-webhook-urls``."""
        ...

    def store(self, kind: type[T]) -> T:
        """The API layer's store of this kind, made from the world on first use."""
        ...


@define
class Context:
    host: Host
    request: Request
    params: dict[str, str]
    principal: Principal | None
    command_id: str
    _parsed: dict[str, Any] | None = field(default=None, init=False)

    @property
    def world(self) -> World:
        return self.host.world

    @property
    def now_ms(self) -> int:
        return self.host.world.now_ms

    @property
    def credentials(self) -> Credentials:
        """The API's API keys, sessions and cursor codec."""
        return self.host.credentials

    @property
    def private_webhook_urls(self) -> bool:
        return self.host.private_webhook_urls

    def decoded(self, body: dict[str, Any]) -> None:
        """The body as the door decoded it (``parse_json_object``), before any handler."""
        self._parsed = body

    def body(self, *, empty_ok: bool = False) -> dict[str, Any]:
        if self._parsed is None:
            self._parsed = parse_json_object(self.request.body, empty_ok=empty_ok)
        return self._parsed

    def fields(self, *, empty_ok: bool = False) -> Fields:
        return Fields(self.body(empty_ok=empty_ok))

    @property
    def caller(self) -> Participant:
        assert self.principal is not None, "a public route has no caller"
        return self.world.participants[self.principal.participant_id]

    def store(self, kind: type[T]) -> T:
        """The API layer's store of this kind (agents, invitations, …), made on first use."""
        return self.host.store(kind)


Handler = Callable[[Context], Reply]


@frozen
class Route:
    method: str
    template: str
    handler: Handler
    summary: str
    capabilities: tuple[Capability, ...] = ()  # any one grants the route; () = none needed
    credentials: tuple[CredentialKind, ...] = _BOTH
    public: bool = False
    sandbox_only: bool = False
    query: tuple[str, ...] = ()  # the query parameters it takes; any other is 400
    #: the template's segments and whether the method changes state, made once per row
    segments: tuple[str, ...] = field(init=False, eq=False, repr=False)
    mutating: bool = field(init=False, eq=False, repr=False)

    @segments.default
    def _split(self) -> tuple[str, ...]:
        return tuple(self.template.strip("/").split("/"))

    @mutating.default
    def _changes_state(self) -> bool:
        return self.method in ("POST", "PUT", "PATCH", "DELETE")

    def match(self, path: str) -> dict[str, str] | None:
        parts = path.strip("/").split("/") if path.startswith("/") else None
        if parts is None or path.endswith("/") or len(parts) != len(self.segments):
            return None
        params: dict[str, str] = {}
        for pattern, part in zip(self.segments, parts, strict=True):
            if pattern.startswith("{") and pattern.endswith("}"):
                if not part:
                    return None
                params[pattern[1:-1]] = part
            elif pattern != part:
                return None
        return params
