"""``--world FILE.yaml``: a scenario file's world staged behind the shim, again on reset."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.cli import load_world
from clearing_sim.scenario.errors import ScenarioError
from tests.http.conftest import ETHER_POUND_YAML, SETTLED_HOOK_YAML, TOKEN, Client

WORLD = """\
world: {seed: 21, epoch: "2026-03-01T09:00:00Z"}
members:
  northbank: {wallets: {GBPE: "250.00"}}
""" + ETHER_POUND_YAML + SETTLED_HOOK_YAML


@pytest.fixture
def world_client(tmp_path: Path) -> Iterator[Client]:
    path = tmp_path / "world.yaml"
    path.write_text(WORLD)
    client = Client(create_app(ServeOptions(operator_token=TOKEN),
                               scenario=load_world(str(path))))
    yield client
    client.close()


def test_a_world_file_without_steps_is_staged(world_client: Client) -> None:
    sim = world_client.sim
    assert sim.seed == 21 and world_client.sim.world.iso() == "2026-03-01T09:00:00.000Z"
    staged = {s.key: s for s in sim.staged}
    assert set(staged) == {"northbank", "etherpound"}
    auth = {"Authorization": f"Bearer {staged['northbank'].api_key}"}
    hooks = world_client.get("/api/v1/webhooks", headers=auth).json()["data"]
    assert [h["url"] for h in hooks] == ["https://hooks.example.com/w"]
    balances = world_client.op(
        "GET", f"/sim/v1/balances?participantId={staged['northbank'].participant.id}")
    assert balances.json()["data"]["wallets"] == {"GBPE": "250.00"}


def test_reset_stages_the_file_again_with_the_new_seed(world_client: Client) -> None:
    before = world_client.sim.staged
    data = world_client.op("POST", "/sim/v1/reset", {"seed": 22}).json()["data"]
    assert data["seed"] == 22
    assert [p["key"] for p in data["participants"]] == ["etherpound", "northbank"]
    assert data["participants"][0]["participantId"] != before[0].participant.id
    auth = {"Authorization": f"Bearer {data['participants'][1]['apiKey']}"}
    assert world_client.get("/api/v1/system/status", headers=auth).status_code == 200


def test_a_scenario_file_with_steps_is_a_world_file_too() -> None:
    scenario = load_world("scenarios/rejected-redeem-unwinds.yaml")
    assert scenario.world.seed == 11 and scenario.steps  # staged; its steps are not run


def test_problems_keep_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("members:\n  northbank:\n    rtgs: 12\n")
    with pytest.raises(ScenarioError) as raised:
        load_world(str(path))
    assert any(":3:" in line for line in raised.value.lines())
