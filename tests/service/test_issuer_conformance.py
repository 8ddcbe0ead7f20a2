"""The issuer conformance suite: ``POST /api/v1/issuers/{issuerId}/conformance/run`` and
``GET .../conformance/results`` (spec, "Issuers" table, "Issuer conformance suite" under
"Issuer-side contract", States rules 1–3, Authentication 2–3)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from clearing_sim.domain.signing import signature_header
from clearing_sim.sim.conformance import SCENARIOS
from clearing_sim.sim.examples import issuer_profile
from clearing_sim.sim.issuer import IssuerBehaviour
from clearing_sim.sim.world import World
from tests.service.conftest import Caller, Service, make_service
from tests.sim.simkit import step_until_deadline


def _run_path(issuer_id: str) -> str:
    return f"/api/v1/issuers/{issuer_id}/conformance/run"


def _results_path(issuer_id: str) -> str:
    return f"/api/v1/issuers/{issuer_id}/conformance/results"


def _start(svc: Service, caller: Caller, issuer_id: str | None = None) -> Any:
    return svc.call("POST", _run_path(issuer_id or caller.participant.id), caller.admin)


def _results(svc: Service, caller: Caller) -> dict[str, Any]:
    response = svc.call("GET", _results_path(caller.participant.id), caller.admin)
    assert response.status == 200, response.json()
    data: dict[str, Any] = response.json()["data"]
    return data


def _finish(svc: Service, caller: Caller, limit_ms: int = 7_200_000) -> dict[str, Any]:
    """Run the world until the latest run has concluded every scenario; its results."""
    world: World = svc.world
    while _results(svc, caller)["status"] == "running":
        assert world.now_ms < limit_ms, "the conformance run did not complete"
        world.advance(10_000)
    return _results(svc, caller)


def _scenario(results: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in results["scenarios"] if s["name"] == name)
    return found


def _code(response: Any) -> tuple[int, str]:
    return response.status, response.json()["errors"][0]["code"]


def _new_issuer(svc: Service, name: str, behaviour: IssuerBehaviour | None = None, *,
                mode: int = 2, codes: tuple[str, ...] = ("GBPF",),
                with_profile: bool = True) -> Caller:
    world: World = svc.world
    profile = issuer_profile(mode, ledger="evm") if with_profile else None
    issuer = world.add_issuer(name, profile, codes, Decimal("1000000.00"), behaviour=behaviour)
    credentials = svc.api.credentials
    return Caller(issuer, credentials.issue_api_key(issuer.id)[1],
                  credentials.issue_session(issuer.id))


# starting a run ------------------------------------------------------------------------------
def test_run_answers_202_running_with_every_mandatory_scenario_pending(svc: Service) -> None:
    """The run sends synthetic instructions (sandbox): accepted at once, concluded later."""
    issuer = svc.issuers[2]
    response = _start(svc, issuer)
    assert response.status == 202
    data = response.json()["data"]
    assert data["issuerId"] == issuer.participant.id
    assert data["status"] == "running"
    assert data["passed"] is None
    assert data["apiBaseUrl"] == "https://issuer-2.example/api"
    assert [s["name"] for s in data["scenarios"]] == list(SCENARIOS)
    assert {s["status"] for s in data["scenarios"]} == {"pending"}
    assert _results(svc, issuer)["runId"] == data["runId"]


@pytest.mark.parametrize("mode", [2, 3])
def test_conforming_issuer_passes_every_mandatory_scenario(svc: Service, mode: int) -> None:
    """Profile promotion requires every mandatory scenario to pass: happy path per instruction
    type, rejection, silence, replay, callback signatures (spec, "Issuer conformance suite")."""
    issuer = svc.issuers[mode]
    assert _start(svc, issuer).status == 202
    results = _finish(svc, issuer)
    verdicts = {s["name"]: s["status"] for s in results["scenarios"]}
    signatures = "passed" if mode == 2 else "skipped"  # Mode 3 of the cast polls only
    assert verdicts == {"happy_path_burn": "passed", "happy_path_mint": "passed",
                        "rejection_unwinds": "passed", "silence_parks": "passed",
                        "idempotent_replay": "passed", "callback_signatures": signatures}
    assert results["passed"] is True
    assert results["completedAt"] is not None
    if mode == 3:  # not applicable: concluded at once, and it does not block the pass
        skipped = _scenario(results, "callback_signatures")
        assert skipped["concludedAt"] == skipped["startedAt"] == results["startedAt"]
        assert skipped["detail"]["summary"].startswith("not applicable")
    burn = _scenario(results, "happy_path_burn")["detail"]
    assert (burn["lifecycleStatus"], burn["chain"], burn["rtgs"]) == ("settled", "Burned",
                                                                       "Settled")
    mint = _scenario(results, "happy_path_mint")["detail"]
    assert mint["lifecycleStatus"] == "settled"
    assert Decimal(mint["targetBalanceAfter"]) - Decimal(mint["targetBalanceBefore"]) == 1
    unwind = _scenario(results, "rejection_unwinds")["detail"]
    assert (unwind["lifecycleStatus"], unwind["parked"], unwind["reason"]) == (
        "failed", False, "issuer_rejected")
    assert (unwind["chain"], unwind["rtgs"]) == ("ReturnedToSender", "Cancelled")
    assert unwind["senderBalanceAfter"] == unwind["senderBalanceBefore"]
    replay = _scenario(results, "idempotent_replay")["detail"]
    assert replay["replayInstructionId"] == replay["instructionId"]
    assert replay["instructionsCreated"] == 1


def test_callback_signatures_counts_verified_deliveries(svc: Service) -> None:
    """Verification of callback signatures: every issuer status webhook for the run's
    instructions verified against the issuer's signing secret."""
    issuer = svc.issuers[2]
    _start(svc, issuer)
    results = _finish(svc, issuer)
    detail = _scenario(results, "callback_signatures")["detail"]
    issuer_id = issuer.participant.id
    txs = [s["transactionId"] for s in results["scenarios"] if s["transactionId"]]
    instructions = {r["instructionId"] for r in svc.world.log.select("issuer.instruction",
                                                                     issuerId=issuer_id)
                    if r["transactionId"] in txs}
    delivered = [r for r in svc.world.log.select("issuer.webhook", issuerId=issuer_id)
                 if r["instructionId"] in instructions]
    assert detail["validDeliveries"] == len(delivered) > 0
    assert detail["invalidDeliveries"] == 0
    assert detail["instructions"] == len(instructions) == 5


