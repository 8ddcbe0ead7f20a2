"""From a session to a test: a journal turned into a scenario file (record and playback).

Public names: ``ExportError``, ``export_scenario``.

The journal is replayed into a fresh world (``replay_copy``) and each entry of its lineage
becomes a step, with an expectation on what the session saw:

- an ``/api/v1`` request is a ``call`` with the exact body bytes (``raw``) and the request's
  own headers (not the client's ``Host``/``User-Agent``/``Accept``…), ``as`` the world file's
  participant whose API key it carried (``credential: admin`` for a portal session the
  operator issued), and ``expect: {status}``. No credential is written: the key is read as
  the service reads it (``bearer``, any case or spacing); one the service refused is
  written ``REDACTED`` (refused the same way); a live one the cast does not hold (issued
  during the session) refuses the export;
- a clock move is ``advance: {to: <ms>ms}`` (to the virtual instant the session reached);
- the operator's fix of a parked transaction is ``operator: {resolve: <id>}``;
- a participant added through ``POST /sim/v1/participants`` is ``operator:
  {add_participant: {key, …its body}}`` (the same reading and change to the world,
  ``service.admission``), its ``key`` made from its name (``Eastbank plc`` → ``eastbank-plc``,
  ``-2`` after a name the file already uses): later calls with the API key or the admin
  token it was issued are ``as`` that key (``credential: admin`` for the token);
- at the end: the log's ``digest`` (checked before anything reads the world again; left
  out, and said, when the scenario cannot log what the session logged: a portal session
  issued other than just before its first use), every transaction's state
  (``lifecycleStatus``, ``parked``, ``terminal``), every participant's balances and
  ``conservation``.

The scenario's world is the world file the session was served with (``serve --world``):
that is how a scenario names its cast (or the session adds it), so the calls and ids are the
session's own and the digest the session's. A journal whose lineage holds a change no
scenario step expresses (keys made through ``/sim/v1/api-keys``, simulated receivers, issuer
behaviours, a reset, real webhook deliveries) is refused with the entry that needs it
(``ExportError``).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

import yaml

from clearing_sim.domain.errors import DomainError
from clearing_sim.http.journal import JournalFile
from clearing_sim.http.replay import replay_copy
from clearing_sim.http.simulation import Simulation
from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.scenario.loader import parse_scenario
from clearing_sim.scenario.model import Scenario
from clearing_sim.scenario.runner import run_scenario
from clearing_sim.service.auth import Credentials, bearer_token
from clearing_sim.service.messages import Request, Response

__all__ = ["REDACTED", "ExportError", "export_scenario"]

_CLIENT_HEADERS = frozenset({"host", "user-agent", "accept", "accept-encoding", "connection",
                             "content-length", "content-type", "authorization"})
_RESOLVE = ("/sim/v1/operator/transactions/", "/resolve")


class ExportError(Exception):
    """The journal cannot become a scenario file (exit 2, with the reason)."""


class _Steps:
    """Builds the steps while the journal replays."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.steps: list[dict[str, Any]] = []
        self.keys = {s.api_key: s.key for s in sim.staged}
        self.admins: dict[str, str] = {}  # portal token -> participant key
        self.initiators: dict[str, str] = {}  # transaction id -> participant key
        # A scenario issues a participant's portal session when a step first needs it:
        # the log (so the digest) is the session's only if the session did the same.
        self.unsure: str | None = None  # why the digest cannot be the session's
        self.session_waiting: str | None = None  # a session not yet used by the next call
        self.after_clock = False  # the last entry was a clock move (a slice of an advance)
        self.inside: int | None = None  # the instant the last slice ended inside of
        self.added: dict[str, str] = {}  # key → participant id, of add_participant steps
        self.names = _file_names(sim)  # every name the file uses: a new key is another

    def __call__(self, entry: dict[str, Any], request: Request | None,
                 response: Response | None) -> None:
        after_clock, self.after_clock = self.after_clock, entry["k"] == "clock"
        inside, self.inside = self.inside, None
        if inside is not None and entry["k"] != "clock" and self.unsure is None:
            self.unsure = (f"entry {entry['n']}: served inside the instant {inside} ms (a "
                           "slice of a long advance ended among its events); a scenario's "
                           "advance runs whole instants, so it logs this request after them")
        if entry["k"] == "clock":
            if entry["to"] is None:
                raise ExportError(f"entry {entry['n']}: real webhook deliveries have no step "
                                  "in a scenario file")
            if after_clock:  # the next slice of the same advance: one step for them all
                self.steps.pop()
            self.steps.append({"advance": {"to": f"{entry['to']}ms"}})
            if self.sim.world.env.peek() <= entry["to"]:  # a slice ended inside an instant
                self.inside = entry["to"]
        elif entry["k"] == "api":
            assert request is not None and response is not None
            self._call(entry["n"], request, response)
        elif entry["k"] in ("refused", "dropped"):
            # kept as the record it wrote, not as the request: a scenario cannot send it again
            self.unsure = (f"entry {entry['n']}: a refused request is journaled as the record "
                           "it wrote, not as the request itself, so no step can repeat it")
        else:
            assert request is not None and response is not None
            self._operator(entry, request, response)

    def _call(self, n: int, request: Request, response: Response) -> None:
        call: dict[str, Any] = {}
        authorization = request.header("Authorization")
        credential = bearer_token(authorization)
        headers = {name: value for name, value in request.headers
                   if name.lower() not in _CLIENT_HEADERS}
        if self.session_waiting is not None and credential != self.session_waiting:
            self.unsure = ("a portal session was issued before a step that did not use it "
                           "(a scenario issues it when a step first needs it)")
        self.session_waiting = None
        if credential in self.keys:
            call["as"] = self.keys[credential]
        elif credential in self.admins:
            call.update({"as": self.admins[credential], "credential": "admin"})
        elif authorization is not None:
            headers["Authorization"] = _refused(n, authorization, self.sim.api.credentials)
        target = request.path + (f"?{urlencode(request.query)}" if request.query else "")
        call.update({"method": request.method, "path": target.replace("${", "$${")})
        if headers:
            call["headers"] = {k: v.replace("${", "$${") for k, v in headers.items()}
        if request.body:
            try:
                call["raw"] = request.body.decode("utf-8").replace("${", "$${")
            except UnicodeDecodeError:
                raise ExportError(f"entry {n}: the request's body is not UTF-8 text, and a "
                                  "scenario's raw body is") from None
        self.steps.append({"call": call, "expect": {"status": response.status}})
        if (request.method, request.path, response.status) == ("POST", "/api/v1/transactions",
                                                               201) and "as" in call:
            self.initiators[json.loads(response.body)["data"]["id"]] = call["as"]

    def _operator(self, entry: dict[str, Any], request: Request, response: Response) -> None:
        path = request.path
        if path.startswith(_RESOLVE[0]) and path.endswith(_RESOLVE[1]):
            if response.status == 200:
                self.steps.append({"operator": {"resolve": path[len(_RESOLVE[0]):
                                                                -len(_RESOLVE[1])]}})
            return
        if path == "/sim/v1/sessions" and response.status == 201:
            data = json.loads(response.body)["data"]
            key = next((s.key for s in self.sim.staged
                        if s.participant.id == data["participantId"]), None) or next(
                (k for k, added in self.added.items() if added == data["participantId"]), None)
            if key is not None:
                if key in self.admins.values():
                    self.unsure = (f"{key} was issued a second portal session (a scenario "
                                   "issues one per participant)")
                self.admins[data["token"]] = key
                self.session_waiting = data["token"]
                return
        if (request.method, path, response.status) == ("POST", "/sim/v1/participants", 201):
            self._added(request, response)
            return
        if response.status >= 400:
            return  # refused: it changed nothing a scenario needs
        raise ExportError(f"entry {entry['n']}: {request.method} {path} has no scenario step; "
                          "record the session against serve --world FILE, whose file names "
                          "the cast")

    def _added(self, request: Request, response: Response) -> None:
        """``add_participant``: the body as sent, a key from its name, its credentials."""
        body = {k: v for k, v in json.loads(request.body).items() if v is not None}
        data = json.loads(response.body)["data"]
        key = base = re.sub(r"[^a-z0-9]+", "-", data["participantName"].lower()).strip("-")
        if not re.match(r"[a-z]", key):
            key = base = f"p-{key}".rstrip("-")
        serial = 1
        while key in self.names:
            serial += 1
            key = f"{base}-{serial}"
        self.names.add(key)
        self.names.update(asset["code"] for asset in data["assets"])
        self.keys[data["apiKey"]] = key
        self.admins[data["adminToken"]] = key
        self.added[key] = data["participantId"]
        self.steps.append({"operator": {"add_participant": {"key": key,
                                                             **_escaped(body)}}})


