"""Every file in ``scenarios/`` validates, and runs green, deterministically (STYLE: examples
are tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clearing_sim.scenario.loader import load_scenario, parse_scenario, validate_paths
from clearing_sim.scenario.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "scenarios").glob("*.yaml"))


def test_there_are_examples_and_all_validate() -> None:
    assert len(EXAMPLES) >= 4
    checks = validate_paths([str(ROOT / "scenarios")])
    assert [c.lines() for c in checks if not c.ok] == []
    assert len(checks) == len(EXAMPLES)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_each_example_passes_and_its_digest_is_stable(path: Path) -> None:
    scenario = load_scenario(path)
    first = run_scenario(scenario)
    assert first.passed, "\n".join(r.render(str(path)) for r in first.failures)
    assert run_scenario(load_scenario(path)).digest == first.digest
    assert run_scenario(scenario, seed=first.seed + 1).digest != first.digest


def test_the_whole_file_example_of_the_docs_validates_and_passes() -> None:
    text = (ROOT / "docs/scenarios.md").read_text()
    start = text.index("```yaml\n# Rule: an issuer that stays silent") + len("```yaml\n")
    example = text[start:text.index("```", start)]
    result = run_scenario(parse_scenario(example, "docs/scenarios.md"))
    assert result.passed, [r.render("docs") for r in result.failures]
