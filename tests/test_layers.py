"""The package's layers, read from its imports (issue 32: "Every package imports only packages
below it, and no circle of modules remains ... A test walks the imports and fails on a circle
or an upward import, naming it, with an allowlist for a circle kept on purpose").

Every module of ``clearing_sim`` is parsed with ``ast`` (nothing is imported) and each import
it makes counts: at the top, inside functions, under ``TYPE_CHECKING``, relative or absolute.
``import a.b`` imports ``a.b``; ``from a import b`` imports the module ``a.b`` when there is
one, else ``a`` (a name defined in ``a``). A package's ``__init__`` is the package's own
module (``clearing_sim.http``); importing a submodule does not count as importing its parent
package. Imports through strings (``importlib.import_module``, the CLI's ``LAZY_COMMANDS``)
are not seen.

Two checks:

- **circles**: every strongly connected component of the module graph with more than one
  module (Tarjan) fails, naming its modules and one import line for each of its edges, unless
  it is in ``ALLOWED_CIRCLES`` (kept on purpose, with the reason, which each of its modules'
  docstrings must also give) or, exactly, in ``PENDING`` (circles another branch of issue 32
  breaks; reported as an expected failure until that branch lands, then removed by whoever
  merges it: a ``PENDING`` entry no longer found fails, so the list cannot outlive its circle).
- **layers**: ``LAYERS`` lists every package and top-level module, lowest first; an import of a
  module in a higher layer fails, naming both modules, the layer of each and the import line.
  A module is in the layer of its longest listed prefix, so a door that lives inside a package
  (``scenario.pytest_plugin``, ``conformance.cli``) is listed with the doors. Modules of one
  layer may import each other (the circle check still applies). A module in no layer fails.

The walker itself is checked on throwaway packages built in ``tmp_path``: a circle closed only
by an import inside a function, one closed only under ``TYPE_CHECKING``, a relative import, an
upward import, an allowlisted circle.
"""

from __future__ import annotations

import ast
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pytest
from attrs import frozen

import clearing_sim

#: The layers, lowest first: a module may import its own layer and the layers below it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # what imports nothing of the package: the root, the command lines' shared helpers, the
    # bounded readers of what comes from outside, the browser a test drives
    ("helpers", ("clearing_sim", "clearing_sim.commands", "clearing_sim.testing.browser",
                 "clearing_sim.untrusted")),
    ("domain", ("clearing_sim.domain",)),
    ("sim", ("clearing_sim.sim",)),
    ("service", ("clearing_sim.service",)),
    # public helpers over a world and its API (webhook receivers, a transaction's records on
    # its time axis, the demo world, the served world a test suite starts)
    ("world readers", ("clearing_sim.commands.demo", "clearing_sim.stories.delivery_index",
                       "clearing_sim.stories.delivery_log",
                       "clearing_sim.stories.timeline", "clearing_sim.testing",
                       "clearing_sim.webhooks")),
    ("transport", ("clearing_sim.serving", "clearing_sim.tls")),
    # the receiver kit and the report every kit writes
    ("conformance", ("clearing_sim.conformance",)),
    # real issuers: the HTTP gateway, the reference gateway, the issuer kit
    ("gateway", ("clearing_sim.gateway",)),
    ("scenario", ("clearing_sim.scenario",)),
    # analysts' tools; a transaction's story and the report pages of scenario runs
    ("analysis", ("clearing_sim.analysis", "clearing_sim.stories")),
    ("http", ("clearing_sim.http",)),
    ("doors", ("clearing_sim.__main__", "clearing_sim.cli", "clearing_sim.conformance.cli",
               "clearing_sim.pytest_fixtures", "clearing_sim.scenario.pytest_plugin",
               "clearing_sim.testing.fixtures")),
)

#: Circles kept on purpose: the modules, and why (each module's docstring says so too).
ALLOWED_CIRCLES: dict[frozenset[str], str] = {}

#: Circles that another branch of issue 32 breaks (simseams: sim/, servicecirc: service/ and
#: scenario's readers); expected failures until it lands, then removed.
PENDING: tuple[frozenset[str], ...] = ()


@frozen
class Import:
    """One import of ``target`` by ``source``, at ``line`` of its file (the line's text)."""

    source: str
    target: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line}: {self.text})"


