"""The issuer conformance kit: the spec's mandatory scenarios against a real gateway.

Public names: ``KitOptions``, ``KitUnusable``, ``RULES``, ``run_kit``.

A world on virtual time holds one issuer, ``issuer under test``, whose profile derives the
mode given (2 or 3) and whose gateway is the real one (``HttpGateway``); the engine's own
conformance suite (``clearing_sim.sim.conformance``) then runs its synthetic transactions
through it, exactly as ``POST /api/v1/issuers/{id}/conformance/run`` does for a simulated
issuer. Rejection and silence are asked of the gateway through its provider-state set-up
URL, or by trigger amounts it honours. Status webhooks reach a receiver on loopback (over
HTTPS with ``callback_tls``, as a real service's endpoint) and are verified with the
signing secret the kit issued; failed TLS handshakes there are noted in the report. Each
scenario becomes a ``Check`` of the shared report (``clearing_sim.conformance.report``) with
its evidence: every HTTP exchange of its transaction, every callback with its signature
check, the verdict's facts, and every answer the gateway gave that was refused or broke a
rule (``evidence.peer_problems``): a failure's reason names that rule and field first, then
what followed from it. In Mode 2 the kit holds each execute call back
``evidence.EXECUTE_HOLD_MS`` of wall time and judges ``waits_for_execute`` on what it saw
before each execute request (skipped in Mode 3: there is no execute).
"""

from __future__ import annotations

import bisect
import json
import ssl
import time
from typing import Any, cast

from attrs import define, evolve, frozen

from clearing_sim.conformance.report import Check, Evidence, Exchange, Report, Verdict
from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.domain.profile import SettlementMode
from clearing_sim.domain.signing import verify
from clearing_sim.gateway.callbacks import CallbackReceiver
from clearing_sim.gateway.client import CallbackQueue, HttpGateway
from clearing_sim.gateway.evidence import (
    EXECUTE_HOLD_MS,
    peer_problems,
    waits_for_execute,
    webhook_problems,
    webhook_steps,
)
from clearing_sim.gateway.serving import ServerTls
from clearing_sim.gateway.transport import Call, GatewayConfig, Transport, TransportProblem
from clearing_sim.sim.conformance import ConformanceRun, ConformanceSuite, ScenarioStatus
from clearing_sim.sim.examples import issuer_profile
from clearing_sim.sim.world import World, WorldConfig

__all__ = ["RULES", "KitOptions", "KitUnusable", "run_kit"]

_CONTRACT = "spec, Issuer-side contract"
RULES: dict[str, tuple[str, str]] = {
    "happy_path_burn": ("happy path: a burn instruction completes and the redeem settles",
                        f"{_CONTRACT}: conformance suite, happy path per instruction type"),
    "happy_path_mint": ("happy path: a mint instruction completes and the swap settles",
                        f"{_CONTRACT}: conformance suite, happy path per instruction type"),
    "rejection_unwinds": ("explicit rejection: earmark cancelled, asset returned",
                          "spec: REJECTED leads to automatic unwind"),
    "silence_parks": ("silence beyond approvalSlaSeconds parks the transaction",
                      "spec, Conformance: silence, parked exactly at the SLA"),
    "idempotent_replay": ("replay with the same idempotency key answers the original",
                          f"{_CONTRACT}: replaying the same key and body returns the original "
                          "result and creates no second instruction"),
    "callback_signatures": ("status webhooks verify with the issued signing secret",
                            "spec, Authentication 8 and Events: signed like outgoing webhooks"),
}
_VERDICTS = {ScenarioStatus.PASSED: Verdict.PASS, ScenarioStatus.SKIPPED: Verdict.SKIP}


class KitUnusable(Exception):
    """Bad usage or an unreachable gateway: no verdict (exit 2)."""


@frozen
class KitOptions:
    config: GatewayConfig
    mode: SettlementMode = SettlementMode.MODE_3
    approval_sla_s: int = 900
    seed: int = 0
    signed_webhooks: bool = True
    callback_port: int = 0
    wall_limit_s: float = 300.0
    callback_tls: ServerTls | None = None  # serve the callback receiver over HTTPS


