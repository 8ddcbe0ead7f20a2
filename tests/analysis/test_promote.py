"""Gates on the command line and ``sweep promote`` (issue 29 §3, docs/analysis.md): a missed
gate exits 1 naming the parameter set, seed and figure; ``--junit`` has a testcase per gate and
parameter set; a promoted cell passes on its own run and fails once the modelled behaviour (an
issuer's outcome probabilities or latency, the seed) is changed."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from clearing_sim.analysis.cli import sweep, workload
from clearing_sim.analysis.promote import parse_tolerance, pinned_gates
from clearing_sim.analysis.sweeps import SweepResult, load_results
from tests.analysis.conftest import TINY
from tests.analysis.kit import TINY_TEXT, variant
from tests.analysis.test_gates import GATES_SWEEP


def _invoke(command: click.Command, *args: object) -> Result:
    result = CliRunner().invoke(command, [str(a) for a in args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    """``clearing-sim sweep`` of the gates sweep (a ``sometimes`` gate the quiet set misses),
    with ``--junit``; the command's result and its folder."""
    folder = tmp_path_factory.mktemp("gates-cli")
    result = _invoke(sweep, GATES_SWEEP, "--out", folder / "out", "--junit", folder / "j.xml")
    return result, folder


def _param(results: SweepResult, case: str) -> str:
    return str(results.params.loc[results.params["case"] == case, "param_id"].iloc[0])


def test_a_sweep_that_misses_a_sometimes_gate_exits_1_naming_the_cell(
        swept: tuple[Result, Path]) -> None:
    """The quiet set (Ether Pound never silent) never parks on the approval SLA: the
    ``sometimes`` gate misses on it, named with each seed's figure; the silent set passes."""
    result, folder = swept
    results = load_results(folder / "out")
    quiet, silent = _param(results, "quiet"), _param(results, "silent")
    assert result.exit_code == 1, result.output
    missed = [line for line in result.output.splitlines() if line.startswith("gate missed")]
    assert missed == [
        f"gate missed: sometimes 'parking_rate{{cause=approval_sla_exceeded}} > 0' "
        f"({GATES_SWEEP}:14:7: gates.sometimes[0]): parameter set quiet ({quiet}) held on no "
        "seed: seed 0: parking_rate{cause=approval_sla_exceeded} = 0; seed 1: "
        "parking_rate{cause=approval_sla_exceeded} = 0"]
    assert "gates: 3 of 4 held (gate × parameter set); 1 missed" in result.output
    assert silent not in "\n".join(missed)


def test_junit_has_a_testcase_per_gate_and_parameter_set(swept: tuple[Result, Path]) -> None:
    _, folder = swept
    suite = ElementTree.parse(folder / "j.xml").getroot().find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case.find("failure") is not None
             for case in suite.iter("testcase")}
    assert len(cases) == 4 and sum(cases.values()) == 1
    (failed,) = [name for name, failure in cases.items() if failure]
    assert failed.startswith("quiet (") and failed.endswith(
        "sometimes parking_rate{cause=approval_sla_exceeded} > 0")


def test_a_workload_that_misses_an_always_gate_exits_1_naming_seed_and_figure(
        tmp_path: Path) -> None:
    path = variant(tmp_path, "webhooks:", "gates:\n  always: [\"parking_rate{issuer=etherpound}"
                   " < 0.1\", \"transactions > 0\"]\nwebhooks:")
    result = _invoke(workload, path, "--seed", "0", "--junit", tmp_path / "j.xml")
    assert result.exit_code == 1
    assert re.search(r"gate missed: always 'parking_rate\{issuer=etherpound\} < 0.1' \(.*"
                     r"gates.always\[0\]\): workload tiny, seed 0: "
                     r'parking_rate\{issuer="Ether Pound"\} = 0\.375$', result.output, re.M), \
        result.output
    assert "gates: 1 of 2 held" in result.output
    assert (tmp_path / "j.xml").read_bytes().count(b"<testcase ") == 2


def test_a_bad_gate_exits_2_before_the_run(tmp_path: Path) -> None:
    path = variant(tmp_path, "webhooks:", "gates: {sometimes: [\"parked_on_silence > 0\"]}\n"
                   "webhooks:")
    result = _invoke(workload, path)
    assert result.exit_code == 2
    line = TINY_TEXT[:TINY_TEXT.index("webhooks:")].count("\n") + 1
    assert result.output.startswith(f"{path}:{line}:21: gates.sometimes[0]: unknown metric "
                                    "'parked_on_silence'")
    assert "digest" not in result.output


def test_a_workload_files_seed_is_the_default_of_seed(tmp_path: Path) -> None:
    seeded = variant(tmp_path, "horizon: 1h", "seed: 3\nhorizon: 1h")
    digest = _invoke(workload, seeded).output.splitlines()[-1]
    assert digest == _invoke(workload, TINY, "--seed", "3").output.splitlines()[-1]
    assert digest != _invoke(workload, seeded, "--seed", "0").output.splitlines()[-1]


# promote -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def promoted(swept: tuple[Result, Path]) -> tuple[Path, str]:
    """The silent set's seed 1 promoted to a workload file; and that run's digest."""
    _, folder = swept
    out = folder / "out"
    results = load_results(out)
    param = _param(results, "silent")
    target = folder / "promoted.yaml"
    result = _invoke(sweep, "promote", out, "--param", param, "--seed", "1", "--out", target)
    assert result.exit_code == 0, result.output
    return target, results.digests[(param, 1)]


