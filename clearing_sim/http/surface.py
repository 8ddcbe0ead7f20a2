"""What an operator route handler gets and gives, and the readers the operator bodies share.

Public names: ``OperatorContext``, ``OperatorRoute``, ``OperatorHandler``, ``Rebuild``,
``read_number`` (``service.body``'s, shared with the scenario reader), ``read_timestamp_ms``,
``participant_of``.

The operator surface (``/sim/v1``) is a door like ``/api/v1``: handlers read bodies with the
API's ``Fields``, refuse with the API's ``DomainError`` codes and answer a ``Reply`` that the
API's envelope renders. A route names the query parameters it takes (``query``); the door
refuses any other, or one given twice, before the handler runs (``service.body.read_query``).
Handlers are coroutines because the clock's are (an advance waits).

A context carries what its handler may need beyond the world and the clock, handed in by
whoever assembles the app, so that no route table imports the app or the engines that build
one (Starlette's routes do not import the app): ``rebuild`` is the journal's replay
(``http.replay.rebuild``, wired by ``http.wired.create_app``), which ``POST /sim/v1/rewind``
calls and which itself builds operator surfaces.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from clearing_sim.domain.errors import NotFound
from clearing_sim.domain.timefmt import parse_iso
from clearing_sim.service.body import Fields, parse_json_object, read_number
from clearing_sim.service.context import Reply
from clearing_sim.service.messages import Request
from clearing_sim.sim.participants import Participant

if TYPE_CHECKING:
    from clearing_sim.http.clock import Clock
    from clearing_sim.http.recorder import Recorder
    from clearing_sim.http.simulation import Simulation
    from clearing_sim.sim.world import World

__all__ = ["OperatorContext", "OperatorHandler", "OperatorRoute", "Rebuild", "participant_of",
           "read_number", "read_timestamp_ms"]

#: A fresh simulation like the given one with the journal's lineage at a node replayed into it.
Rebuild = Callable[["Simulation", "Recorder", Any], Awaitable["Simulation"]]


@frozen
class OperatorContext:
    sim: Simulation
    clock: Clock
    request: Request
    params: dict[str, str]
    #: the door's reading of the query: only parameters the route takes, each once
    query: dict[str, str] = field(factory=dict)
    #: the journal's replay, when the app was assembled with it (``POST /sim/v1/rewind``)
    rebuild: Rebuild | None = None

    @property
    def world(self) -> World:
        return self.sim.world

    def fields(self, *, empty_ok: bool = False) -> Fields:
        return Fields(parse_json_object(self.request.body, empty_ok=empty_ok))


OperatorHandler = Callable[[OperatorContext], Awaitable[Reply]]


@frozen
class OperatorRoute:
    """One ``/sim/v1`` route. ``exclusive``: the door holds the world lock around the
    handler, a GET between two slices of an advance, any other once no advance is running
    events (every route but those that take the clock, which lock for themselves).
    ``public``: no operator token needed (``GET /sim/v1/health`` alone). ``quiet``: a read
    that draws no command id from the operator's seeded stream (the console's reads,
    ``http/stories.py``), so calling it leaves every later operator answer as it was."""

    method: str
    template: str
    handler: OperatorHandler
    summary: str
    exclusive: bool = True
    public: bool = False
    query: tuple[str, ...] = ()  # the query parameters it takes; any other is 400
    quiet: bool = False

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.template.strip("/").split("/"))

    def match(self, path: str) -> dict[str, str] | None:
        parts = path.strip("/").split("/")
        if path.endswith("/") or len(parts) != len(self.segments):
            return None
        params: dict[str, str] = {}
        for pattern, part in zip(self.segments, parts, strict=True):
            if pattern.startswith("{"):
                if not part:
                    return None
                params[pattern[1:-1]] = part
            elif pattern != part:
                return None
        return params


def read_timestamp_ms(f: Fields, name: str, world: World, *, required: bool = False,
                      before_epoch_ok: bool = False) -> int | None:
    """An ISO 8601 timestamp with a zone, as virtual ms since the world's epoch (negative
    only when ``before_epoch_ok``)."""
    text = f.text(name, required=required, length_max=64)
    if text is None:
        return None
    try:
        unix_ms = parse_iso(text)
    except (ValueError, OverflowError):
        f.problem(name, "invalid_timestamp", f"{f.path(name)} must be an ISO 8601 timestamp "
                                             "with a time zone, like 2026-01-01T00:15:00Z")
        return None
    if unix_ms < world.epoch_ms and not before_epoch_ok:
        f.problem(name, "invalid_value", f"{f.path(name)} is before the world's epoch, "
                                         f"{world.iso(0)}")
        return None
    return unix_ms - world.epoch_ms


def participant_of(world: World, participant_id: str | None, *,
                   param: str | None = "participantId") -> Participant:
    """The participant, or 404 ``participant_not_found``."""
    found = world.participants.get(participant_id) if participant_id is not None else None
    if found is None:
        shown = (participant_id or "")[:64]
        raise NotFound.one(param, "participant_not_found", f"no participant {shown}")
    return found
