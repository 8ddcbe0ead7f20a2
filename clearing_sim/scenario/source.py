"""YAML text → plain JSON-like data, keeping the line and column of every node.

Public names: ``Document``, ``FieldPath``, ``Mark``, ``field_path``, ``iter_paths``, ``parse_yaml``,
``TEXT_CHARS_MAX``, ``VALUES_MAX``, ``INT_DIGITS_MAX``, ``DEPTH_MAX``.

PyYAML composes the text into nodes that carry their start marks; this module walks the nodes
itself (instead of ``yaml.safe_load``) so each value and each mapping key keeps its position,
keyed by its field path (a tuple of keys and list indices). It also reports what a plain
``safe_load`` hides: a duplicate key (PyYAML keeps the last one silently), a key that is not
a plain string, and values JSON cannot hold (binary, sets). Unquoted timestamps stay text:
the schema, not YAML 1.1's implicit typing, decides what a field means. Merge keys (``<<``)
work as in YAML 1.1; merged values keep the position of the anchor they come from.

Hostile files are bounded before they cost anything (docs/semantics.md): at most
``TEXT_CHARS_MAX`` characters; at most ``VALUES_MAX`` values once aliases and merges are
expanded, counted on the composed node graph before anything is expanded (so a
"billion laughs" file is refused in milliseconds, in bounded memory); integers of at most
``INT_DIGITS_MAX`` digits; at most ``DEPTH_MAX`` levels of nesting; every string a
canonical one (no lone surrogate, NFC), as the API's body decoder holds them. Each is a
problem at its line, never a traceback.

The text is parsed by libyaml (``yaml.CSafeLoader``, ``FAST_LOADER``) where PyYAML was built
with it, else by PyYAML's Python loader; the depth guard reads either's events. The two
compose the same nodes with the same marks from plain text, but not everywhere: libyaml
takes tabs where the Python scanner refuses them, reads byte order marks and the Unicode
line breaks (NEL, LS, PS) its own way, and marks an empty value at the end of a file with
no last newline a line further. So libyaml reads only a text with none of those
(``_plain``: every shipped scenario file), and a file libyaml refuses is read again by the
Python loader; every problem is worded, and placed, exactly as the Python loader words it,
whichever parser is present (issue 30, section 3;
``tests/scenario/test_hostile_files.py`` compares the two over the malformed-file fuzz).

Most files need none of that: a plain text whose every value reads without a word to say
(no tag, odd key, duplicate or bad scalar; one document, a mapping at the top; aliases and
merge keys of the plain kinds the shipped files use) is read in one pass over libyaml's
events (``scenario/one_pass.py``): data, marks, the depth guard and the value count
together, no node graph and no second parse. Anything else it meets sends the file the
full way above (``_read``, ``_expanded``, ``_Walker``), which words every problem, so the
one pass never words one (``tests/scenario/test_source.py`` compares the two ways;
``tests/scenario/test_load_pins.py`` pins what every shipped file reads to). A
``Document`` keeps the parsers' marks (0-based) and makes a 1-based ``Location`` only for
what is asked of ``locate``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from attrs import frozen
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from clearing_sim.scenario.errors import Location, Problem, ScenarioInvalid
from clearing_sim.scenario.one_pass import read_plain
from clearing_sim.scenario.yaml_scalars import (
    DEPTH_MAX,
    INT_DIGITS_MAX,
    MERGE_TAG,
    NULL_TAG,
    VALUES_MAX,
    FieldPath,
    Mark,
    plain_tag,
    scalar_value,
)
from clearing_sim.service.body import text_problem

__all__ = ["DEPTH_MAX", "FAST_LOADER", "INT_DIGITS_MAX", "TEXT_CHARS_MAX", "VALUES_MAX",
           "Document", "FieldPath", "Mark", "field_path", "iter_paths", "parse_yaml"]


def _fast_loader() -> type[yaml.CSafeLoader] | None:
    base: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)
    if base is None:
        return None

    class Loader(base):  # type: ignore[valid-type, misc]
        """libyaml's safe loader, its composer resolving a plain scalar's tag once per
        distinct text (``yaml_scalars.plain_tag``) instead of once per scalar."""

        def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
            if kind is ScalarNode and implicit[0]:
                return plain_tag(value)
            tag: str = super().resolve(kind, value, implicit)
            return tag

    return Loader


#: libyaml's safe loader where PyYAML has it (None: the Python loader reads every file)
FAST_LOADER: type[yaml.CSafeLoader] | None = _fast_loader()

TEXT_CHARS_MAX = 1 << 18  # 256 KiB: sixteen times the largest shipped scenario file
_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


def field_path(path: FieldPath) -> str:
    """``("steps", 3, "expect", "status")`` → ``steps[3].expect.status``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def _location(node: Node) -> Location:
    return Location(node.start_mark.line + 1, node.start_mark.column + 1)


