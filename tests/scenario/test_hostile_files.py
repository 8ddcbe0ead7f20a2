"""Hostile scenario files (issue 14, finding 10): billion laughs, merge bombs, huge files,
huge integers, lone surrogates and deep nesting are refused with exit 2, the file named, in
bounded memory and time, never a traceback. A Hypothesis fuzz of the loader with malformed
YAML holds the same (bounded in the fast suite, more under ``-m slow``)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.cli import main
from clearing_sim.scenario import source
from clearing_sim.scenario.errors import ScenarioError
from clearing_sim.scenario.loader import parse_scenario
from clearing_sim.scenario.source import TEXT_CHARS_MAX, VALUES_MAX
from tests.scenario.kit import BASE

#: Peak traced memory allowed for refusing any hostile file (the issue measured 880 MB).
MEMORY_MAX_BYTES = 64 << 20
TRIED = {"files": 0, "tracebacks": 0}
ROOT = Path(__file__).resolve().parents[2]
ADDRESS_SPACE_MAX = 3 << 30  # room for the CLI's imports (numpy, pandas), not for /dev/zero


def _laughs(levels: int = 9) -> str:
    lines = ["scenario: lol", 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    lines.append(f"steps: [*l{levels}]")
    return "\n".join(lines) + "\n"


def _merge_bomb(levels: int = 40) -> str:
    lines = ["scenario: m", "m0: &m0 {a: 1, b: 2}"]
    for i in range(1, levels + 1):
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}], k: [*m{i - 1}, *m{i - 1}, *m{i - 1}]}}")
    return "\n".join(lines) + "\nsteps: []\n"


HOSTILE = {
    "billion-laughs.yaml": (_laughs(), "aliases"),
    "merge-bomb.yaml": (_merge_bomb(), "aliases"),
    "recursive-alias.yaml": ("scenario: r\nsteps: &s [*s]\n", "aliases"),
    "digits.yaml": ("scenario: d\nworld: {seed: " + "9" * 5000 + "}\nsteps: []\n", "digits"),
    "surrogate-name.yaml": ('scenario: "Evil\\ud800"\nsteps: []\n', "surrogate"),
    "surrogate-key.yaml": ('scenario: s\n"k\\udfff": 1\nsteps: []\n', "surrogate"),
    "deep.yaml": ("scenario: x\nsteps: " + "[" * 20000 + "\n", "nested"),
    "deep-block.yaml": ("scenario: x\nsteps: \n" + "- " * 5000 + "x\n", "nested"),
    "huge.yaml": ("scenario: big\nsteps:\n" + "  - advance: 1ms\n" * 400_000, "bytes"),
}


def _refused(text: str, name: str = "f.yaml") -> tuple[ScenarioError, int]:
    tracemalloc.start()
    try:
        with pytest.raises(ScenarioError) as caught:
            parse_scenario(text, name)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return caught.value, peak


@pytest.mark.parametrize("name", sorted(set(HOSTILE) - {"huge.yaml"}))
def test_a_hostile_file_is_refused_in_bounded_memory(name: str) -> None:
    text, word = HOSTILE[name]
    error, peak = _refused(text, name)
    assert all(line.startswith(name) for line in error.lines())
    assert word in " ".join(error.lines()) or (word == "digits" and "30 digits" in str(
        error.lines())), error.lines()
    assert peak < MEMORY_MAX_BYTES, peak


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_validate_and_run_exit_2_naming_the_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(HOSTILE[name][0], encoding="utf-8")
    for command in ("validate", "run"):
        result = CliRunner().invoke(main, [command, str(path)])
        assert result.exit_code == 2, (command, result.output)
        assert str(path) in result.output and "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def _limited() -> None:
    """The child's address space capped: an unbounded read dies of MemoryError, not the box."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_MAX, ADDRESS_SPACE_MAX))


@pytest.mark.parametrize("args", [["validate"], ["run"], ["serve", "--port", "0", "--world"],
                                  ["workload"], ["sweep", "--out", "/tmp/never-written"]],
                         ids=["validate", "run", "serve", "workload", "sweep"])
def test_an_endless_file_is_refused_after_its_bound(args: list[str]) -> None:
    """Finding 10, class-wide: a file whose size says nothing (``/dev/zero``, a device or a
    pipe) was read whole before the size rule applied (MemoryError traceback); now at most
    256 KiB and one byte are read: exit 2, the file named, no traceback."""
    result = subprocess.run(
        [sys.executable, "-m", "clearing_sim.cli", *args, "/dev/zero"], capture_output=True,
        text=True, timeout=120, preexec_fn=_limited, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-2000:]
    assert "/dev/zero" in output and "256 KiB" in output and "Traceback" not in output


@pytest.mark.parametrize("args", [["validate"], ["run"], ["workload"],
                                  ["sweep", "--out", "/tmp/never-written"]],
                         ids=["validate", "run", "workload", "sweep"])
