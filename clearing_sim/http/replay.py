"""Restart by replay: a served world rebuilt from its journal, then journaled on.

Public names: ``Tally``, ``check_header``, ``new_header``, ``open_journal``, ``rebuild``,
``replay``.

``open_journal`` is what ``clearing-sim serve --journal FILE`` does before it listens: a new
file gets its header (fsynced); an existing one is read (a torn last line dropped, and said),
checked against this server (version, seed, environment, world file, clock and delivery
settings, the operator token's check value: any difference is refused), and its lineage
replayed into the served world, which then carries on appending. The file is opened for
writing (its torn tail cut) only once the replay has succeeded: a start that fails leaves
it as it was.

``replay`` feeds entries to the same doors the live server uses: ``ServiceAPI.handle`` for
``api`` entries (at the virtual instant each was applied, checked), the operator surface for
``op`` entries (authenticated with this server's token; one the shim never journals, such as
the receiver battery, is refused), the engine itself for ``clock`` entries (exactly as many
events, none past the entry's instant, then the clock's target) and the journaled outcomes of
real webhook deliveries (``learned``: no receiver is called again; each outcome is fed in by
the request's order of sending before the events of the hold that read it, and a request
the world would read without one stops the replay). Every answer's status (and an API
answer's body hash) is compared with the journal's: a difference stops the replay
(``JournalError``), because the world would no longer be the one the clients saw. Real
deliveries still on the wire when the journal ends (the server died, or a rewind goes back
to a checkpoint taken while they were) have no journaled outcome: they are POSTed again by
the next advance, and their outcomes journaled when the world learns them. A journal
written before issue 31 §2 (``deliveries`` entries: outcomes read at each arrival's instant)
is refused by name.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from attrs import define
from starlette.applications import Starlette

from clearing_sim import __version__
from clearing_sim.http.clock import Clock
from clearing_sim.http.gateways import issuer_webhook
from clearing_sim.http.inflight import RealOutcome
from clearing_sim.http.journal import Header, JournalError, JournalFile, JournalWriter
from clearing_sim.http.operator import OperatorSurface
from clearing_sim.http.recorder import (
    Recorder,
    journaled_operator,
    request_of,
    unjournaled,
)
from clearing_sim.http.sealing import Sealer, new_salt, token_check
from clearing_sim.http.simulation import Simulation
from clearing_sim.service.api import RefusalRecord
from clearing_sim.service.messages import Request, Response

__all__ = ["Tally", "check_header", "new_header", "open_journal", "rebuild", "replay",
           "replay_copy"]

#: Told of each replayed request entry (with its request and answer) and clock entry (None).
Observer = Callable[[dict[str, Any], Request | None, Response | None], None]


@define
class Tally:
    """What a replay did."""

    requests: int = 0
    clock_moves: int = 0
    deliveries: int = 0  # real outcomes fed in
    on_the_wire: int = 0  # real deliveries without a journaled outcome: to be sent again


def new_header(sim: Simulation, world: tuple[str, str] | None) -> Header:
    """The header of a new journal for this server; ``world``: (file name, sha256)."""
    options, salt = sim.options, new_salt()
    return Header(__version__, sim.seed, sim.world.config.environment.value,
                  None if world is None else world[1], None if world is None else world[0],
                  options.clock.value, options.speed, options.deliver_webhooks,
                  options.allow_private_webhook_urls, salt,
                  token_check(options.operator_token, salt))


def check_header(header: Header, sim: Simulation, world: tuple[str, str] | None) -> None:
    """Refuse a journal written for another world, version or operator token."""
    options = sim.options
    if header.version != __version__:
        raise JournalError(f"written by clearing-sim {header.version}; this is {__version__} "
                           "(a replay is exact only on the version that wrote it)")
    if header.token_check != token_check(options.operator_token, header.salt):
        raise JournalError("written with another operator token: its key material needs the "
                           "token it was started with (--operator-token)")
    theirs, ours = header.world_sha256, None if world is None else world[1]
    if theirs != ours:
        wanted = "no world file" if theirs is None else \
            f"the world file {header.world_name} (sha256 {theirs[:16]}…)"
        given = "none" if ours is None else f"a file with sha256 {ours[:16]}…"
        raise JournalError(f"written with {wanted}; this server was given {given}")
    mismatches = [(name, a, b) for name, a, b in (
        ("seed", header.seed, sim.seed),
        ("environment", header.environment, sim.world.config.environment.value),
        ("clock", header.clock, options.clock.value),
        ("speed", header.speed, options.speed),
        ("--deliver-webhooks", header.deliver_webhooks, options.deliver_webhooks),
        ("--allow-private-webhook-urls", header.allow_private_webhook_urls,
         options.allow_private_webhook_urls)) if a != b]
    if mismatches:
        raise JournalError("written for another world: " + "; ".join(
            f"{name} {a} in the journal, {b} here" for name, a, b in mismatches))


def _diverged(entry: dict[str, Any], what: str) -> JournalError:
    return JournalError(f"entry {entry.get('n')} ({entry.get('method', entry.get('k'))} "
                        f"{entry.get('path', '')}): {what}; the replayed world is not the "
                        "one the journal recorded")


async def replay(sim: Simulation, clock: Clock, operator: OperatorSurface,
                 entries: Iterable[dict[str, Any]], sealer: Sealer,
                 observe: Observer | None = None) -> Tally:
    """Apply the lineage's entries to ``sim`` (whose locks nobody else holds); ``observe``
    sees each request entry with its request and answer, and each clock entry."""
    tally = Tally()
    echo = None if sim.deliveries is None else sim.deliveries.echo
    if sim.deliveries is not None:
        sim.deliveries.echo = None  # a replayed delivery is not news
    try:
        await _replay(sim, clock, operator, entries, sealer, observe, tally)
    finally:
        if sim.deliveries is not None:
            sim.deliveries.echo = echo
    if sim.deliveries is not None:
        tally.on_the_wire = sim.deliveries.replayed()
    clock.rebase()
    return tally


async def _replay(sim: Simulation, clock: Clock, operator: OperatorSurface,
                  entries: Iterable[dict[str, Any]], sealer: Sealer,
                  observe: Observer | None, tally: Tally) -> None:
    world = sim.world
    token = sim.options.operator_token
    for entry in entries:
        world, kind = sim.world, entry["k"]
        if kind == "api":
            if world.now_ms != entry["at"]:
                raise _diverged(entry, f"applied at {entry['at']} ms, replayed at "
                                       f"{world.now_ms} ms")
            request = request_of(entry, sealer, token)
            response = sim.api.handle(request)
            sha = hashlib.sha256(response.body).hexdigest()[:16]
            if (response.status, sha) != (entry["status"], entry["sha"]):
                raise _diverged(entry, f"answered {entry['status']} then, {response.status} "
                                       "(or another body) now")
            tally.requests += 1
        elif kind == "refused":
            if world.now_ms != entry["at"]:
                raise _diverged(entry, f"applied at {entry['at']} ms, replayed at "
                                       f"{world.now_ms} ms")
            codes = entry["codes"]
            sim.api.replay_refusal(RefusalRecord(entry["method"], entry["path"], entry["status"],
                                                 entry["participantId"],
                                                 None if codes is None else tuple(codes)))
            request, response = None, None
            tally.requests += 1
        elif kind == "dropped":
            async with sim.world_lock:
                world.issuer_inbox.drop(entry["issuerId"], entry["instructionId"])
            request, response = None, None
            tally.requests += 1
        elif kind == "op":
            request = request_of(entry, sealer, token)
            if unjournaled(request) or not journaled_operator(
                    request, Response(entry["status"], (), b"")):
                raise _diverged(entry, "the shim never journals this operator request")
            response = await operator.handle(request)
            if response.status != entry["status"]:
                raise _diverged(entry, f"answered {entry['status']} then, "
                                       f"{response.status} now")
            clock.rebase()
            tally.requests += 1
        elif kind == "issuer":
            request = request_of(entry, sealer, token)
            response = await issuer_webhook(sim, request)
            if response.status != entry["status"]:
                raise _diverged(entry, f"answered {entry['status']} then, "
                                       f"{response.status} now")
            tally.requests += 1
        elif kind == "clock":
            request, response = None, None
            _run_steps(sim, entry)
            if sim.deliveries is not None:
                sim.deliveries.replayed_hold()
            tally.clock_moves += 1
        elif kind == "learned":
            request, response = None, None
            tally.deliveries += _feed(sim, entry)
        elif kind == "deliveries":
            raise JournalError(
                f"entry {entry['n']} (deliveries): real webhook outcomes read at each "
                "arrival's instant, as this shim did before issue 31 §2; this version reads "
                "them later (when a retry would go out) and cannot replay that journal: "
                "replay it with the version that wrote it")
        else:
            continue
        if observe is not None:
            observe(entry, request, response)


def _run_steps(sim: Simulation, entry: dict[str, Any]) -> None:
    """A ``clock`` entry: exactly ``steps`` engine events, none past ``to`` (a slice never
    runs one past the instant it reaches), then the clock to ``to``."""
    world, steps, to_ms = sim.world, entry["steps"], entry["to"]
    env, deliveries = world.env, sim.deliveries
    for done in range(steps):
        due = env.peek()
        if deliveries is not None and due > world.now_ms and deliveries.missing_by(due):
            [first, *_] = deliveries.missing_by(due)
            raise _diverged(entry, f"real delivery {first.seq} is learned at {due} ms, but "
                                   "no outcome for it was journaled before")
        if due == math.inf:
            raise _diverged(entry, f"{steps} engine events, but the world ran out after "
                                   f"{done}")
        if to_ms is not None and due > to_ms:
            raise _diverged(entry, f"{steps} engine events up to {to_ms} ms, but the world "
                                   f"has only {done} by then")
        env.step()
    if to_ms is not None and to_ms > world.now_ms:
        world.run_until(to_ms)


def _feed(sim: Simulation, entry: dict[str, Any]) -> int:
    """A ``learned`` entry: each outcome into its request's slot; how many."""
    if sim.deliveries is None:
        raise _diverged(entry, "real webhook outcomes, but this shim delivers none")
    for seq, status, error in entry["outcomes"]:
        problem = sim.deliveries.feed(seq, RealOutcome(status, error))
        if problem is not None:
            raise _diverged(entry, problem)
    return len(entry["outcomes"])


