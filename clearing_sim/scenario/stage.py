"""The stage a scenario runs on: its world, the API, credentials, and what steps have saved.

Public names: ``SetupFailed``, ``Stage``, ``StepFailed``.

``Stage(scenario, seed)`` builds a fresh ``World`` from the file: issuers first (their assets
exist before members' wallets are funded), then members, in file order; then a
``ServiceAPI`` (``read_indexes``: see ``ServiceAPI``; a served world's keeps them, a file's
own run makes them at the first read) and one sandbox API key per participant. ``open()``
mints the agents and creates the webhook subscriptions through the API itself, as their
participant would, so the log tells the whole story; a subscription's receiver settings
become the behaviour of the simulated endpoint behind its URL, and ``app: reference``
attaches a ``ReferenceReceiver`` (with the participant's API key and the subscription's
secret) there. Tenant-admin sessions are issued when first needed and again when they expire
on virtual time; a participant a step adds (``admitted``) comes with its API key and a
session, as the shim's route issues them. ``resolve`` answers ``${…}`` references;
``fact_ms`` finds a fact's virtual time in the log, and ``select`` reads the log through an
index (``LogIndex``; not for a world whose log is kept on disk, which keeps no second copy in
memory); ``fact_counter`` tells a wait when a fact may have happened since it last looked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import evolve

from clearing_sim.domain.money import Asset
from clearing_sim.scenario.expectations import Fact, Site
from clearing_sim.scenario.fieldpath import MISSING, lookup
from clearing_sim.scenario.log_index import LogIndex
from clearing_sim.scenario.model import AgentSpec, ReceiverSpec, Scenario, WebhookSpec
from clearing_sim.scenario.templates import NOW, Reference, substitute
from clearing_sim.service.admission import Admitted
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.auth import SESSION_TTL_S
from clearing_sim.service.messages import Request, Response
from clearing_sim.sim.eventlog import JsonValue, Record
from clearing_sim.sim.participants import Participant
from clearing_sim.sim.receivers import ReceiverBehaviour
from clearing_sim.sim.world import Environment, World, WorldConfig
from clearing_sim.webhooks import ReferenceReceiver

__all__ = ["SetupFailed", "Stage", "StepFailed", "receiver_behaviour"]

#: ``ReceiverSpec`` network fields → ``ReceiverBehaviour`` attributes.
NETWORK_FIELDS = {"loss": "p_lost", "duplicate": "p_duplicate", "reorder": "p_jitter",
                  "reorder_delay": "jitter", "duplicate_delay": "duplicate_delay"}


def receiver_behaviour(spec: ReceiverSpec,
                       base: ReceiverBehaviour | None = None) -> ReceiverBehaviour:
    """The simulated endpoint a subscription's ``receiver:`` describes, over ``base``."""
    changes: dict[str, Any] = {"status": spec.status, "until_ms": spec.until_ms,
                               "recovered_status": spec.then_status}
    if spec.latency is not None:
        changes["latency"] = spec.latency
    for name, attribute in NETWORK_FIELDS.items():
        value = getattr(spec, name)
        if value is not None:
            changes[attribute] = value
    return evolve(ReceiverBehaviour() if base is None else base, **changes)


class StepFailed(Exception):
    """A step that could not be carried out; the message says what and why."""


class SetupFailed(StepFailed):
    """The world the file describes could not be built; ``site`` is the definition at fault."""

    def __init__(self, site: Site, message: str) -> None:
        super().__init__(message)
        self.site = site