@frozen(eq=False)
class Document:
    """A parsed file: its data and the position of every value and key, by field path.

    The positions are the parser's own marks, kept as they come (a ``Location`` is made
    only for what ``locate`` is asked: most files are never asked). Marks have no equality
    of their own, so neither has a document: compare its ``data`` and what ``locate``
    answers."""

    path: str
    data: Any
    values: dict[FieldPath, Mark]
    keys: dict[FieldPath, Mark]

    def locate(self, path: FieldPath, *, key: bool = False) -> Location:
        """Where ``path`` is (its key when ``key``); else where its nearest ancestor is."""
        found = self.keys.get(path) if key else None
        end = len(path)
        while found is None and end >= 0:
            found = self.values.get(path[:end])
            end -= 1
        return Location(1, 1) if found is None else Location(found.line + 1, found.column + 1)

    def problem_at(self, path: FieldPath, message: str, *, key: bool = False) -> Problem:
        return Problem(self.path, self.locate(path, key=key), field_path(path), message)


class _Walker:
    def __init__(self, path: str) -> None:
        self.path = path
        self.values: dict[FieldPath, Mark] = {}
        self.keys: dict[FieldPath, Mark] = {}
        self.problems: list[Problem] = []
        self._constructor = SafeConstructor()

    def report(self, node: Node, path: FieldPath, message: str) -> None:
        self.problems.append(Problem(self.path, _location(node), field_path(path), message))

    def walk(self, node: Node, path: FieldPath) -> Any:
        if path not in self.values:
            self.values[path] = node.start_mark
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if node.tag not in _COLLECTION_TAGS:
            self.report(node, path, f"YAML tag {node.tag} is not allowed here; expected a plain "
                        "mapping or list")
            return None
        if isinstance(node, MappingNode):
            return self._mapping(node, path)
        assert isinstance(node, SequenceNode)
        return [self.walk(item, (*path, i)) for i, item in enumerate(node.value)]

    def _scalar(self, node: ScalarNode, path: FieldPath) -> Any:
        value, why = scalar_value(self._constructor, node)
        if why is not None:
            self.report(node, path, why)
        return value

    def _mapping(self, node: MappingNode, path: FieldPath) -> dict[str, Any]:
        explicit = sum(1 for key, _ in node.value if key.tag != MERGE_TAG)
        try:
            self._constructor.flatten_mapping(node)  # resolves << merge keys in place
        except ConstructorError as error:
            mark = error.problem_mark
            where = Location(mark.line + 1, mark.column + 1) if mark else _location(node)
            self.problems.append(Problem(self.path, where, field_path(path),
                                         str(error.problem)))
            return {}
        result: dict[str, Any] = {}
        first: dict[str, Mark] = {}
        merged = len(node.value) - explicit  # merged pairs come first; later ones override
        from_merge: set[str] = set()  # keys whose value so far came from a << merge
        for i, (key_node, value_node) in enumerate(node.value):
            if not isinstance(key_node, ScalarNode) or key_node.tag == NULL_TAG:
                self.report(key_node, path, "a mapping key must be a plain string")
                continue
            key = key_node.value
            here = key_node.start_mark
            why = text_problem(key)
            if why is not None:
                self.report(key_node, path, f"a mapping key {why}")
                continue
            if key in first and key not in from_merge:
                self.report(key_node, (*path, key),
                            f"duplicate key {key!r} (first at line {first[key].line + 1}); "
                            "expected each key once")
                continue
            if i < merged:
                from_merge.add(key)
            else:
                from_merge.discard(key)
            first[key] = here
            self.keys[(*path, key)] = here
            result[key] = self.walk(value_node, (*path, key))
        return result


def _syntax_problem(path: str, error: yaml.YAMLError) -> Problem:
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        where = Location(mark.line + 1, mark.column + 1) if mark else Location(1, 1)
        parts = [p for p in (error.context, error.problem) if p]
        return Problem(path, where, "", "YAML syntax: " + ", ".join(parts))
    return Problem(path, Location(1, 1), "", f"YAML syntax: {error}")


