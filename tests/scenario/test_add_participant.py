"""The step ``operator: {add_participant}``: ``POST /sim/v1/participants`` mid-run (issue 27),
read by the route's own reader (``service.admission``) with file:line problems, run by the
same change to the world, its key usable by later steps."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.scenario.loader import parse_scenario
from clearing_sim.scenario.runner import run_scenario
from tests.http.conftest import Client
from tests.scenario.kit import BASE, problems, with_steps

ADDED = """\
scenario: added mid-run
world: {seed: 7}
steps:
  - operator:
      add_participant:
        key: etherpound
        kind: stablecoin_issuer
        name: Ether Pound
        rtgsBalanceGbp: "1000000.00"
        assets: [{code: GBPE, ledger: evm}]
  - operator:
      add_participant:
        key: northbank
        kind: clearing_member
        name: Northbank
        wallets: {GBPE: "1000.00"}
  - call:
      as: northbank
      method: POST
      path: /api/v1/transactions
      body:
        useCase: redeem
        paymentReference: INV-1
        source: {amount: "100.00", asset: "${GBPE}"}
        target: {amount: "100.00", asset: {code: GBP}}
    save: {tx: data.id}
    expect: {status: 201}
  - arm: {transaction: "${tx}", scenario: failed, as: northbank}
  - advance: 120s
  - expect:
      transaction: {id: "${tx}", as: northbank, fields: {lifecycleStatus: failed, parked: true}}
      balances: {northbank: {rtgs: "0.00", GBPE: "900.00"}}
      conservation: true
"""


def test_participants_added_by_steps_trade_under_their_keys() -> None:
    result = run_scenario(parse_scenario(ADDED, "a.yaml"))
    assert result.passed, [f"{f.field}: {f.expected} / {f.actual}" for f in result.failures]


def test_the_step_changes_the_world_as_the_shims_route_does() -> None:
    """The same body through ``POST /sim/v1/participants`` on a served world (keys from the
    seed alone, as a file's run) logs the same records: same digest after the two adds."""
    client = Client(create_app(ServeOptions(operator_token="t" * 16, seed=7,
                                            seed_only_keys=True)))
    for body in ({"kind": "stablecoin_issuer", "name": "Ether Pound",
                  "rtgsBalanceGbp": "1000000.00", "assets": [{"code": "GBPE", "ledger": "evm"}]},
                 {"kind": "clearing_member", "name": "Northbank",
                  "wallets": {"GBPE": "1000.00"}}):
        answer = client.post("/sim/v1/participants", json=body,
                             headers={"Authorization": "Bearer " + "t" * 16})
        assert answer.status_code == 201, answer.text
    served = str(client.sim.world.log.digest())
    client.close()
    two_steps = ADDED[:ADDED.index("  - call:")]
    assert run_scenario(parse_scenario(two_steps, "a.yaml")).digest == served


def test_bad_bodies_are_file_line_problems_in_the_routes_words() -> None:
    text = with_steps("""\
  - operator:
      add_participant:
        key: silverpound
        kind: stablecoin_issuer
        name: Silver Pound
        assets: [{code: GBPS, ledger: evm}]
        behaviour: {outcomes: {rejected: 3}}
  - operator:
      add_participant: {key: eastbank, kind: clearing_member, name: Eastbank,
                        wallets: {GBPX: "1.00"}}
  - operator:
      add_participant: {key: northbank, kind: clearing_member, name: N, assets: []}
  - operator:
      add_participant: {key: westbank, kind: member, name: W}
""")
    assert problems(text) == [
        "s.yaml:40:42: steps[1].operator.add_participant.behaviour.outcomes.rejected: "
        "behaviour.outcomes.rejected must be from 0 to 1",
        "s.yaml:43:35: steps[2].operator.add_participant.wallets.GBPX: no issuer issues an "
        "asset 'GBPX' by this step; expected an asset code of the world or of an earlier "
        "add_participant",
        "s.yaml:45:30: steps[3].operator.add_participant.key: 'northbank' is already a name "
        "of the world; expected a new one",
        "s.yaml:45:81: steps[3].operator.add_participant.assets: assets does not apply to a "
        "clearing_member",
        "s.yaml:47:46: steps[4].operator.add_participant.kind: expected one of: "
        "clearing_member, stablecoin_issuer; got the string \"member\""]


def test_a_later_step_may_not_use_a_key_before_its_step() -> None:
    text = ADDED.replace("  - operator:\n      add_participant:\n        key: northbank",
                         "  - call: {as: northbank, method: GET, path: /api/v1/transactions}\n"
                         "  - operator:\n      add_participant:\n        key: northbank", 1)
    assert any("unknown participant or agent 'northbank'" in p for p in problems(text, "a.yaml"))


def test_a_name_already_taken_stops_the_run_at_the_step() -> None:
    """Onboarding's rule (case-insensitive, spaces collapsed), known only once the world
    exists: the step cannot be carried out, and says why."""
    text = with_steps("  - operator:\n      add_participant: {key: nb, kind: clearing_member, "
                      "name: '  northBANK '}\n")
    result = run_scenario(parse_scenario(text, "s.yaml"))
    [stopped] = [r for r in result.results if r.stopped]
    assert stopped.line == 34 and "a participant named 'Northbank' already exists" in \
        stopped.actual


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8)
                     | st.sampled_from(["GBPE", "evm", "1.00", "-1", "clearing_member",
                                        "stablecoin_issuer", "${tx}", "${GBPE}"]),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["code", "ledger", "currency", "x",
                                                        "latency", "outcomes", "holdAt",
                                                        "GBPE", "ledgers"]), inner, max_size=3),
                     max_leaves=8)
_FIELDS = ["key", "kind", "name", "rtgsBalanceGbp", "wallets", "assets", "profile",
           "behaviour", "unknown"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.dictionaries(st.sampled_from(_FIELDS), _JSON, max_size=6))
def test_any_add_participant_body_is_loaded_or_refused_never_a_traceback(
        body: dict[str, object]) -> None:
    """Hostile input (DESIGN.md, Bad input): whatever the step holds, the file loads and
    runs to a result, or is refused with file:line problems."""
    text = BASE + f"  - operator: {{add_participant: {json.dumps(body)}}}\n"
    try:
        scenario = parse_scenario(text, "f.yaml")
    except ScenarioError as error:
        assert error.lines() and all(line.startswith("f.yaml:") for line in error.lines())
        return
    run_scenario(scenario)