async def rebuild(sim: Simulation, recorder: Recorder, node: Any) -> Simulation:
    """A fresh simulation like ``sim`` with the lineage at ``node`` replayed into it."""
    fresh = Simulation(sim.options, sim.scenario, sim.deliveries)
    if fresh.seed != recorder.header.seed:
        fresh.build(recorder.header.seed)
    clock = Clock(fresh, sim.options.clock, sim.options.speed)
    operator = OperatorSurface(fresh, clock, sim.options.operator_token)
    try:
        await replay(fresh, clock, operator, recorder.lineage(node), recorder.sealer)
    except BaseException:
        if sim.deliveries is not None:
            sim.deliveries.watch(sim.world)
        raise
    return fresh


def open_journal(app: Starlette, path: Path, world: tuple[str, str] | None,
                 existing: JournalFile | None) -> list[str]:
    """Start journaling the app's simulation to ``path``, replaying ``existing`` first;
    the lines to print. ``JournalError`` when the journal cannot be used."""
    import asyncio

    sim: Simulation = app.state.sim
    if existing is None:
        header = new_header(sim, world)
        writer = JournalWriter(path, truncate_at=0)
        writer.append(header.wire())
        writer.sync()
        sim.journal = Recorder(writer, header, Sealer(sim.options.operator_token, header.salt))
        sim.ready = True
        return [f"journal {path}: new; every change is appended and fsynced before its answer"]
    header = existing.header
    check_header(header, sim, world)
    lines = []
    if existing.torn_bytes:
        lines.append(f"journal {path}: dropped a torn last line ({existing.torn_bytes} bytes, "
                     "a crash mid-write; its request was never answered)")
    sealer = Sealer(sim.options.operator_token, header.salt)
    lineage = _Reader()
    for offset, entry in existing.entries:
        lineage.adopt(offset, entry)
    tally = asyncio.run(replay(sim, app.state.clock, app.state.operator,
                               (entry for _, entry in _lineage(existing, lineage)), sealer))
    # Only now is the file touched (its torn tail cut): a start that fails changes nothing.
    writer = JournalWriter(path, truncate_at=existing.end_offset)
    recorder = Recorder(writer, header, sealer)
    recorder.follow(lineage)
    if tally.on_the_wire:
        lines.append(f"journal {path}: {tally.on_the_wire} real deliveries were on the wire "
                     "without a journaled outcome: the next advance sends them again")
    writer.sync()
    sim.journal = recorder
    sim.ready = True  # GET /sim/v1/health: the journal is replayed
    lines.append(f"journal {path}: replayed {len(existing.entries)} entries ({tally.requests} "
                 f"requests, {tally.clock_moves} clock moves, {tally.deliveries} real "
                 f"deliveries) to virtual {sim.world.iso()}, digest {sim.world.log.digest()}")
    return lines