def test_a_wrongly_signed_delivery_fails_callback_signatures(svc: Service) -> None:
    """A delivery with a wrong signature is dropped and logged (Issuer-side contract), and the
    callback_signatures scenario fails, naming the count."""
    issuer = svc.issuers[2]
    _start(svc, issuer)
    world: World = svc.world
    while not world.log.select("issuer.instruction", issuerId=issuer.participant.id):
        world.env.step()
    instruction_id = world.log.select("issuer.instruction",
                                      issuerId=issuer.participant.id)[0]["instructionId"]
    raw = json.dumps({"instructionId": instruction_id, "status": "COMPLETED"}).encode()
    now_s = (world.epoch_ms + world.now_ms) // 1000
    assert not world.issuer_inbox.receive(issuer.participant.id,
                                          signature_header("whsec_wrong", now_s, raw), raw)
    results = _finish(svc, issuer)
    scenario = _scenario(results, "callback_signatures")
    assert scenario["status"] == "failed"
    assert scenario["detail"]["invalidDeliveries"] == 1
    assert scenario["detail"]["failedChecks"] == ["no delivery failed verification"]
    assert results["passed"] is False


# timing --------------------------------------------------------------------------------------
def test_silence_parks_exactly_at_the_issuers_sla_not_before(svc: Service) -> None:
    """Silence beyond approvalSlaSeconds parks the transaction: still running (in-flight) at
    SLA − 1 ms after the request the SLA counts from (Mode 2: the execute call, sent once
    the instruction is created), parked and judged at exactly the SLA."""
    issuer = svc.issuers[2]
    world: World = svc.world
    world.save_profile(issuer.participant.id, issuer_profile(2, approval_sla_s=60))
    data = _start(svc, issuer).json()["data"]
    assert data["profileVersion"] == 2
    world.env.step()
    while _scenario(_results(svc, issuer), "silence_parks")["transactionId"] is None:
        world.env.step()
    tx_id = _scenario(_results(svc, issuer), "silence_parks")["transactionId"]
    sent_ms = step_until_deadline(world, tx_id).at_ms
    [instructed] = world.log.select("saga.instruction_sent", transactionId=tx_id)
    world.run_until(sent_ms + 60_000 - 1)
    assert _scenario(_results(svc, issuer), "silence_parks")["status"] == "running"
    tx = svc.call("GET", f"/api/v1/transactions/{tx_id}", issuer.key).json()["data"]
    assert (tx["lifecycleStatus"], tx["parked"]) == ("in-flight", False)
    world.run_until(sent_ms + 60_000)
    scenario = _scenario(_results(svc, issuer), "silence_parks")
    assert scenario["status"] == "passed"
    assert scenario["concludedAt"] == world.iso(sent_ms + 60_000)
    detail = scenario["detail"]
    assert detail["approvalSlaSeconds"] == 60
    assert detail["instructionSentAt"] == world.iso(instructed.at_ms)
    assert detail["slaCountsFrom"] == f"saga.execute_sent at {world.iso(sent_ms)}"
    assert detail["expectedParkAt"] == detail["concludedAt"] == world.iso(sent_ms + 60_000)
    assert detail["stateAtSlaMinus1ms"] == "in-flight"
    assert (detail["lifecycleStatus"], detail["parked"], detail["reason"]) == (
        "failed", True, "approval_sla_exceeded")


