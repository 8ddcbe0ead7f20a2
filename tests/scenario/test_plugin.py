"""The pytest plugin (issue: the pytest plugin): registered through the ``pytest11`` entry
point, it collects scenario files as items, shows failures as the CLI does, and reports an
invalid file as a collection error with its line, not a traceback."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from tests.scenario.kit import BASE, with_steps

pytest_plugins = ["pytester"]
SETTLES = with_steps(
    "  - wait_until: {transaction: {id: '${tx}', fields: {terminal: true}}, timeout: 1h}\n"
    "    expect: {transaction: {id: '${tx}', fields: {lifecycleStatus: settled}}}\n")


def _pytest(pytester: pytest.Pytester, *args: str) -> tuple[int, str]:
    """Run pytest in-process (the plugin is loaded from its entry point, as users get it)."""
    # In-process, the plugin's package is already imported, so pytest may warn that it cannot
    # rewrite its asserts (whether it does depends on how the package was installed).
    done = pytester.runpytest_inprocess("-p", "no:cacheprovider",
                                        "-W", "ignore::pytest.PytestAssertRewriteWarning", *args)
    return int(done.ret), done.stdout.str()


def test_the_plugin_is_registered_through_the_pytest11_entry_point() -> None:
    found = {e.name: e.value for e in entry_points(group="pytest11")}
    assert found.get("clearing_sim") == "clearing_sim.scenario.pytest_plugin"


WRONG = SETTLES.replace("scenario: base", "scenario: wrong").replace(
    "lifecycleStatus: settled", "lifecycleStatus: cancelled")


def test_scenario_files_are_items_and_failures_read_like_the_cli(
        pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", ok=SETTLES, wrong=WRONG, other="not: a scenario\n")
    code, out = _pytest(pytester, "-q")
    assert code == 1, out
    assert "1 failed, 1 passed" in out  # other.yaml has no scenario: key: not collected
    assert 'wrong.yaml:35:27: steps[1].expect.transaction: expected lifecycleStatus ' \
           '"cancelled", got lifecycleStatus="settled"' in out
    assert "replay: clearing-sim run wrong.yaml --seed 1" in out
    assert "Traceback" not in out


def test_an_invalid_file_is_a_collection_error_with_its_line(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", bad=BASE.replace("world: {seed: 1}", "world: {seed: one}"))
    code, out = _pytest(pytester, "-q")
    assert code == 2, out
    assert "ERROR collecting bad.yaml" in out
    assert "bad.yaml:2:15: world.seed: expected an integer" in out
    assert "Traceback" not in out


def test_other_yaml_of_any_size_is_not_read_whole(pytester: pytest.Pytester) -> None:
    """Collection reads at most a scenario file's limit of any YAML in the tree: a link to
    ``/dev/zero`` named like YAML (read whole, collection never ended) is passed over, and
    an oversized file with a top-level ``scenario:`` key is an error naming its size."""
    (pytester.path / "endless.yaml").symlink_to("/dev/zero")
    pytester.makefile(".yaml", ok=SETTLES, huge=SETTLES + "# padding\n" * 40_000)
    code, out = _pytest(pytester, "-q", "--continue-on-collection-errors")
    assert code == 1, out
    assert "1 passed" in out and "ERROR collecting huge.yaml" in out
    assert "a scenario file is at most 262144 bytes" in out
    assert "endless" not in out and "Traceback" not in out


def test_scenario_seed_replaces_every_files_seed(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", wrong=WRONG)
    _, out = _pytest(pytester, "-q", "--scenario-seed", "9")
    assert "replay: clearing-sim run wrong.yaml --seed 9" in out


def test_the_ini_switch_turns_collection_off(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", ok=SETTLES)
    pytester.makeini("[pytest]\nclearing_sim_scenarios = false\n")
    code, out = _pytest(pytester, "-q")
    assert code == 5 and "no tests ran" in out


def test_k_selects_scenarios_by_their_tags(pytester: pytest.Pytester) -> None:
    """``pytest -k agents`` selects the files tagged ``agents`` (pytest's ``-k`` reads
    ``extra_keyword_matches``, not ``keywords``)."""
    pytester.makefile(".yaml", tagged=SETTLES.replace("scenario: base",
                                                      "scenario: one\ntags: [agents, redeem]"),
                      plain=SETTLES.replace("scenario: base", "scenario: two"))
    code, out = _pytest(pytester, "-q", "-k", "agents")
    assert code == 0 and "1 passed, 1 deselected" in out, out
    code, out = _pytest(pytester, "-q", "-k", "redeem and not agents")
    assert code == 5 and "2 deselected" in out, out
