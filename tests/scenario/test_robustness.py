"""Bad input never escapes as a traceback: mutated scenario files are either loaded or refused
with a ``ScenarioError``; what loads also runs to a result (DESIGN.md, Bad input)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.scenario.loader import parse_scenario
from clearing_sim.scenario.runner import run_scenario
from tests.scenario.kit import BASE

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [BASE, *(p.read_text() for p in sorted((ROOT / "scenarios").glob("*.yaml")))]
VALUES = ["1", "-1", '"x"', "[]", "{}", "null", "true", "1.5", '"${x}"', '"${tx.a}"', "90s",
          '"2026-01-01T00:00:00Z"', "{to: 5m}", "{fact: {step: x}}", '"${now+1s}"', "GBPE",
          "northbank", "'${GBPE}'", "{in: [1]}", '{matches: "("}', '"${tx}"', "silence",
          '{id: "${tx}", fields: {a: 1}}', "{to: {fact: {step: initiate}, plus: 1s}}", "1ms"]


def _mutate(rng: random.Random, text: str) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        j = rng.randrange(len(lines))
        roll, line = rng.random(), lines[j]
        if roll < 0.3:
            del lines[j]
        elif roll < 0.8 and ":" in line:
            lines[j] = line[:line.index(":") + 1] + " " + rng.choice(VALUES)
        elif roll < 0.9:
            lines.insert(j, lines[rng.randrange(len(lines))])
        else:
            lines[j] = line[:rng.randrange(len(line) + 1)]
        if not lines:
            break
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(2))
def test_mutated_files_are_loaded_or_refused_never_crash(seed: int) -> None:
    rng = random.Random(seed)
    loaded = 0
    for _ in range(60):
        text = _mutate(rng, rng.choice(TEXTS))
        try:
            scenario = parse_scenario(text, "f.yaml")
        except ScenarioError as error:
            assert error.lines() and all(line.startswith("f.yaml") for line in error.lines())
            continue
        loaded += 1
        run_scenario(scenario)
    assert loaded < 60


def test_deep_nesting_is_a_problem_not_a_recursion_error() -> None:
    with pytest.raises(ScenarioError, match="1 problem"):
        parse_scenario("a: " + "[" * 700 + "]" * 700, "f.yaml")