_Loader = type[yaml.SafeLoader] | type[yaml.CSafeLoader]
_STARTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_ENDS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _too_deep(text: str, path: str, loader: _Loader) -> Problem | None:
    """A problem where the nesting first passes ``DEPTH_MAX``, read from the parser's events
    (iterative, unlike the composer, which recurses), or None."""
    depth = 0
    parser = loader(text)  # what yaml.parse does, without a generator frame per event
    try:
        while parser.check_event():
            event = parser.get_event()
            assert event is not None  # check_event said there is one
            kind = type(event)
            if kind in _STARTS:
                depth += 1
                if depth > DEPTH_MAX:
                    mark = event.start_mark
                    where = Location(mark.line + 1, mark.column + 1) if mark else Location(1, 1)
                    return Problem(path, where, "",
                                   f"lists and mappings are nested more than {DEPTH_MAX} deep")
            elif kind in _ENDS:
                depth -= 1
    finally:
        parser.dispose()
    return None


def _compose(text: str, loader_class: _Loader) -> Node | None:
    loader = loader_class(text)
    try:
        node: Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()


#: characters libyaml reads otherwise than the Python loader (tab, BOM, NEL, LS, PS, CR)
_NOT_PLAIN = ("\t", "\ufeff", "\x85", "\u2028", "\u2029", "\r")


def _plain(text: str) -> bool:
    """Whether libyaml reads ``text`` as the Python loader does (see the module's notes)."""
    return text.endswith("\n") and not any(c in text for c in _NOT_PLAIN)


def _read(text: str, path: str) -> Node | None:
    """The composed document, after the depth guard; libyaml first where it is present and
    the text plain, the Python loader otherwise and for a file libyaml refuses (so its
    problem reads as that loader words it)."""
    loaders: tuple[_Loader, ...] = (yaml.SafeLoader,)
    if FAST_LOADER is not None and _plain(text):
        loaders = (FAST_LOADER, yaml.SafeLoader)
    for loader in loaders:
        try:
            deep = _too_deep(text, path, loader)
            if deep is not None:
                raise ScenarioInvalid(path, [deep])
            return _compose(text, loader)
        except yaml.YAMLError as error:
            if loader is not yaml.SafeLoader:
                continue
            raise ScenarioInvalid(path, [_syntax_problem(path, error)]) from None
        except RecursionError:
            raise ScenarioInvalid(path, [Problem(path, Location(1, 1), "", "the YAML is nested "
                                                 "too deeply to read")]) from None
    raise AssertionError("the Python loader answers or raises")


def _expanded(node: Node, sizes: dict[int, int]) -> int:
    """How many values ``node`` stands for once every alias and merge is expanded; each
    distinct node is counted once (``sizes``), so this is linear in the composed graph."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    sizes[id(node)] = VALUES_MAX + 1  # a cycle (a recursive alias) counts as too many
    total = 1
    if isinstance(node, SequenceNode):
        for item in node.value:
            total += _expanded(item, sizes)
            if total > VALUES_MAX:
                break
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            total += _expanded(key, sizes) + _expanded(value, sizes)
            if total > VALUES_MAX:
                break
    sizes[id(node)] = total
    return total


def _too_big(path: str, message: str) -> ScenarioInvalid:
    return ScenarioInvalid(path, [Problem(path, Location(1, 1), "", message)])


def _one_pass(text: str) -> Document | None:
    if FAST_LOADER is None or not _plain(text):
        return None
    found = read_plain(text, FAST_LOADER)
    return None if found is None else Document("", *found)


def parse_yaml(text: str, path: str) -> Document:
    """Parse one YAML document; ``ScenarioInvalid`` with every problem found on the way."""
    if len(text) > TEXT_CHARS_MAX:
        raise _too_big(path, f"the file is {len(text)} characters; at most {TEXT_CHARS_MAX}")
    why = text_problem(text)
    if why is not None and "Normalization" not in why:
        raise _too_big(path, f"the file {why}")
    fast = _one_pass(text)
    if fast is not None:
        return Document(path, fast.data, fast.values, fast.keys)
    node = _read(text, path)
    if node is None:
        raise ScenarioInvalid(path, [Problem(path, Location(1, 1), "",
                                             "the file is empty; expected a mapping with "
                                             "scenario and steps")])
    walker = _Walker(path)
    try:
        if _expanded(node, {}) > VALUES_MAX:
            raise _too_big(path, f"the file stands for more than {VALUES_MAX} values once its "
                                 "aliases and merge keys are expanded")
        data = walker.walk(node, ())
    except RecursionError:
        raise ScenarioInvalid(path, [Problem(path, Location(1, 1), "", "the YAML is nested "
                                             "too deeply to read")]) from None
    if walker.problems:
        raise ScenarioInvalid(path, walker.problems)
    return Document(path, data, walker.values, walker.keys)


def iter_paths(data: Any, path: FieldPath = ()) -> Iterator[tuple[FieldPath, Any]]:
    """Every (path, value) in ``data``, depth first, parents before children."""
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from iter_paths(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from iter_paths(value, (*path, i))