def replay_copy(journal: JournalFile, token: str, world: tuple[str, str, Any] | None = None,
                observe: Observer | None = None,
                before: Callable[[Simulation], None] | None = None) -> Simulation:
    """A fresh world with the journal's lineage replayed into it, the journal untouched
    (``clearing-sim journal verify`` and ``export``); ``world``: (name, sha256, scenario)."""
    import asyncio

    from clearing_sim.http.app import create_app
    from clearing_sim.http.options import ClockMode, ServeOptions
    from clearing_sim.sim.world import Environment

    h = journal.header
    options = ServeOptions(operator_token=token, seed=h.seed,
                           environment=Environment(h.environment), clock=ClockMode(h.clock),
                           speed=h.speed, deliver_webhooks=h.deliver_webhooks,
                           allow_private_webhook_urls=h.allow_private_webhook_urls)
    app = create_app(options, scenario=None if world is None else world[2])
    sim: Simulation = app.state.sim
    check_header(h, sim, None if world is None else (world[0], world[1]))
    sealer = Sealer(token, h.salt)
    if before is not None:
        before(sim)
    lineage = _Reader()
    for offset, entry in journal.entries:
        lineage.adopt(offset, entry)
    asyncio.run(replay(sim, app.state.clock, app.state.operator,
                       (entry for _, entry in _lineage(journal, lineage)), sealer, observe))
    return sim


class _Reader(Recorder):
    """A recorder that only follows a journal's lineage (it never writes)."""

    def __init__(self) -> None:  # no writer, no key: ``adopt`` needs neither
        self.n = 0
        self.head = None
        self.checkpoints = {}


def _lineage(existing: JournalFile, recorder: Recorder) -> list[tuple[int, dict[str, Any]]]:
    """The entries of the recorder's current lineage, from those already in memory."""
    wanted = set()
    node = recorder.head
    while node is not None:
        wanted.add(node.offset)
        node = node.parent
    return [(offset, entry) for offset, entry in existing.entries if offset in wanted]
