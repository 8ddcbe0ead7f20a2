"""The served simulation: one world, its API, the operator's ids, and the locks around them.

Public names: ``Simulation``, ``StagedParticipant``, ``StagedWebhook``.

One ``Simulation`` per application. It builds its ``World`` from the options (seed,
environment) or from a world file (a scenario file's world, members, issuers, agents and
webhooks, staged by ``clearing_sim.scenario.stage``; its steps are not run), and builds it
again on reset. Everything here runs on one event loop: ``world_lock`` is held by every
request that reads or changes the world and by the clock while it runs events;
``clock_lock`` is held by one advance (or reset) at a time, also while the clock waits for
real webhook receivers, when the world lock is free so their calls back are served.

Key material (portal signing key, API key, webhook and mandate secrets) is sealed with a
secret derived from the operator token (``key_secret``, from the slow ``sealing.token_key``):
the seed, which is printed, does not tell anyone the keys, and a key a caller holds is no
cheap test of guesses at the token; the same seed and token give the same keys and digest.

The operator surface draws its command ids from a stream of its own (seeded like the
world, but not the world's), so operator calls never shift the ids the API hands out: the
same requests give the same bytes and digest as the same calls made in-process.
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attrs import frozen

from clearing_sim.http import heap
from clearing_sim.http.delivery import RealDeliveries
from clearing_sim.http.history import History
from clearing_sim.http.options import ServeOptions
from clearing_sim.http.sealing import token_key
from clearing_sim.scenario.model import Scenario
from clearing_sim.scenario.stage import Stage
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request, Response
from clearing_sim.sim.gateway import ExternalCalls
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.streams import IdFactory, Streams
from clearing_sim.sim.world import Environment, World, WorldConfig

if TYPE_CHECKING:
    from clearing_sim.http.recorder import Recorder

__all__ = ["Simulation", "StagedParticipant", "StagedWebhook"]


@frozen
class StagedParticipant:
    """A participant a world file defined, with the API key staging issued it."""

    key: str  # its name in the file
    participant: Participant
    api_key: str


@frozen
class StagedWebhook:
    """A subscription a world file defined, with the signing secret the API gave it."""

    key: str  # its name in the file
    subscription_id: str
    url: str
    signing_secret: str


class Simulation:
    def __init__(self, options: ServeOptions, scenario: Scenario | None = None,
                 deliveries: RealDeliveries | None = None) -> None:
        self.options = options
        self.scenario = scenario
        self.deliveries = deliveries
        self._loop: asyncio.AbstractEventLoop | None = None
        self._world_lock = asyncio.Lock()
        self._clock_lock = asyncio.Lock()
        self.staged: tuple[StagedParticipant, ...] = ()
        self.staged_webhooks: tuple[StagedWebhook, ...] = ()
        self.seed = 0
        self.world: World
        self.api: ServiceAPI
        self.ids: IdFactory
        self.journal: Recorder | None = None  # with --journal: every change is recorded
        #: one-shot faults of the receiver kit: each may answer an API request in the API's
        #: place (a 503 for one fetch), before the world sees it (receiver_stage.Stage)
        self.api_faults: list[Callable[[Request], Response | None]] = []
        #: the process is this simulation's alone (clearing-sim serve): the clock keeps the
        #: world out of full collections, and a replaced world is released (http/heap.py)
        self.owns_heap = False
        #: the world is built (from the world file) and any journal replayed: what
        #: ``GET /sim/v1/health`` calls ready (``create_app``/``open_journal`` set it)
        self.ready = False
        self.build(options.seed)
        self.ready = True

    # the world ------------------------------------------------------------------------------
    def build(self, seed: int | None) -> None:
        """A fresh world (from the world file when there is one); ``None``: the default seed."""
        scenario = self.scenario
        if seed is None:
            seed = self.options.seed if self.options.seed is not None else (
                scenario.world.seed if scenario is not None else 0)
        key_secret = self.key_secret
        history = History(self.options.history_dir) if self.options.history_on_disk else None
        on_disk: dict[str, Any] = {} if history is None else {"log_store": history.log,
                                              "archive": history.archive}
        if scenario is not None:
            stage = Stage(scenario, seed, key_secret, **on_disk)
            stage.open()
            self.world, self.api = stage.world, stage.api
            self.staged = tuple(StagedParticipant(key, party, stage.keys[key])
                                for key, party in stage.parties.items())
            self.staged_webhooks = tuple(StagedWebhook(key, hook["id"], hook["url"],
                                                       hook["secret"])
                                         for key, hook in stage.webhooks.items())
        else:
            environment = self.options.environment or Environment.SANDBOX
            self.world = World(WorldConfig(seed=seed, environment=environment,
                                           key_secret=key_secret), **on_disk)
            self.api = ServiceAPI(self.world)
            self.staged = ()
            self.staged_webhooks = ()
        if history is not None:  # the file goes with the world (a replaced one, a rewind's)
            weakref.finalize(self.world, history.close)
        self.api.private_webhook_urls = self.options.allow_private_webhook_urls
        # real gateway calls leave the engine: the clock makes them off its event loop
        self.world.external = ExternalCalls(self.world.env)
        self.seed = seed
        self.ids = IdFactory(Streams(seed))
        if self.deliveries is not None:
            self.deliveries.watch(self.world)
        if self.owns_heap:  # the old world is garbage now: free its cycles
            heap.release()

    def adopt(self, other: Simulation) -> None:
        """Take another simulation's world (one rebuilt by replaying a journal's prefix;
        built with this one's deliveries, which already watch its world)."""
        self.world, self.api, self.staged = other.world, other.api, other.staged
        self.seed, self.ids = other.seed, other.ids
        if self.owns_heap:
            heap.release()

    @property
    def key_secret(self) -> bytes:
        """What seals the world's key material: the operator token, hashed (nothing when
        ``seed_only_keys``)."""
        if self.options.seed_only_keys:
            return b""
        return hashlib.sha256(b"clearing-sim key secret\x00"
                              + token_key(self.options.operator_token)).digest()

    def command_id(self) -> str:
        """A ``meta.commandId`` for an answer of the operator surface (not the world's ids)."""
        return self.ids.uuid("operator-command")

    @property
    def unix_s(self) -> int:
        """The virtual clock in unix seconds: what ``t`` of a signature is compared with."""
        return (self.world.epoch_ms + self.world.now_ms) // 1000

    # locks ----------------------------------------------------------------------------------
    def _bind(self) -> None:
        # A test client may run the app on a fresh event loop per request; asyncio locks
        # belong to the loop that first waits on them, so an idle pair is remade per loop.
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            assert not (self._world_lock.locked() or self._clock_lock.locked()), \
                "the simulation is busy on another event loop"
            self._loop = loop
            self._world_lock = asyncio.Lock()
            self._clock_lock = asyncio.Lock()

    @property
    def world_lock(self) -> asyncio.Lock:
        self._bind()
        return self._world_lock

    @property
    def clock_lock(self) -> asyncio.Lock:
        self._bind()
        return self._clock_lock