def _file_names(sim: Simulation) -> set[str]:
    """The names the world file defines (cast, agents, webhooks, asset codes) and ``now``."""
    names = {"now", *(s.key for s in sim.staged), *(w.key for w in sim.staged_webhooks)}
    names.update(asset.code for s in sim.staged for asset in s.participant.assets)
    if sim.scenario is not None:
        names.update(agent.key for agent in sim.scenario.agents)
    return names


def _escaped(value: Any) -> Any:
    """``value`` with every ``${`` written ``$${``: a body is sent as it was, unfilled."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, dict):
        return {k: _escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    return value


#: what a refused credential is written as: the service refuses it with the same code
#: (``invalid_credential``), and nothing of what the session sent reaches the file
REDACTED = "Bearer redacted-by-journal-export"


def _refused(n: int, authorization: str, credentials: Credentials) -> str:
    """The ``Authorization`` header a step sends for a credential the world file does not
    name. One this world does not take (unknown, forged, expired, revoked, or a secret sent
    to the wrong door, such as the operator token) is written as ``REDACTED``: the service
    refuses it as it refused the original, or never looked at it (a public route, a refusal
    that comes first); a blank one as it was. A live one (onboarding's sandbox key, a portal
    session made another way) refuses the export: a scenario file holds no live secret."""
    if not authorization.strip():
        return authorization
    try:
        credentials.authenticate(authorization)
    except DomainError:
        return REDACTED
    raise ExportError(f"entry {n}: the request carries a live credential of this world that "
                      "the world file's cast does not hold (one issued during the session): "
                      "a scenario file holds no live credential; record the session with "
                      "the cast's own keys")


def _final(sim: Simulation, steps: _Steps) -> list[dict[str, Any]]:
    world = sim.world
    ends: list[dict[str, Any]] = []
    balances: dict[str, dict[str, str]] = {}
    cast = [(s.key, s.participant) for s in sim.staged] + [
        (key, party) for key, participant_id in steps.added.items()
        for party in world.participants if party.id == participant_id]
    for key, party in cast:
        held: dict[str, str] = {}
        for ledger, account in party.wallets.items():
            for asset, amount in world.ledgers[ledger].balances.get(account, {}).items():
                held[asset.code] = f"{amount:f}"
        held["rtgs"] = f"{world.rtgs.balances.get(party.id, 0):.2f}"
        balances[key] = held
    states = [{"transaction": {"id": tx.id, "as": steps.initiators[tx.id], "fields": {
        "lifecycleStatus": tx.lifecycle_status.value, "parked": tx.parked,
        "terminal": tx.terminal}}}
        for tx in world.transactions if tx.id in steps.initiators]
    ends.append({"name": "what the session saw at its end",
                 "expect": {"balances": balances, "conservation": True}})
    ends.extend({"expect": state} for state in states)
    return ends


def _digest_step(document: dict[str, Any], session: str) -> dict[str, Any]:
    """The step expecting the digest the scenario's own run gives after the session's steps.

    A served world seals its key material (webhook signing secrets, API keys) with its
    operator token, which a scenario file does not hold: its run signs with keys from the
    seed alone, so its log can differ from the session's in those values only. The session's
    steps are run here as the file will run them, and their digest expected; the session's
    own is named beside it when they differ."""
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    try:
        scenario = parse_scenario(text, "exported")
    except ScenarioError as error:  # a session no scenario file can state (a seed below 0)
        raise ExportError("the session cannot be a scenario file: "
                          + "; ".join(error.lines())[:600]) from None
    ran = run_scenario(scenario)
    if not ran.passed:
        first = ran.failures[0]
        raise ExportError(f"the exported steps do not replay the session: {first.field} "
                          f"(line {first.line}): expected {first.expected}, got {first.actual}")
    name = "the digest the session ended with" if ran.digest == session else (
        f"the digest this file's run ends its steps with (the session's was {session}: its "
        "keys were sealed with the operator token, which the file does not hold)")
    return {"name": name, "expect": {"digest": ran.digest}}


def export_scenario(journal: JournalFile, token: str,
                    world: tuple[str, str, Scenario, dict[str, Any]] | None,
                    name: str) -> tuple[str, str | None]:
    """The scenario file (YAML text) that replays the journal's session and checks it, and
    why it does not expect the session's digest (``None`` when it does).
    ``world``: (file name, sha256, parsed world, the file's YAML as a mapping)."""
    if journal.header.deliver_webhooks:
        raise ExportError("the session delivered webhooks for real; a scenario file's "
                          "receivers are simulated")
    holder: list[_Steps] = []

    def observe(entry: dict[str, Any], request: Request | None,
                response: Response | None) -> None:
        holder[0](entry, request, response)

    def early(sim: Simulation) -> None:
        holder.append(_Steps(sim))

    sim = replay_copy(journal, token, None if world is None else world[:3], observe,
                      before=early)
    steps = holder[0]
    document: dict[str, Any] = {
        "scenario": name,
        "description": f"Exported from the journal {journal.path.name} (clearing-sim "
                       f"{journal.header.version}): the session's requests and clock moves, "
                       "each with the status it got, then the digest, states and balances "
                       "it ended with.",
        "tags": ["exported"]}
    cast = {} if world is None else world[3]
    document["world"] = {**cast.get("world", {}), "seed": journal.header.seed}
    for section in ("members", "issuers", "agents", "webhooks"):
        if section in cast:
            document[section] = cast[section]
    document["steps"] = steps.steps
    if not steps.unsure:
        document["steps"] = [*steps.steps, _digest_step(document, sim.world.log.digest())]
    document["steps"] = [*document["steps"], *_final(sim, steps)]
    comment = (f"# Exported by `clearing-sim journal export` from a session journal ("
               f"{journal.path.name}, {len(journal.entries)} entries): a recorded session "
               "replayed\n# as a regression test. Export it again rather than edit it.\n")
    return (comment + yaml.safe_dump(document, sort_keys=False, allow_unicode=True,
                                     width=100), steps.unsure)