class Stage:
    def __init__(self, scenario: Scenario, seed: int, key_secret: bytes = b"", *,
                 read_indexes: bool = True, **world_options: Any) -> None:
        spec = scenario.world
        self.scenario = scenario
        self.world = World(WorldConfig(seed=seed, epoch=spec.epoch,
                                       environment=Environment(spec.environment),
                                       rtgs_calendar=spec.rtgs_calendar,
                                       key_secret=key_secret), **world_options)
        for host, addresses in spec.dns:
            self.world.dns.set(host, addresses)
        self.parties: dict[str, Participant] = {}
        self.assets: dict[str, Asset] = {}
        for issuer in scenario.issuers:
            party = self.world.add_issuer(issuer.name, issuer.profile, issuer.assets,
                                          issuer.rtgs_gbp, issuer.behaviour, issuer.currency)
            self.parties[issuer.key] = party
            self.assets.update((asset.code, asset) for asset in party.assets)
            if issuer.gateway:
                self._use_real_gateway(party, dict(issuer.gateway), issuer.site)
        for member in scenario.members:
            wallets = {self.assets[code]: amount for code, amount in member.wallets}
            self.parties[member.key] = self.world.add_member(member.name, member.rtgs_gbp,
                                                             wallets)
        self.api = ServiceAPI(self.world, read_indexes=read_indexes)
        self.keys = {key: self.api.credentials.issue_api_key(party.id)[1]
                     for key, party in self.parties.items()}
        self._sessions: dict[str, tuple[str, int]] = {}
        self.saved: dict[str, Any] = {}
        self.step_ms: dict[str, int] = {}  # step name → virtual ms it started
        self.step_wall_s: dict[int, float] = {}  # step index → wall seconds (a door's clock)
        self.step_end_ms: dict[int, int] = {}  # step index → virtual ms it ended at
        self.agents: dict[str, dict[str, str]] = {}
        self.webhooks: dict[str, dict[str, str]] = {}
        self.reference: dict[str, ReferenceReceiver] = {}  # by webhook name
        self.fiat_total = self.world.rtgs.total()
        self._index = None if world_options.get("log_store") else LogIndex(self.world.log)

    def select(self, kind: str | None, /, **match: JsonValue) -> list[Record]:
        """``world.log.select(kind, **match)``, through the index where there is one."""
        if self._index is None:
            return self.world.log.select(kind, **match)
        return self._index.select(kind, **match)

    def _use_real_gateway(self, party: Participant, fields: dict[str, Any],
                          site: Site) -> None:
        """The world file's ``gateway``: this issuer's saga calls go to its real gateway."""
        from clearing_sim.gateway.client import HttpGateway  # only worlds that use one
        from clearing_sim.gateway.transport import TransportProblem, config_from_wire

        config = config_from_wire(fields)
        if config.webhook_secret == "whsec_conformance" and "webhookSecret" not in fields:
            config = evolve(config, webhook_secret=self.world.issuers[party.id].webhook_secret)
        try:
            gateway = HttpGateway(self.world, party.id, party.name,
                                  self.world.ledgers[party.profile.ledger], config)
        except TransportProblem as problem:
            raise SetupFailed(site, f"{party.name}: gateway: "
                              f"{problem}") from None
        self.world.use_gateway(party.id, gateway, config.base)

    def open(self) -> None:
        """Mint the agents and create the subscriptions, through the API; ``SetupFailed`` if
        the API refuses one (the file is valid, but the service says no: say where)."""
        for agent in self.scenario.agents:
            self.agents[agent.key] = self._mint(agent)
        for hook in self.scenario.webhooks:
            self.webhooks[hook.key] = self._subscribe(hook)

    # credentials --------------------------------------------------------------------------
    def session(self, key: str) -> str:
        """A valid tenant-admin JWT for participant ``key`` at the current virtual time."""
        now_s = (self.world.epoch_ms + self.world.now_ms) // 1000
        held = self._sessions.get(key)
        if held is None or now_s >= held[1]:
            token = self.api.credentials.issue_session(self.parties[key].id)
            held = self._sessions[key] = (token, now_s + SESSION_TTL_S)
        return held[0]

    def token(self, as_: str | None, credential: str | None) -> str | None:
        """The bearer credential of ``as_`` (an agent uses its member's API key)."""
        if as_ is None:
            return None
        if as_ in self.agents:
            return self.keys[self.agents[as_]["member"]]
        return self.session(as_) if credential == "admin" else self.keys[as_]

    def admitted(self, key: str, admitted: Admitted) -> None:
        """Name a participant a step added, with the credentials it was issued (its session
        is the one a later ``credential: admin`` step uses, as the session's client did)."""
        party = admitted.participant
        self.parties[key] = party
        self.assets.update((asset.code, asset) for asset in party.assets)
        self.keys[key] = admitted.api_key
        now_s = (self.world.epoch_ms + self.world.now_ms) // 1000
        self._sessions[key] = (admitted.admin_token, now_s + SESSION_TTL_S)
        self.fiat_total += self.world.rtgs.balances.get(party.id, 0)  # new money, not a leak

    def key_of(self, participant_id: str) -> str | None:
        """The symbolic name of a participant id."""
        return next((k for k, p in self.parties.items() if p.id == participant_id), None)

    def request(self, method: str, target: str, token: str | None, *, json_body: Any = None,
                body: bytes | None = None, headers: dict[str, str] | None = None) -> Response:
        return self.api.handle(Request.build(method, target, token=token, json_body=json_body,
                                             body=body, headers=headers))

    def _mint(self, agent: AgentSpec) -> dict[str, str]:
        body: dict[str, Any] = {"capabilities": dict(agent.capabilities),
                                "expiresAt": self.world.iso(self.world.now_ms
                                                            + agent.expires_in_ms)}
        if agent.amount_cap_gbp is not None:
            body["amountCapGbp"] = agent.amount_cap_gbp
        response = self.request("POST", "/api/v1/sandbox/agents", self.session(agent.member),
                                json_body=body)
        data = self._created(response, agent.site, f"agent {agent.key}")
        return {"id": data["agentId"], "proof": data["mandateProof"], "member": agent.member}

    def _subscribe(self, hook: WebhookSpec) -> dict[str, str]:
        body: dict[str, Any] = {"url": hook.url, "events": list(hook.events)}
        if hook.description is not None:
            body["description"] = hook.description
        response = self.request("POST", "/api/v1/webhooks", self.keys[hook.participant],
                                json_body=body)
        data = self._created(response, hook.site, f"webhook {hook.key}")
        url = data["url"]
        if evolve(hook.receiver, app="none") != ReceiverSpec():
            self.world.webhooks.set_receiver(url, receiver_behaviour(hook.receiver))
        if hook.receiver.app == "reference":
            receiver = ReferenceReceiver.on_world(self.api, self.keys[hook.participant],
                                                  data["signingSecret"])
            receiver.attach(self.world, url)
            self.reference[hook.key] = receiver
        return {"id": data["id"], "secret": data["signingSecret"], "url": url}

    @staticmethod
    def _created(response: Response, site: Site, what: str) -> dict[str, Any]:
        if response.status != 201:
            errors = response.json().get("errors", []) if response.body else []
            detail = "; ".join(f"{e['code']}: {e['message']}" for e in errors)
            raise SetupFailed(site, f"the API refused to create {what}: "
                                    f"{response.status} {detail}")
        data: dict[str, Any] = response.json()["data"]
        return data

    # references -----------------------------------------------------------------------------
    def resolve(self, ref: Reference) -> Any:
        """The value of one ``${…}`` now."""
        if ref.root == NOW:
            return self.world.iso(self.world.now_ms + ref.offset_ms)
        if ref.root in self.saved:
            value = lookup(self.saved[ref.root], ref.path)
            if value is MISSING:
                raise StepFailed(f"${{{ref.text}}}: the value saved as {ref.root} has no "
                                 "such field")
            return value
        attribute = str(ref.path[0]) if ref.path else None
        if ref.root in self.assets:
            asset = self.assets[ref.root]
            wire = {"code": asset.code, "issuer": asset.issuer}
            return wire if attribute is None else wire[attribute]
        if ref.root in self.agents:
            return self.agents[ref.root][str(attribute)]
        if ref.root in self.webhooks:
            return self.webhooks[ref.root][str(attribute)]
        if ref.root in self.parties:
            party = self.parties[ref.root]
            return {"id": party.id, "name": party.name,
                    "account": party.issuing_account}[str(attribute)]
        raise StepFailed(f"${{{ref.text}}} is not defined at this point of the run")

    def fill(self, value: Any) -> Any:
        """``value`` with every ``${…}`` resolved."""
        return substitute(value, self.resolve)

    # facts ----------------------------------------------------------------------------------
    def resolved(self, fact: Fact) -> Fact:
        """``fact`` with the ``${…}`` of its ``transaction`` and ``where`` resolved now (a
        check judged later must look for what its step meant, whatever is saved since)."""
        transaction: Any = None if fact.transaction is None else self.fill(fact.transaction)
        where = tuple((k, self.fill(v)) for k, v in fact.where)
        if transaction == fact.transaction and where == fact.where:
            return fact  # nothing to resolve: the same fact (a wait asks at every poll)
        return evolve(fact, transaction=transaction, where=where)

    def fact_ms(self, fact: Fact, *, resolved: bool = False) -> int | None:
        """The virtual time of ``fact``, or ``None`` if it has not happened (yet).

        ``nth`` counts matches in the order they happened: log order, and for webhook
        attempts the order they were sent. ``resolved``: the fact's references are resolved
        already (``resolved()``)."""
        if not resolved:
            fact = self.resolved(fact)
        if fact.step is not None:
            return self.step_ms.get(fact.step)
        if fact.attempt is not None:
            return self._attempt_ms(fact)
        kind, match = _query(fact)
        found = self.select(kind, **match)
        picked = _nth(found, fact.nth)
        return None if picked is None else picked.at_ms

    def fact_counter(self, fact: Fact) -> Callable[[], int]:
        """For a resolved ``fact``: a count that changes whenever a record ``fact_ms(fact)``
        reads may have been logged, so a wait judges the fact again only then (the index's
        records of its kind, and of its transaction when it names one; the log's length
        without an index). A ``step`` fact reads no record."""
        if fact.step is not None:
            return lambda: 0
        kind: str | None = "webhook.attempt"
        transaction_id = None
        if fact.attempt is None:
            kind, match = _query(fact)
            transaction_id = match.get("transactionId")
        if self._index is None:
            log = self.world.log
            return lambda: len(log)
        return self._index.counter(kind, transaction_id)

    def _attempt_ms(self, fact: Fact) -> int | None:
        """When attempt n of a delivery to the subscription was sent (known once answered).

        Attempts are logged when answered; a slow answer is logged after a quicker later
        one, so they are counted in the order they were sent."""
        assert fact.webhook is not None
        found = self.select("webhook.attempt", attempt=fact.attempt,
                            subscriptionId=self.webhooks[fact.webhook]["id"])
        if fact.transaction is not None:
            events = {e.id for e in self.world.webhooks.events
                      if e.transaction_id == fact.transaction}
            found = [r for r in found if r["eventId"] in events]
        sent = sorted(int(str(r["sentAtMs"])) for r in found)
        picked = _nth(sent, fact.nth)
        return None if picked is None else int(picked)


def _query(fact: Fact) -> tuple[str | None, dict[str, Any]]:
    """The kind and fields an ``event`` or ``record`` fact selects from the log."""
    match: dict[str, Any] = {str(k): v for k, v in fact.where}
    if fact.transaction is not None:
        match["transactionId"] = fact.transaction
    if fact.event is not None:
        match["event"] = fact.event
    return ("transaction.state" if fact.event is not None else fact.record), match


def _nth(found: list[Any], nth: int) -> Any:
    """``found[nth - 1]`` (``nth`` -1: the last), or ``None`` when there are not so many."""
    index = nth - 1 if nth > 0 else nth
    return found[index] if -len(found) <= index < len(found) else None