def test_a_named_pipe_nobody_writes_to_is_an_empty_file_not_a_hang(
        args: list[str], tmp_path: Path) -> None:
    """A FIFO without a writer blocked the loader's open() forever; it is opened without
    blocking and reads as empty (a pipe with a writer, as ``<(...)`` gives, reads whole).
    (``serve --world`` reads the same way; an empty world file serves an empty world.)"""
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    result = subprocess.run(
        [sys.executable, "-m", "clearing_sim.cli", *args, str(fifo)], capture_output=True,
        text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-2000:]
    assert "fifo.yaml" in output and "Traceback" not in output


def test_the_bounds_are_far_above_any_shipped_file() -> None:
    root = Path(__file__).resolve().parents[2] / "scenarios"
    assert max(p.stat().st_size for p in root.glob("*.yaml")) * 8 < TEXT_CHARS_MAX
    assert VALUES_MAX >= 100_000


# the fuzzer -------------------------------------------------------------------------------
_PIECES = st.sampled_from([
    "&a ", "*a", "*b", "&b ", "<<: *a", "<<: [*a, *b]", "[", "]", "{", "}", ",", ": ", "- ",
    "\n", "\n  ", "\n    ", '"\\ud800"', '"\\udfff x"', "'e\u0301'", "9" * 40, "0x" + "f" * 40,
    "1:2:3:4:5:6", "!!python/object:os.system", "!!binary aGk=", "!!set {a}", "? ", "|\n  x",
    ">-\n  y", "~", ".nan", ".inf", "-.inf", "2026-01-01", "${x}", "%YAML 1.1\n---\n", "---\n",
    "...\n", "\t", "\x00", "\ufeff", "#c\n", "scenario: x\n", "steps:\n", "world:\n  seed: ",
])


@st.composite
def _texts(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        lines = BASE.splitlines()
        at = draw(st.integers(0, len(lines) - 1))
        piece = "".join(draw(st.lists(_PIECES | st.text(max_size=8), min_size=1, max_size=6)))
        lines.insert(at, piece) if draw(st.booleans()) else lines.__setitem__(at, piece)
        return "\n".join(lines) + "\n"
    return "".join(draw(st.lists(_PIECES | st.text(max_size=10), max_size=30)))


def _load(text: str) -> None:
    TRIED["files"] += 1
    try:
        parse_scenario(text, "f.yaml")
    except ScenarioError as error:
        assert error.lines() and all(line.startswith("f.yaml") for line in error.lines())
    except BaseException:
        TRIED["tracebacks"] += 1
        raise


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(text=_texts())
def test_malformed_yaml_is_loaded_or_refused_never_a_traceback(text: str) -> None:
    _load(text)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_texts())
def test_malformed_yaml_deeper(text: str) -> None:
    _load(text)


# libyaml and the Python loader read alike (issue 30, section 3) ---------------------------
def _outcome(text: str, fast: bool) -> tuple[str, object]:
    """What loading ``text`` answers with libyaml first (``fast``) or the Python loader only:
    the scenario, or every line of the error (file, line, column and message)."""
    with pytest.MonkeyPatch.context() as patch:
        if not fast:
            patch.setattr(source, "FAST_LOADER", None)
        try:
            return "loaded", parse_scenario(text, "f.yaml")
        except ScenarioError as error:
            return "refused", error.lines()


needs_libyaml = pytest.mark.skipif(source.FAST_LOADER is None, reason="PyYAML without libyaml")


@needs_libyaml
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(text=_texts())
def test_malformed_yaml_reads_the_same_with_libyaml_and_the_python_loader(text: str) -> None:
    """The fuzz above, loaded twice: every error names the same file, line, column and
    words, every loaded file is the same scenario."""
    assert _outcome(text, fast=True) == _outcome(text, fast=False)


@needs_libyaml
@pytest.mark.parametrize("name", sorted(set(HOSTILE) - {"huge.yaml"}))
def test_hostile_files_read_the_same_with_libyaml_and_the_python_loader(name: str) -> None:
    text = HOSTILE[name][0]
    assert _outcome(text, fast=True) == _outcome(text, fast=False)


@needs_libyaml
def test_libyamls_own_wording_would_differ_so_a_refused_file_is_read_again() -> None:
    """The comparison fails on a loader that words syntax errors with libyaml's messages:
    libyaml says 'did not find expected key' where the Python loader says 'expected <block
    end>, but found ...', so without the second reading the messages would change."""
    text = "scenario: x\nsteps:\n  - a: 1\n b: 2\n"
    fast_only = yaml.CSafeLoader(text)
    with pytest.raises(yaml.YAMLError) as libyaml_error:
        fast_only.get_single_node()
    fast_only.dispose()
    refused = _outcome(text, fast=False)
    assert refused[0] == "refused"
    assert str(libyaml_error.value.problem) not in "".join(refused[1])  # type: ignore[arg-type, attr-defined]
    assert _outcome(text, fast=True) == refused
