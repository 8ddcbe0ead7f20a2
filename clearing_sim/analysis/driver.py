"""The workload driver: a world built from a workload, and its members' arrivals as SimPy
processes that initiate transactions through the public API.

Public names: ``SetupRefused``, ``WorkloadDriver``, ``simulate``.

``WorkloadDriver(workload, seed)`` builds the world the file describes (issuers first, so
their assets exist when members' wallets are funded), a ``ServiceAPI`` and one sandbox API
key per participant, creates the webhook subscriptions through the API (``POST
/api/v1/webhooks``, as the participant would) and sets each receiver's behaviour; an outage
is a process that switches the receiver to its outage status at its start. ``start()`` adds
one arrival process per member. Each arrival is a ``POST /api/v1/transactions`` through
``ServiceAPI.handle``, like every other door's.

Randomness comes from the world's named streams only, one per member and purpose:
``workload:<member>:arrivals`` (gaps and the intraday thinning), ``:mix`` (use case),
``:asset`` (source and target assets) and ``:amount``. Arrivals are a Poisson process at the
member's peak rate, each candidate kept with probability rate(t) / peak (thinning), so an
intraday profile shapes the rate hour by hour. Same workload and seed, same log, same digest.

The driver logs what only it knows, so frames need no private state: ``workload.started``
(the horizon, the members, issuers and subscriptions by name), ``workload.initiated`` (per
accepted initiation: the transaction id, member, use case, assets, issuers, amount) and
``workload.refused`` (an initiation the API refused: its status and error codes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from itertools import accumulate
from typing import IO, Any

import simpy

from clearing_sim.analysis.model import MemberLoad, Outage, ReceiverLoad, WebhookLoad, Workload
from clearing_sim.domain.jsontext import ordered_encoder
from clearing_sim.domain.money import Asset
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request, Response
from clearing_sim.sim.collector import paced_collector
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.receivers import ReceiverBehaviour
from clearing_sim.sim.streams import Streams
from clearing_sim.sim.world import World, WorldConfig

__all__ = ["SetupRefused", "WorkloadDriver", "simulate"]

Proc = Generator[simpy.Event, Any, None]
#: ``encode_json`` (the API's request encoding) for values without floats, by msgspec
_json = ordered_encoder()
_MS_PER_HOUR = 3_600_000
#: How many events a run reporting its progress runs between two reports.
_EVENTS_PER_REPORT = 5_000


class SetupRefused(Exception):
    """The API refused to set up something the workload asks for (a subscription to a private
    address, say); ``site`` is the definition at fault (``path:line:col: field``)."""

    def __init__(self, site: str, message: str) -> None:
        super().__init__(f"{site}: {message}")
        self.site = site


def _receiver_behaviour(spec: ReceiverLoad, status: int, until_ms: int | None = None,
                        recovered_status: int = 200) -> ReceiverBehaviour:
    extra: dict[str, Any] = {}
    if spec.latency is not None:
        extra["latency"] = spec.latency
    if spec.reorder_delay is not None:
        extra["jitter"] = spec.reorder_delay
    if spec.duplicate_delay is not None:
        extra["duplicate_delay"] = spec.duplicate_delay
    return ReceiverBehaviour(status=status, until_ms=until_ms, recovered_status=recovered_status,
                             p_lost=spec.loss, p_duplicate=spec.duplicate,
                             p_jitter=spec.reorder, **extra)


class _Picks:
    """One member's draws, made once: its streams, the use cases and source assets with
    their cumulative weights (``random.choices`` makes the same list from the weights on
    every call; given it, it draws the same), and each source's swap targets."""

    def __init__(self, member: MemberLoad, streams: Streams) -> None:
        self.member = member
        self.mix = streams.get(f"workload:{member.key}:mix")
        self.asset = streams.get(f"workload:{member.key}:asset")
        self.amount = streams.get(f"workload:{member.key}:amount")
        self.use_cases = [use_case for use_case, _ in member.mix]
        self.use_case_weights = list(accumulate(weight for _, weight in member.mix))
        self.codes = [code for code, _ in member.assets]
        self.code_weights = list(accumulate(weight for _, weight in member.assets))
        self._targets: dict[str, tuple[list[str], list[float]]] = {}

    def swap_targets(self, source: Asset,
                     assets: dict[str, Asset]) -> tuple[list[str], list[float]]:
        """The assets a swap from ``source`` may go to (the member's other assets of its
        currency with a weight, else any other), and their cumulative weights."""
        found = self._targets.get(source.code)
        if found is None:
            others = [(c, w) for c, w in self.member.assets if c != source.code
                      and assets[c].currency == source.currency and w > 0]
            if not others:
                others = [(c, 1.0) for c in self.codes if c != source.code]
            found = self._targets[source.code] = (
                [c for c, _ in others], list(accumulate(w for _, w in others)))
        return found