def test_results_stay_running_until_every_scenario_has_concluded(svc: Service) -> None:
    """Results show status running until every scenario has concluded on virtual time."""
    issuer = svc.issuers[2]
    _start(svc, issuer)
    svc.world.advance(300_000)  # the happy paths are done; silence waits for its 900 s SLA
    results = _results(svc, issuer)
    assert (results["status"], results["passed"], results["completedAt"]) == (
        "running", None, None)
    assert _scenario(results, "happy_path_burn")["status"] == "passed"
    assert _scenario(results, "silence_parks")["status"] == "running"
    assert _scenario(results, "callback_signatures")["status"] == "running"
    assert _finish(svc, issuer)["status"] == "completed"


# a misbehaving issuer -----------------------------------------------------------------------
@pytest.mark.parametrize(("behaviour", "reason", "status", "parked"), [
    (IssuerBehaviour(p_failed=1.0), "issuer_failed", "burn:FAILED", True),
    (IssuerBehaviour(p_rejected=1.0), "issuer_rejected", "burn:REJECTED", False),
])
def test_issuer_failing_its_approvals_fails_happy_path_burn_with_detail(
        svc: Service, behaviour: IssuerBehaviour, reason: str, status: str,
        parked: bool) -> None:
    """Happy path per instruction type: an issuer that never completes fails happy_path_burn
    (and the mint), the detail naming the state, reason and instruction statuses seen; the
    armed scenarios and the replay do not depend on its approvals."""
    issuer = _new_issuer(svc, "Failing Pound", behaviour)
    assert _start(svc, issuer).status == 202
    results = _finish(svc, issuer)
    burn = _scenario(results, "happy_path_burn")
    assert burn["status"] == "failed"
    detail = burn["detail"]
    assert (detail["lifecycleStatus"], detail["parked"], detail["reason"]) == (
        "failed", parked, reason)
    assert status in detail["instructionStatuses"]
    assert detail["failedChecks"][0] == "settled"
    assert detail["summary"].startswith("expected settled; the transaction ended failed")
    assert reason in detail["summary"]
    assert _scenario(results, "happy_path_mint")["status"] == "failed"
    for name in ("rejection_unwinds", "silence_parks", "idempotent_replay"):
        assert _scenario(results, name)["status"] == "passed", name
    assert results["passed"] is False


