"""Checkpoints and rewind: name a point of the journal, and go back to it.

Public names: ``ROUTES``.

- ``POST /sim/v1/checkpoints`` with an optional ``name`` (default ``cp-<n>``, the first n
  from the count of checkpoints plus one not taken): names the current point; 201 ``{name,
  at, atMs, digest, entry}``. A name already taken is 409 ``checkpoint_exists``; while an
  advance is paused for real receivers' answers, 409 ``clock_awaiting_receivers`` (the
  journal's lineage ends in a clock move whose outcomes are not yet known).
- ``GET /sim/v1/checkpoints``: every checkpoint, oldest first.
- ``POST /sim/v1/rewind`` with ``checkpoint``: the world as it was there, rebuilt by
  replaying the journal's prefix that led to it (the lineage); then the server carries on
  from it. 404 ``checkpoint_not_found``. The rewind is journaled, so a restart rebuilds the
  rewound world; checkpoints made after it stay, and can be rewound to later (time travel
  both ways along what was recorded).

Both need ``--journal`` (409 ``journal_required`` without it): the journal is the history a
rewind replays. A rewind waits for any advance to finish, like a reset; in realtime mode the
clock then follows the wall clock from the checkpoint's instant.
"""

from __future__ import annotations

import itertools

from clearing_sim.domain.errors import InternalError, NotAllowed, NotFound
from clearing_sim.http.journal import CHECKPOINT_NAME
from clearing_sim.http.recorder import Recorder
from clearing_sim.http.surface import OperatorContext, OperatorRoute
from clearing_sim.service.context import Reply

__all__ = ["ROUTES"]


def _journal(ctx: OperatorContext) -> Recorder:
    journal = ctx.sim.journal
    if journal is None:
        raise NotAllowed.one(None, "journal_required",
                             "checkpoints and rewind replay the request journal: start the "
                             "shim with clearing-sim serve --journal FILE")
    return journal


async def create_checkpoint(ctx: OperatorContext) -> Reply:
    f = ctx.fields(empty_ok=True)
    name = f.text("name", required=False, length_max=64)
    if name is not None and not CHECKPOINT_NAME.fullmatch(name):
        f.problem("name", "invalid_value", "name must be 1 to 64 letters, digits, '.', '_' "
                                           "or '-', starting with a letter or digit")
    f.done()
    journal = _journal(ctx)
    if ctx.clock.awaiting_peers:
        raise NotAllowed.one(None, "clock_awaiting_receivers",
                             "the clock is paused for real webhook receivers' answers: a "
                             "checkpoint names a point between two advances or slices; take "
                             "it once the receivers have answered")
    if name is None:
        name = next(f"cp-{n}" for n in itertools.count(len(journal.checkpoints) + 1)
                    if f"cp-{n}" not in journal.checkpoints)
    if name in journal.checkpoints:
        raise NotAllowed.one("name", "checkpoint_exists", f"a checkpoint {name} exists")
    world = ctx.world
    checkpoint = journal.checkpoint(name, world.now_ms, world.log.digest())
    return Reply(201, checkpoint.wire(world.iso(checkpoint.at_ms)))


async def list_checkpoints(ctx: OperatorContext) -> Reply:
    journal = _journal(ctx)
    world = ctx.world
    return Reply(200, [c.wire(world.iso(c.at_ms)) for c in journal.checkpoints.values()])


async def rewind(ctx: OperatorContext) -> Reply:
    f = ctx.fields()
    name = f.text("checkpoint", length_max=64)
    f.done()
    assert name is not None
    journal = _journal(ctx)
    checkpoint = journal.checkpoints.get(name)
    if checkpoint is None:
        raise NotFound.one("checkpoint", "checkpoint_not_found", f"no checkpoint {name[:64]}")
    if ctx.rebuild is None:  # the seam (http/surface.py): replay builds operator surfaces
        raise NotAllowed.one(None, "rewind_unavailable",
                             "this shim was assembled without the journal's replay "
                             "(clearing_sim.http.create_app wires it)")
    sim = ctx.sim
    async with sim.clock_lock, sim.world_lock:
        fresh = await ctx.rebuild(sim, journal, checkpoint.node)
        digest = fresh.world.log.digest()
        if digest != checkpoint.digest:  # checked before anything changes
            if sim.deliveries is not None:
                sim.deliveries.watch(sim.world)
            raise InternalError.one(None, "internal_error", (
                f"rewinding to {name} rebuilt digest {digest}, the checkpoint recorded "
                f"{checkpoint.digest}: nothing was changed"))
        sim.adopt(fresh)
        journal.rewind(checkpoint)
        ctx.clock.rebase()
        world = sim.world
        return Reply(200, {**checkpoint.wire(world.iso(checkpoint.at_ms)),
                           "clock": ctx.clock.wire()})


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("POST", "/sim/v1/checkpoints", create_checkpoint,
                  "name the current point of the journal"),
    OperatorRoute("GET", "/sim/v1/checkpoints", list_checkpoints,
                  "every checkpoint, oldest first"),
    OperatorRoute("POST", "/sim/v1/rewind", rewind,
                  "the world as it was at a checkpoint, rebuilt from the journal",
                  exclusive=False),
)