def _probe(config: GatewayConfig) -> None:
    """Refuse to start against a gateway that cannot be reached, or refuses our credentials."""
    try:
        transport = Transport(config)
    except TransportProblem as problem:
        raise KitUnusable(str(problem)) from None
    try:
        call = transport.request("GET", config.base + "/instructions/conformance-probe")
    finally:
        transport.close()
    if call.status is None:  # no HTTP answer; an answer with a problem (too large) is one
        raise KitUnusable(f"the gateway at {config.base} cannot be reached: {call.error}")
    if call.status in (401, 403):
        raise KitUnusable(f"the gateway at {config.base} refuses the kit's credentials "
                          f"(HTTP {call.status}): check --bearer or the OAuth options")


def _world(options: KitOptions, queue: CallbackQueue) -> tuple[World, HttpGateway]:
    world = World(WorldConfig(seed=options.seed))
    mode = 2 if options.mode is SettlementMode.MODE_2 else 3
    feedback = ("SIGNED_WEBHOOK", "POLLABLE_RESOURCE") if options.signed_webhooks \
        else ("POLLABLE_RESOURCE",)
    profile = evolve(issuer_profile(mode, feedback=feedback,
                                    approval_sla_s=options.approval_sla_s),
                     api_base_url=options.config.base, refund_url=options.config.refund_url)
    issuer = world.add_issuer("issuer under test", profile, ("GBPT",))
    assert issuer.issuing_account is not None
    gateway = HttpGateway(world, issuer.id, issuer.name, world.ledgers[profile.ledger],
                          options.config, queue)
    world.use_gateway(issuer.id, gateway, options.config.base)
    return world, gateway


@define
class WallClock:
    """When, in wall time, the run reached and left each virtual instant: a check's JUnit
    ``time`` is the wall seconds it was under way (what a CI dashboard adds up), its virtual
    span a property."""

    started_s: float  # time.monotonic() when the run started
    reached: list[tuple[int, float]]  # (virtual ms, wall s since started_s), ascending
    last_s: float = 0.0  # wall s since started_s of the run's last step

    def step(self, now_ms: int) -> float:
        """Note one step of the run at ``now_ms``; the wall seconds since it started."""
        self.last_s = time.monotonic() - self.started_s
        if now_ms > self.reached[-1][0]:
            self.reached.append((now_ms, self.last_s))
        return self.last_s

    def span_ms(self, from_ms: int, to_ms: int) -> float:
        """Wall ms from the run's reaching ``from_ms`` to its leaving ``to_ms``."""
        first = bisect.bisect_right(self.reached, (from_ms, float("inf"))) - 1
        after = bisect.bisect_right(self.reached, (to_ms, float("inf")))
        left_s = self.reached[after][1] if after < len(self.reached) else self.last_s
        return 1000 * (left_s - self.reached[max(first, 0)][1])


def _run(world: World, gateway: HttpGateway, run: ConformanceRun,
         limit_s: float) -> WallClock:
    clock = WallClock(time.monotonic(), [(world.now_ms, 0.0)])
    while run.completed_at_ms is None:
        gateway.take_callbacks()
        if world.env.peek() == float("inf"):
            break
        world.env.step()
        if clock.step(world.now_ms) > limit_s:
            raise KitUnusable(f"the run took more than {limit_s:g} s of wall time; the "
                              "gateway answers too slowly")
    return clock


def _exchange(call: Call) -> Exchange:
    return Exchange(call.method, call.url, call.request_headers, call.request_body,
                    call.status, call.response_headers, call.response_body, call.elapsed_ms,
                    call.error)


def _callback_notes(queue: CallbackQueue, secret: str) -> list[str]:
    notes = [f"{len(queue.received)} status webhooks arrived at the kit's receiver"]
    for signature, raw, arrived in queue.received:
        try:
            body = parse_untrusted(raw)
        except ValueError:
            body = {}
        ok = verify(secret, signature, raw, arrived)
        what = f"{body.get('instructionId')} {body.get('status')}" if isinstance(body, dict) \
            else "(not JSON)"
        notes.append(f"callback {what}: Service-Signature {signature or '(none)'} -> "
                     f"{'verified' if ok else 'FAILED verification'}")
    return notes