# refusals ------------------------------------------------------------------------------------
def test_second_run_while_one_is_running_is_409_then_a_new_run_replaces_it(svc: Service) -> None:
    issuer = svc.issuers[2]
    first = _start(svc, issuer).json()["data"]["runId"]
    assert _code(_start(svc, issuer)) == (409, "conformance_run_in_progress")
    assert len(svc.world.log.select("conformance.run_started")) == 1
    _finish(svc, issuer)
    participants = len(list(svc.world.participants))
    second = _start(svc, issuer)
    assert second.status == 202
    assert second.json()["data"]["runId"] != first
    results = _finish(svc, issuer)
    assert results["runId"] == second.json()["data"]["runId"]
    assert results["passed"] is True
    assert len(list(svc.world.participants)) == participants  # synthetic parties reused


def test_mode1_issuer_is_409_conformance_unsupported(svc: Service) -> None:
    """States rule 1 / "Armed transactions must use an issuer with an ON_INSTRUCTION profile":
    a Mode 1 profile has no apiBaseUrl to send instructions to."""
    assert _code(_start(svc, svc.issuers[1])) == (409, "conformance_unsupported")
    assert svc.world.log.select("conformance.run_started") == []


def test_issuer_without_profile_is_409_profile_required(svc: Service) -> None:
    issuer = _new_issuer(svc, "New Pound", codes=(), with_profile=False)
    assert _code(_start(svc, issuer)) == (409, "profile_required")


def test_issuer_without_asset_is_409_no_issued_asset(svc: Service) -> None:
    issuer = _new_issuer(svc, "Assetless Pound", codes=())
    assert _code(_start(svc, issuer)) == (409, "no_issued_asset")


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_another_issuers_id_is_403_not_own_participant(svc: Service, method: str) -> None:
    """Issuer profiles (and their conformance) apply only to the caller's own participant."""
    _start(svc, svc.issuers[2])
    target = svc.issuers[2].participant.id
    path = _run_path(target) if method == "POST" else _results_path(target)
    response = svc.call(method, path, svc.issuers[3].admin)
    assert _code(response) == (403, "not_own_participant")
    unknown = "00000000-0000-4000-8000-000000000000"
    path = _run_path(unknown) if method == "POST" else _results_path(unknown)
    assert _code(svc.call(method, path, svc.issuers[3].admin)) == (403, "not_own_participant")


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_member_admin_and_api_keys_are_403(svc: Service, method: str) -> None:
    """runOwnConformancePack: tenant-admin JWT only (Authentication 2); the issuer suite is for
    issuer tenant admins, so a clearing member's admin is refused too."""
    own = svc.member.participant.id
    path = _run_path(own) if method == "POST" else _results_path(own)
    assert _code(svc.call(method, path, svc.member.admin)) == (403, "missing_capability")
    issuer = svc.issuers[2]
    path = (_run_path if method == "POST" else _results_path)(issuer.participant.id)
    assert _code(svc.call(method, path, issuer.key)) == (403, "missing_capability")


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_production_is_503_sandbox_unavailable(prod: Service, method: str) -> None:
    issuer = prod.issuers[2]
    path = (_run_path if method == "POST" else _results_path)(issuer.participant.id)
    assert _code(prod.call(method, path, issuer.admin)) == (503, "sandbox_unavailable")


def test_results_for_an_issuer_that_never_ran_is_404(svc: Service) -> None:
    issuer = svc.issuers[2]
    response = svc.call("GET", _results_path(issuer.participant.id), issuer.admin)
    assert _code(response) == (404, "conformance_run_not_found")


def test_unknown_body_field_and_query_are_400(svc: Service) -> None:
    issuer = svc.issuers[2]
    response = svc.call("POST", _run_path(issuer.participant.id), issuer.admin, {"fast": True})
    assert _code(response) == (400, "unknown_field")
    assert svc.world.log.select("conformance.run_started") == []
    response = svc.call("GET", _results_path(issuer.participant.id) + "?runId=x", issuer.admin)
    assert _code(response) == (400, "invalid_query")