class WorkloadDriver:
    """``log_sink``: stream the event log there, keeping no record in memory, and forget each
    transaction's bookkeeping once it ended (``World``'s ``retain_log`` and
    ``forget_terminal``): memory stays flat whatever the run's length; the digest is the same."""

    def __init__(self, workload: Workload, seed: int,
                 log_sink: IO[str] | IO[bytes] | None = None) -> None:
        self.workload = workload
        self.seed = seed
        streaming = log_sink is not None
        self.world = World(WorldConfig(seed=seed, epoch=workload.epoch,
                                       rtgs_calendar=workload.rtgs_calendar), log_sink=log_sink,
                           retain_log=not streaming, forget_terminal=streaming)
        world = self.world
        self.parties: dict[str, Participant] = {}
        self.assets: dict[str, Asset] = {}
        for issuer in workload.issuers:
            party = world.add_issuer(issuer.name, issuer.profile, issuer.assets,
                                     issuer.rtgs_gbp, issuer.behaviour, issuer.currency)
            self.parties[issuer.key] = party
            self.assets.update((asset.code, asset) for asset in party.assets)
        for member in workload.members:
            wallets = {self.assets[code]: amount for code, amount in member.wallets}
            self.parties[member.key] = world.add_member(member.name, member.rtgs_gbp, wallets)
        self.api = ServiceAPI(world)
        self.keys = {key: self.api.credentials.issue_api_key(party.id)[1]
                     for key, party in self.parties.items()}
        self.subscriptions = {hook.key: self._subscribe(hook) for hook in workload.webhooks}
        self.initiated = 0
        self.refused = 0
        self._member_picks: dict[str, _Picks] = {}

    # set-up -------------------------------------------------------------------------------
    def _subscribe(self, hook: WebhookLoad) -> str:
        body: dict[str, Any] = {"url": hook.url, "events": list(hook.events)}
        if hook.description is not None:
            body["description"] = hook.description
        response = self._call("POST", "/api/v1/webhooks", self.keys[hook.participant], body)
        if response.status != 201:
            errors = response.json().get("errors", []) if response.body else []
            detail = "; ".join(f"{e['code']}: {e['message']}" for e in errors)
            raise SetupRefused(hook.site, f"the API refused to create webhook {hook.key}: "
                                          f"{response.status} {detail}")
        subscription_id: str = response.json()["data"]["id"]
        receiver = hook.receiver
        if not receiver.is_default:
            self.world.webhooks.set_receiver(hook.url,
                                             _receiver_behaviour(receiver, receiver.status))
        for outage in receiver.outages:
            self.world.env.process(self._outage(hook.url, receiver, outage))
        return subscription_id

    def _outage(self, url: str, receiver: ReceiverLoad, outage: Outage) -> Proc:
        if outage.from_ms > self.world.now_ms:
            yield self.world.env.timeout(outage.from_ms - self.world.now_ms)
        self.world.webhooks.set_receiver(url, _receiver_behaviour(
            receiver, outage.status, outage.until_ms, receiver.status))

    def start(self) -> None:
        """Log the set-up and start one arrival process per member."""
        w = self.workload
        self.world.log.append(
            "workload.started", workload=w.name, horizonMs=w.horizon_ms, drainMs=w.drain_ms,
            members={m.key: self.parties[m.key].id for m in w.members},
            issuers={i.key: self.parties[i.key].id for i in w.issuers},
            subscriptions=dict(self.subscriptions))
        for member in w.members:
            if member.arrivals.peak_per_hour > 0:
                self.world.env.process(self._arrivals(member))

    def run(self, progress: Callable[[int, int], None] | None = None) -> World:
        """Start, run the arrivals to the horizon, then drain (``drain`` or until idle).
        ``progress(now_ms, initiated)`` is called every few thousand events."""
        self.start()
        w = self.workload
        limit = None if w.drain_ms is None else w.horizon_ms + w.drain_ms
        if progress is None:
            self.world.run_all(limit)
        else:
            self._run_reporting(limit, progress)
        return self.world

    def _run_reporting(self, limit_ms: int | None,
                       progress: Callable[[int, int], None]) -> None:
        """``World.run_all(limit_ms)``, pausing every ``_EVENTS_PER_REPORT`` events to report:
        the same events in the same order, so the same log and digest."""
        env = self.world.env
        end = math.inf if limit_ms is None else limit_ms

        def due() -> bool:  # an event is scheduled (peek: inf when none) up to the end
            at = env.peek()
            return at != math.inf and at <= end

        with paced_collector():
            while due():
                for _ in range(_EVENTS_PER_REPORT):
                    if not due():
                        break
                    env.step()
                progress(self.world.now_ms, self.initiated)
        if limit_ms is not None:
            self.world.run_until(limit_ms)
        progress(self.world.now_ms, self.initiated)

    # arrivals -----------------------------------------------------------------------------
    def _arrivals(self, member: MemberLoad) -> Proc:
        world = self.world
        streams = world.streams
        gaps = streams.get(f"workload:{member.key}:arrivals")
        arrivals = member.arrivals
        peak = arrivals.peak_per_hour
        at_ms = 0.0
        n = 0
        while True:
            at_ms += gaps.expovariate(peak / _MS_PER_HOUR)
            if at_ms >= self.workload.horizon_ms:
                return
            if arrivals.intraday is not None \
                    and gaps.random() * peak >= arrivals.rate_at(world.epoch_ms + at_ms):
                continue
            due = round(at_ms)
            if due > world.now_ms:
                yield world.env.timeout(due - world.now_ms)
            n += 1
            self._initiate(member, n)

    def _picks(self, member: MemberLoad) -> _Picks:
        picks = self._member_picks.get(member.key)
        if picks is None:
            picks = self._member_picks[member.key] = _Picks(member, self.world.streams)
        return picks

    def _initiate(self, member: MemberLoad, n: int) -> None:
        picks = self._picks(member)
        use_case = picks.mix.choices(picks.use_cases, cum_weights=picks.use_case_weights)[0]
        source = self.assets[picks.asset.choices(picks.codes, cum_weights=picks.code_weights)[0]]
        target: Asset | None = None
        if use_case == "swap":
            codes, weights = picks.swap_targets(source, self.assets)
            target = self.assets[picks.asset.choices(codes, cum_weights=weights)[0]]
        amount = member.amount.sample(picks.amount)
        reference = f"WL-{member.key}-{n:07d}"
        wire_amount = f"{amount:f}"
        body = {"useCase": use_case, "paymentReference": reference,
                "source": {"amount": wire_amount,
                           "asset": {"code": source.code, "issuer": source.issuer}},
                "target": {"amount": wire_amount,
                           "asset": {"code": source.currency} if target is None
                           else {"code": target.code, "issuer": target.issuer}}}
        response = self._call("POST", "/api/v1/transactions", self.keys[member.key], body,
                              encode=False)
        # the answer as the door built it: its bytes are never encoded, nor decoded again
        answer = response.payload
        if response.status != 201:
            self.refused += 1
            self.world.log.append("workload.refused", member=member.key, paymentReference=reference,
                                  useCase=use_case, status=response.status,
                                  codes=[e["code"] for e in answer["errors"]])
            return
        self.initiated += 1
        data = answer["data"]
        participants = self.world.participants
        source_issuer = participants.issuer_of(source)
        target_issuer = participants.issuer_of(target) if target is not None else None
        assert source_issuer is not None
        self.world.log.append(
            "workload.initiated", transactionId=data["id"], member=member.key,
            paymentReference=reference, useCase=use_case, sourceAsset=source.code,
            sourceIssuerId=source_issuer.id,
            targetAsset=source.currency if target is None else target.code,
            targetIssuerId=None if target_issuer is None else target_issuer.id,
            amount=wire_amount, receiveAmount=data["receiveAmount"],
            feeAmount=data["platformFeeAmount"])

    def _call(self, method: str, path: str, token: str, body: Any,
              encode: bool = True) -> Response:
        # ``json_body=body`` sends these bytes: the driver's bodies hold strings only
        return self.api.handle(Request.build(method, path, token=token, body=_json(body)),
                               encode=encode)


def simulate(workload: Workload, seed: int) -> World:
    """Run ``workload`` under ``seed`` to its end; the world, with its whole log."""
    return WorkloadDriver(workload, seed).run()