def _checks(run: ConformanceRun, world: World, gateway: HttpGateway, queue: CallbackQueue,
            mode_2: bool, clock: WallClock) -> list[Check]:
    checks = []
    steps = webhook_steps(queue)
    for result in run.scenarios:
        title, rule = RULES[result.name]
        verdict = _VERDICTS.get(result.status, Verdict.FAIL)
        calls = [c for c in gateway.transport.calls if c.tag == result.transaction_id]
        facts = {k: v for k, v in result.detail.items() if k not in ("summary",)}
        summary = str(result.detail.get("summary", result.status.value))
        problems = webhook_problems(queue, gateway.webhook_secret) \
            if result.name == "callback_signatures" \
            else peer_problems(world.log, result.transaction_id)
        told = [problem for ins in gateway.instructions.values()
                if ins.transaction_id == result.transaction_id
                for problem in steps.get(ins.id, [])]
        if told and verdict is Verdict.PASS:  # the rule is broken though the saga coped
            verdict, summary = Verdict.FAIL, f"{summary}, but the gateway broke a rule"
        problems += told
        notes = [summary, "facts: " + json.dumps(facts, sort_keys=True, default=str)]
        notes += [f"the gateway broke a rule: {problem}" for problem in problems]
        if result.name == "callback_signatures":
            notes += _callback_notes(queue, gateway.webhook_secret)
        started, concluded = result.started_at_ms, result.concluded_at_ms
        virtual = None if started is None or concluded is None else float(concluded - started)
        wall = 0.0 if started is None or concluded is None \
            else clock.span_ms(started, concluded)
        reason = "" if verdict is Verdict.PASS else summary
        if verdict is Verdict.FAIL and problems:
            reason = f"the gateway broke a rule: {'; '.join(problems)}. So: {summary}"
        checks.append(Check(result.name, title, rule, verdict,
                            Evidence(cast(Any, [_exchange(c) for c in calls]), cast(Any, notes)),
                            reason, wall, virtual))
    scenario_of = {r.transaction_id: r.name for r in run.scenarios
                   if r.transaction_id is not None}
    checks.append(waits_for_execute(gateway, queue, run, mode_2, scenario_of))
    return checks


def run_kit(options: KitOptions) -> Report:
    """Run every mandatory scenario once; raise ``KitUnusable`` when no verdict is possible."""
    mode_2 = options.mode is SettlementMode.MODE_2
    config = evolve(options.config, execute_hold_ms=EXECUTE_HOLD_MS if mode_2 else 0)
    options = evolve(options, config=config)
    _probe(config)
    queue = CallbackQueue()
    try:
        receiver = CallbackReceiver(queue, port=options.callback_port,
                                    tls=options.callback_tls)
    except ssl.SSLError as error:
        raise KitUnusable(f"the callback receiver's certificate or key cannot be used: "
                          f"{error}") from None
    except OSError as error:
        raise KitUnusable(f"the callback receiver cannot listen on 127.0.0.1:"
                          f"{options.callback_port}: {error.strerror or error}") from None
    with receiver:
        notes = [f"mode {options.mode.value}, approvalSlaSeconds {options.approval_sla_s} "
                 "(virtual time)", f"status webhooks to {receiver.url}"]
        if mode_2:
            notes.append(f"each execute call held {EXECUTE_HOLD_MS} ms of wall time after "
                         "its instruction's creation answer, the instruction read meanwhile")
        world, gateway = _world(options, queue)
        try:
            if config.provider_states_url is not None and options.signed_webhooks:
                call = gateway.transport.request("POST", config.provider_states_url, {
                    "consumer": "clearing-sim", "action": "setup", "state": "callbacks go to",
                    "params": {"webhookUrl": receiver.url,
                               "signingSecret": gateway.webhook_secret}})
                notes.append(f"provider state 'callbacks go to': {call.status or call.error}")
            run = ConformanceSuite(world).start(gateway.issuer_id)
            clock = _run(world, gateway, run, options.wall_limit_s)
            time.sleep(0.05)  # late callbacks still count as evidence
            gateway.take_callbacks()
        finally:
            gateway.transport.close()
        notes += [f"callback TLS handshake failed: {failure[:200]}"
                  for failure in receiver.handshake_failures[:5]]
    notes.append(f"world digest {world.log.digest()}")
    checks = _checks(run, world, gateway, queue, mode_2, clock)
    return Report("issuer", config.base, cast(Any, checks), cast(Any, notes),
                  1000 * (time.monotonic() - clock.started_s), float(world.now_ms))