# isolation -----------------------------------------------------------------------------------
def _real_balances(world: World) -> dict[str, Any]:
    labels = {r["account"]: r["label"] for r in world.log.select("ledger.account")}
    synthetic = [p.id for p in world.participants if p.name.startswith("conformance:")]
    chain = {f"{name}/{account}/{asset.code}": amount
             for name, ledger in world.ledgers.items()
             for account, held in ledger.balances.items()
             if not str(labels[account]).startswith("conformance:")
             and not any(str(labels[account]).endswith(m) for m in synthetic)
             for asset, amount in held.items() if amount}
    fiat = {owner: amount for owner, amount in world.rtgs.balances.items()
            if owner not in synthetic}
    return {"chain": chain, "fiat": fiat}


@pytest.mark.parametrize("mode", [2, 3])
def test_synthetic_transactions_touch_no_real_balance_or_member_list(svc: Service,
                                                                    mode: int) -> None:
    """The suite's synthetic transactions never appear in real members' lists (scoping,
    Authentication 3) and change no real participant's wallet or RTGS balance."""
    issuer = svc.issuers[mode]
    world: World = svc.world
    before = _real_balances(world)
    _start(svc, issuer)
    results = _finish(svc, issuer)
    world.advance(60_000)  # Mode 3: the refund after the silence scenario has landed
    assert _real_balances(world) == before
    txs = {s["transactionId"] for s in results["scenarios"] if s["transactionId"]}
    assert len(txs) == 5
    for member in (svc.member, svc.other):
        listed = svc.call("GET", "/api/v1/transactions?limit=100", member.key).json()["data"]
        assert txs.isdisjoint(item["id"] for item in listed)
        for tx_id in txs:
            response = svc.call("GET", f"/api/v1/transactions/{tx_id}", member.key)
            assert response.status == 404
    listed = svc.call("GET", "/api/v1/transactions?limit=100", issuer.key).json()["data"]
    assert txs <= {item["id"] for item in listed}  # the issuer under test follows them
    assert all(ledger.conserved() for ledger in world.ledgers.values())


def test_suite_transactions_cannot_be_armed_through_the_arming_route(svc: Service) -> None:
    """The suite arms its own outcomes; the issuer may not re-arm them (409)."""
    issuer = svc.issuers[2]
    _start(svc, issuer)
    svc.world.advance(1)
    tx_id = _scenario(_results(svc, issuer), "happy_path_burn")["transactionId"]
    response = svc.call("POST", "/api/v1/conformance/run", issuer.admin,
                        {"scenario": "failed", "transactionId": tx_id})
    assert _code(response) == (409, "conformance_suite_transaction")
    assert _scenario(_finish(svc, issuer), "happy_path_burn")["status"] == "passed"


def test_each_scenario_start_and_verdict_is_logged(svc: Service) -> None:
    issuer = svc.issuers[2]
    run_id = _start(svc, issuer).json()["data"]["runId"]
    results = _finish(svc, issuer)
    log = svc.world.log
    started = [r["scenario"] for r in log.select("conformance.scenario_started", runId=run_id)]
    verdicts = {r["scenario"]: r["status"]
                for r in log.select("conformance.scenario_verdict", runId=run_id)}
    assert sorted(started) == sorted(SCENARIOS)
    assert verdicts == {s["name"]: s["status"] for s in results["scenarios"]}
    completed = log.select("conformance.run_completed", runId=run_id)
    assert len(completed) == 1 and completed[0]["passed"] is True


def test_same_seed_same_run_same_log_digest() -> None:
    """Determinism: the suite draws only from the world's streams and ids."""
    digests = []
    for _ in range(2):
        svc = make_service(seed=7)
        _start(svc, svc.issuers[2])
        _finish(svc, svc.issuers[2])
        digests.append(svc.world.log.digest())
    assert digests[0] == digests[1]