def _run(path: Path, *args: object) -> Result:
    return _invoke(workload, path, *args)


def test_a_promoted_cell_runs_again_and_passes(promoted: tuple[Path, str]) -> None:
    """The promoted file is the cell: same digest, every pinned figure held."""
    path, digest = promoted
    data = yaml.safe_load(path.read_text())
    assert data["seed"] == 1 and data["issuers"]["etherpound"]["behaviour"]["outcomes"][
        "silence"] == 0.5
    result = _run(path)
    assert result.exit_code == 0, result.output
    assert f"digest {digest}" in result.output
    pinned = len(data["gates"]["always"])
    assert f"gates: {pinned} of {pinned} held" in result.output and pinned > 50


@pytest.mark.parametrize(("old", "new"), [
    ("silence: 0.5", "silence: 0.4"),           # an issuer's park probability
    ("median: 30s", "median: 33s"),             # an issuer's approval latency
    ("rate_per_hour: 24", "rate_per_hour: 26"),  # the arrivals
])
def test_a_promoted_cell_fails_when_the_modelled_behaviour_changes(
        promoted: tuple[Path, str], tmp_path: Path, old: str, new: str) -> None:
    path, _ = promoted
    text = path.read_text()
    assert text.count(old) == 1, old
    changed = tmp_path / "changed.yaml"
    changed.write_text(text.replace(old, new))
    result = _run(changed)
    assert result.exit_code == 1, result.output
    assert re.search(r"^gate missed: always '.* between .*' \(.*changed.yaml:\d+:\d+: "
                     r"gates\.always\[\d+\]\): workload tiny, seed 1: ", result.output, re.M)


def test_a_promoted_cell_fails_on_another_seed(promoted: tuple[Path, str]) -> None:
    path, _ = promoted
    for seed in (0, 2):
        result = _run(path, "--seed", seed)
        assert result.exit_code == 1 and f"workload tiny, seed {seed}: " in result.output


def test_promote_prints_the_file_without_out(swept: tuple[Result, Path]) -> None:
    _, folder = swept
    results = load_results(folder / "out")
    param = _param(results, "quiet")
    result = _invoke(sweep, "promote", folder / "out", "--param", param, "--seed", "0",
                     "--tolerance", "0")
    assert result.exit_code == 0
    assert result.output.startswith(f"# Promoted from sweep gates ({GATES_SWEEP}), parameter "
                                    f"set quiet ({param}), seed 0; that run's digest: "
                                    f"{results.digests[(param, 0)]}.")
    pinned = yaml.safe_load(result.output)["gates"]["always"]
    exact = [re.fullmatch(r".* between (\S+) and (\S+)", text) for text in pinned]
    assert all(m is not None and m[1] == m[2] for m in exact)  # 0 %: low = high = the figure


@pytest.mark.parametrize(("args", "message"), [
    (("--param", "000000000000", "--seed", "0"), "has no run of parameter set '000000000000' "
                                                "with seed 0; expected one of: "),
    (("--param", "{quiet}", "--seed", "9"), "with seed 9; expected one of: "),
    (("--param", "{quiet}", "--seed", "0", "--tolerance", "5"),
     "expected a percentage like 1% or 0.5%"),
    (("--param", "{quiet}", "--seed", "0", "--tolerance", "200%"),
     "expected a percentage from 0% to 100%"),
])
def test_promote_refuses_a_cell_it_cannot_find(swept: tuple[Result, Path],
                                               args: tuple[str, ...], message: str) -> None:
    _, folder = swept
    quiet = _param(load_results(folder / "out"), "quiet")
    result = _invoke(sweep, "promote", folder / "out", *(a.format(quiet=quiet) for a in args))
    assert result.exit_code == 2 and message in result.output, result.output


def test_promote_refuses_a_folder_without_results(tmp_path: Path) -> None:
    result = _invoke(sweep, "promote", tmp_path, "--param", "0" * 12, "--seed", "0")
    assert result.exit_code == 2 and "sweep.json" in result.output


def test_promote_help_has_an_example() -> None:
    result = _invoke(sweep, "promote", "--help")
    assert result.exit_code == 0 and "clearing-sim sweep promote " in result.output
    assert "Usage: sweep promote [OPTIONS] RESULTS" in result.output
    assert "sweep promote" in _invoke(sweep, "--help").output


@pytest.mark.parametrize(("text", "share"), [("1%", 0.01), ("0", 0.0), ("0%", 0.0),
                                             (" 2.5 % ", 0.025), ("100%", 1.0)])
def test_tolerance_is_a_percentage(text: str, share: float) -> None:
    assert parse_tolerance(text) == share


def test_pinned_bands_hold_their_figure_and_only_a_close_one(swept: tuple[Result, Path]
                                                             ) -> None:
    """Each band holds the figure it pins; moved by more than the tolerance it misses."""
    from clearing_sim.analysis.gates import check_gates, parse_gate, workload_names

    _, folder = swept
    results = load_results(folder / "out")
    param = _param(results, "silent")
    metrics = results.metrics
    rows = metrics[(metrics["param_id"] == param) & (metrics["seed"] == 0)]
    data = yaml.safe_load(TINY_TEXT)
    texts = pinned_gates(rows, 0.01, data)
    gates = [parse_gate("always", t, workload_names(data)) for t in texts]
    assert all(o.passed for o in check_gates(gates, rows))
    moved = rows.assign(value=rows["value"] * 1.02 + 0.001)
    assert not any(o.passed for o in check_gates(gates, moved))