def modules_of(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package at ``root`` (a folder), by dotted name."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _known(name: str, modules: Mapping[str, Path]) -> str | None:
    """``name`` if it is a module, else its longest prefix that is one (None: not ours)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
              modules: Mapping[str, Path]) -> set[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return {known for name in names if (known := _known(name, modules)) is not None}
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[:len(anchor) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    found: set[str] = set()
    for alias in node.names:
        whole = f"{base}.{alias.name}"
        known = whole if whole in modules else _known(base, modules)
        if known is not None:
            found.add(known)
    return found


def imports_of(modules: Mapping[str, Path]) -> list[Import]:
    """Every import between the modules, each (source, target) pair once, at its first line."""
    edges: dict[tuple[str, str], Import] = {}
    for module, path in sorted(modules.items()):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source, str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in sorted(_imported(node, module, path.name == "__init__.py", modules)):
                if target == module:
                    continue
                text = " ".join((ast.get_source_segment(source, node) or "").split())
                found = Import(module, target, node.lineno,
                               text.replace("( ", "(").replace(", )", ")"))
                key = (module, target)
                if key not in edges or edges[key].line > found.line:
                    edges[key] = found
    return sorted(edges.values(), key=lambda i: (i.source, i.target))


def circles(nodes: Iterable[str], edges: Sequence[Import]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    after: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        after[edge.source].append(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = after[node]
            if child < len(targets):
                work.append((node, child + 1))
                target = targets[child]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def layer_of(module: str, layers: Sequence[tuple[str, tuple[str, ...]]]) -> int | None:
    """The index of the layer whose longest listed name is a prefix of ``module``."""
    best: tuple[int, int] | None = None
    for number, (_, names) in enumerate(layers):
        for name in names:
            covers = module == name or module.startswith(name + ".")
            if covers and (best is None or len(name) > best[0]):
                best = (len(name), number)
    return None if best is None else best[1]


def circle_problems(edges: Sequence[Import], nodes: Iterable[str],
                    allowed: Mapping[frozenset[str], str],
                    pending: Sequence[frozenset[str]]) -> tuple[list[str], list[str]]:
    """(what fails, the pending circles still present): each circle named with its imports."""
    failing: list[str] = []
    still: list[str] = []
    seen = circles(nodes, edges)
    for component in seen:
        inside = [str(e) for e in edges if e.source in component and e.target in component]
        text = f"circle of {len(component)} modules: {sorted(component)}\n    " \
               + "\n    ".join(inside)
        if component in allowed:
            continue
        (still if component in pending else failing).append(text)
    for gone in pending:
        if gone not in seen:
            failing.append(f"PENDING circle no longer found (remove it): {sorted(gone)}")
    return failing, still


def layer_problems(edges: Sequence[Import], nodes: Iterable[str],
                   layers: Sequence[tuple[str, tuple[str, ...]]]) -> list[str]:
    """Each module in no layer, and each import of a module in a higher layer."""
    problems = [f"{module} is in no layer: add it to LAYERS"
                for module in sorted(nodes) if layer_of(module, layers) is None]
    for edge in edges:
        low, high = layer_of(edge.source, layers), layer_of(edge.target, layers)
        if low is not None and high is not None and high > low:
            problems.append(f"upward import, {layers[low][0]} -> {layers[high][0]}: {edge}")
    return problems


def docstring_problems(modules: Mapping[str, Path],
                       allowed: Mapping[frozenset[str], str]) -> list[str]:
    """Each module of an allowlisted circle whose docstring does not give the reason."""
    problems = []
    for component, reason in allowed.items():
        for module in sorted(component):
            doc = ast.get_docstring(ast.parse(modules[module].read_text(encoding="utf-8")))
            if reason not in " ".join((doc or "").split()):
                problems.append(f"{module}'s docstring does not say why its circle is kept: "
                                f"{reason!r}")
    return problems


PACKAGE_ROOT = Path(clearing_sim.__file__).parent
MODULES = modules_of(PACKAGE_ROOT, "clearing_sim")
EDGES = imports_of(MODULES)


def test_no_circle_of_modules_remains_but_those_kept_on_purpose() -> None:
    failing, still = circle_problems(EDGES, MODULES, ALLOWED_CIRCLES, PENDING)
    assert not failing, "\n".join(failing)
    if still:
        pytest.xfail("circles another branch of issue 32 breaks:\n" + "\n".join(still))


def test_every_module_imports_only_its_layer_and_those_below() -> None:
    problems = layer_problems(EDGES, MODULES, LAYERS)
    assert not problems, "\n".join(problems)


def test_each_circle_kept_on_purpose_says_why_in_its_modules_docstrings() -> None:
    problems = docstring_problems(MODULES, ALLOWED_CIRCLES)
    assert not problems, "\n".join(problems)


# --- the walker, on throwaway packages --------------------------------------------------------


def _package(tmp_path: Path, files: Mapping[str, str]) -> dict[str, Path]:
    root = tmp_path / "toy"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return modules_of(root, "toy")


def test_a_circle_closed_inside_a_function_is_found_and_named(tmp_path: Path) -> None:
    modules = _package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "from toy.low import b\n",
        "low/b.py": "def later():\n    from toy.low.a import thing\n    return thing\n",
    })
    failing, still = circle_problems(imports_of(modules), modules, {}, ())
    assert still == [] and len(failing) == 1
    assert "['toy.low.a', 'toy.low.b']" in failing[0]
    assert "toy.low.b -> toy.low.a (line 2: from toy.low.a import thing)" in failing[0]


def test_a_circle_closed_only_under_type_checking_is_found(tmp_path: Path) -> None:
    modules = _package(tmp_path, {
        "__init__.py": "",
        "world.py": "from toy import part\n",
        "part.py": ("from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    from toy.world import World\n"),
    })
    assert circles(modules, imports_of(modules)) == [frozenset({"toy.world", "toy.part"})]


def test_relative_imports_resolve_and_from_a_package_import_a_module_counts_the_module(
        tmp_path: Path) -> None:
    modules = _package(tmp_path, {
        "__init__.py": "from .pkg import api\n",
        "pkg/__init__.py": "from . import api\nfrom .api import handle\n",
        "pkg/api.py": "from ..pkg import context\nfrom .. import VERSION\n",
        "pkg/context.py": "from toy.pkg import api\n",
    })
    found = {(e.source, e.target) for e in imports_of(modules)}
    assert found == {("toy", "toy.pkg.api"), ("toy.pkg", "toy.pkg.api"),
                     ("toy.pkg.api", "toy.pkg.context"), ("toy.pkg.api", "toy"),
                     ("toy.pkg.context", "toy.pkg.api")}
    # the package's own __init__ counts when it is imported by name (``from .. import VERSION``)
    assert circles(modules, imports_of(modules)) == [frozenset({"toy", "toy.pkg.api",
                                                                 "toy.pkg.context"})]


def test_an_upward_import_and_a_module_in_no_layer_are_named(tmp_path: Path) -> None:
    modules = _package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/rule.py": "def f():\n    from toy.high import door\n",
        "high/__init__.py": "",
        "low/value.py": "",
        "high/door.py": "from toy.low import value\n",
        "loose.py": "",
    })
    layers = (("base", ("toy",)), ("low", ("toy.low",)), ("high", ("toy.high",)))
    problems = layer_problems(imports_of(modules), modules, layers)
    assert problems == ["upward import, low -> high: toy.low.rule -> toy.high.door "
                        "(line 2: from toy.high import door)"]
    assert layer_problems(imports_of(modules), modules, layers[1:]) == [
        "toy is in no layer: add it to LAYERS", "toy.loose is in no layer: add it to LAYERS",
        "upward import, low -> high: toy.low.rule -> toy.high.door "
        "(line 2: from toy.high import door)"]
    # a door inside the low package, listed with the doors, may import up
    assert layer_problems(imports_of(modules), modules,
                          (*layers, ("doors", ("toy.low.rule",)))) == []


def test_an_allowlisted_circle_passes_only_with_its_reason_and_pending_ones_are_exact(
        tmp_path: Path) -> None:
    modules = _package(tmp_path, {
        "__init__.py": "",
        "a.py": '"""A: kept in a circle with b: one grammar."""\nfrom toy import b\n',
        "b.py": '"""B."""\nfrom toy import a\n',
    })
    edges = imports_of(modules)
    pair = frozenset({"toy.a", "toy.b"})
    assert circle_problems(edges, modules, {pair: "one grammar"}, ()) == ([], [])
    assert docstring_problems(modules, {pair: "one grammar"}) == [
        "toy.b's docstring does not say why its circle is kept: 'one grammar'"]
    failing, still = circle_problems(edges, modules, {}, (pair,))
    assert failing == [] and len(still) == 1
    # a pending set that is not exactly the circle found does not excuse it, and fails
    failing, still = circle_problems(edges, modules, {}, (frozenset({"toy.a"}),))
    assert still == [] and len(failing) == 2 and "no longer found" in failing[1]


def test_the_real_graph_fails_an_order_that_puts_a_kit_above_the_shim() -> None:
    """The walker sees this package's real imports, those in functions included: with
    ``conformance`` listed above ``http`` (the order before issue 32), the shim's conformance
    route and the kits' shim are upward imports; ``scenario.stage`` imports the gateway's
    client only inside a function, and that import is seen."""
    names = [name for name, _ in LAYERS]
    swapped = [layer for layer in LAYERS if layer[0] != "conformance"]
    swapped.insert(names.index("http"), ("conformance", ("clearing_sim.conformance",)))
    problems = layer_problems(EDGES, MODULES, swapped)
    assert any("clearing_sim.http.receiver_conformance -> clearing_sim.conformance."
               in problem for problem in problems)
    assert any(e.source == "clearing_sim.scenario.stage"
               and e.target == "clearing_sim.gateway.client" for e in EDGES)
