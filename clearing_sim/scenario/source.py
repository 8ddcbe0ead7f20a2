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
events (``_OnePass``): data, marks, the depth guard and the value count together, no node
graph and no second parse. Anything else it meets sends the file the full way above
(``_read``, ``_expanded``, ``_Walker``),
which words every problem, so the one pass never words one (``tests/scenario/
test_source.py`` compares the two ways; ``tests/scenario/test_load_pins.py`` pins what
every shipped file reads to). A ``Document`` keeps the parsers' marks (0-based) and makes
a 1-based ``Location`` only for what is asked of ``locate``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any, NamedTuple, Protocol

import yaml
from attrs import frozen
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from clearing_sim.scenario.errors import Location, Problem, ScenarioInvalid
from clearing_sim.service.body import text_problem

__all__ = ["DEPTH_MAX", "FAST_LOADER", "INT_DIGITS_MAX", "TEXT_CHARS_MAX", "VALUES_MAX",
           "Document", "FieldPath", "Mark", "field_path", "iter_paths", "parse_yaml"]


def _fast_loader() -> type[yaml.CSafeLoader] | None:
    base: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)
    if base is None:
        return None

    class Loader(base):  # type: ignore[valid-type, misc]
        """libyaml's safe loader, its composer resolving a plain scalar's tag once per
        distinct text (``_plain_tag``) instead of once per scalar."""

        def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
            if kind is ScalarNode and implicit[0]:
                return _plain_tag(value)
            tag: str = super().resolve(kind, value, implicit)
            return tag

    return Loader


#: libyaml's safe loader where PyYAML has it (None: the Python loader reads every file)
FAST_LOADER: type[yaml.CSafeLoader] | None = _fast_loader()

TEXT_CHARS_MAX = 1 << 18  # 256 KiB: sixteen times the largest shipped scenario file
VALUES_MAX = 100_000  # values after alias and merge expansion
DEPTH_MAX = 64  # nested lists and mappings; a scenario's deepest is under 10
INT_DIGITS_MAX = 30
_INT = "tag:yaml.org,2002:int"

FieldPath = tuple[str | int, ...]

_STR = "tag:yaml.org,2002:str"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"
_NULL = "tag:yaml.org,2002:null"
_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_SCALAR_TAGS = ("tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
                "tag:yaml.org,2002:float", _STR)


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


class Mark(Protocol):
    """Where a parser saw a node: 0-based, as both of PyYAML's parsers keep it."""

    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...


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


def _scalar_value(constructor: SafeConstructor, node: ScalarNode) -> tuple[Any, str | None]:
    """A scalar's value, or None and why it cannot be one (the problem's words)."""
    why = text_problem(node.value)
    if why is not None:
        return None, f"the text {why}"
    if node.tag in (_STR, _TIMESTAMP):
        return node.value, None  # what the constructor answers for a string, without its calls
    if node.tag not in _SCALAR_TAGS:
        return None, (f"YAML tag {node.tag} is not allowed here; "
                      "expected plain JSON values (strings, numbers, booleans, null)")
    if node.tag == _INT and sum(c.isdigit() for c in node.value) > INT_DIGITS_MAX:
        return None, f"an integer of more than {INT_DIGITS_MAX} digits"
    try:
        value = constructor.construct_object(node, deep=True)
    except (ConstructorError, ValueError) as error:
        return None, f"cannot be read: {str(error)[:200]}"
    if isinstance(value, float) and not math.isfinite(value):
        return None, f"expected a finite number, got {node.value}"
    return value, None


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
        value, why = _scalar_value(self._constructor, node)
        if why is not None:
            self.report(node, path, why)
        return value

    def _mapping(self, node: MappingNode, path: FieldPath) -> dict[str, Any]:
        explicit = sum(1 for key, _ in node.value if key.tag != _MERGE)
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
            if not isinstance(key_node, ScalarNode) or key_node.tag == "tag:yaml.org,2002:null":
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


class _Recording:
    """The marks the walk of an anchored node writes (paths relative to it, in order, a
    key's mark or a value's), to be written again wherever an alias walks it again."""

    __slots__ = ("count", "merges", "name", "start", "writes")

    def __init__(self, name: str, start: int, count: int) -> None:
        self.name, self.start, self.count = name, start, count
        self.writes: list[tuple[FieldPath, Mark, bool]] = []
        self.merges = False  # a merge key inside: the full way walks it otherwise again


class _Anchor(NamedTuple):
    value: Any
    writes: list[tuple[FieldPath, Mark, bool]]
    size: int  # values and keys, as ``_expanded`` counts them
    depth: int  # the longest path inside
    merges: bool


class _OnePass:
    """A plain file read in one pass over libyaml's events: the data and every mark, with
    the depth guard and the value count on the way; no node graph, no second parse.

    It reads only what needs no judgement: no tag, non-string or null key, duplicate key,
    non-canonical text, unreadable or oversized number, a mapping at the top, one document;
    an alias only to a node read before that holds no merge key, a merge key only first in
    its mapping and naming such a mapping. Anything else answers ``None`` and
    ``parse_yaml`` reads the file the full way (``_read`` and ``_Walker``), which words
    every problem; so this pass never words one, and what it answers is what the full way
    answers (``tests/scenario/test_load_pins.py``, ``tests/scenario/test_source.py``). An
    alias writes again the marks its anchor's walk wrote, as the walker walks the anchored
    node again: a value's mark only where none is yet (a merged value keeps its anchor's),
    a key's always."""

    def __init__(self, loader: type[yaml.CSafeLoader]) -> None:
        self.loader = loader
        self.values: dict[FieldPath, Mark] = {}
        self.keys: dict[FieldPath, Mark] = {}
        self._constructor = SafeConstructor()
        self.anchors: dict[str, _Anchor | None] = {}  # None: still open
        self.open: list[_Recording] = []  # the anchors around the current event

    def read(self, text: str) -> Any:
        """The document's data, or ``None`` for a text this pass leaves to the full way."""
        parser = self.loader(text)
        try:
            return self._events(parser)
        except yaml.YAMLError:
            return None  # the full way words it as the Python loader does
        finally:
            parser.dispose()

    def _scalar(self, event: Any) -> Any:
        """The scalar's value, or ``_LEAVE`` where the full way has something to say."""
        text = event.value
        tag = _plain_tag(text) if event.implicit[0] else _STR  # quoted: a string
        if tag == _STR and (text.isascii() or text_problem(text) is None):
            return text  # most are: no node made, no call (ASCII is canonical)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        value, why = _scalar_value(self._constructor, node)
        return _LEAVE if why is not None else value

    def _record(self, path: FieldPath, mark: Mark, key: bool) -> None:
        for recording in self.open:
            recording.writes.append((path[recording.start:], mark, key))

    def _replay(self, writes: list[tuple[FieldPath, Mark, bool]], at: FieldPath) -> None:
        values, keys = self.values, self.keys
        for relative, mark, key in writes:
            path = at + relative
            if key:
                keys[path] = mark
            elif path not in values:
                values[path] = mark
            if self.open:
                self._record(path, mark, key)

    def _close(self, value: Any, count: int) -> None:
        recording = self.open.pop()
        depth = max(len(path) for path, _, _ in recording.writes)
        self.anchors[recording.name] = _Anchor(value, recording.writes,
                                               count - recording.count, depth,
                                               recording.merges)

    def _alias(self, event: Any, at: FieldPath, mapping: bool = False) -> _Anchor | None:
        """What an alias at ``at`` names, its marks written; None where the full way must
        read it (undefined, still open, holding a merge key, too deep, not a mapping to
        merge)."""
        if type(event) is not yaml.AliasEvent or event.anchor is None:
            return None
        found = self.anchors.get(event.anchor)
        if found is None or found.merges or len(at) + found.depth > DEPTH_MAX or (
                mapping and type(found.value) is not dict):
            return None
        self._replay(found.writes[1:] if mapping else found.writes, at)
        return found

    def _merge(self, event: Any, path: FieldPath,
               container: dict[str, Any]) -> tuple[set[str], int] | None:
        """A merge key's pairs put first in ``container``, as ``flatten_mapping`` puts them;
        the keys merged and how many values the merge key and its source count, or None."""
        found = self._alias(event, path, mapping=True)
        if found is None:
            return None
        for key, value in found.value.items():
            container[key] = _copy(value)
        for recording in self.open:
            recording.merges = True
        return set(found.value), 1 + found.size

    def _events(self, parser: yaml.CSafeLoader) -> Any:
        get: Callable[[], Any] = parser.get_event  # events typed loosely: read by their kind
        get()  # the stream's start
        if type(get()) is not yaml.DocumentStartEvent:
            return None  # an empty file
        first: Any = get()
        if type(first) is not _MAP_START or first.anchor is not None or first.tag is not None:
            return None  # the full way says what a document that is not a mapping is
        root: dict[str, Any] = {}
        values, keys, opened = self.values, self.keys, self.open
        assert first.start_mark is not None  # libyaml marks every event
        values[()] = first.start_mark
        #: the collections around ``container``, each with its keys merged and its anchor
        outer: list[tuple[Any, FieldPath, set[str] | None, _Recording | None]] = []
        container: Any = root
        path: FieldPath = ()
        merged: set[str] | None = None  # keys a merge put in ``container``, not yet written
        anchor: _Recording | None = None  # the anchor on ``container``
        at: Any = _KEY  # in a mapping: the path of the value awaited, or _KEY while a key
        # is awaited; in a list: None
        count = 1
        while True:
            event = get()
            kind = type(event)
            if kind is _MAP_END or kind is _SEQ_END:
                if anchor is not None:
                    self._close(container, count)
                if not outer:
                    break
                container, path, merged, anchor = outer.pop()
                at = _KEY if type(container) is dict else None
                continue
            if kind is not yaml.AliasEvent and event.tag is not None:
                return None
            if at is _KEY:
                key = event.value if kind is _SCALAR and event.anchor is None else None
                if key is None or not (key.isascii() or text_problem(key) is None):
                    return None
                tag = _plain_tag(key) if event.implicit[0] else _STR
                if tag == _MERGE and not container and merged is None:
                    merge = self._merge(get(), path, container)
                    if merge is None:
                        return None
                    merged, size = merge
                    count += size
                    continue
                if tag in (_NULL, _MERGE) or (key in container and (
                        merged is None or key not in merged)):
                    return None
                if merged is not None:
                    merged.discard(key)
                at = (*path, key)
                keys[at] = event.start_mark
                if opened:
                    self._record(at, event.start_mark, True)
                count += 1  # a key is a value to the count, as ``_expanded`` counts it
                continue
            here = (*path, len(container)) if at is None else at
            if kind is yaml.AliasEvent:
                found = self._alias(event, here)
                if found is None:
                    return None
                count += found.size
                value = _copy(found.value)
            else:
                if event.anchor is not None:
                    if event.anchor in self.anchors:
                        return None  # a second anchor of one name: the composer's error
                    self.anchors[event.anchor] = None
                    opened.append(_Recording(event.anchor, len(here), count))
                count += 1
                if here not in values:
                    values[here] = event.start_mark
                if opened:
                    self._record(here, event.start_mark, False)
                value = self._scalar(event) if kind is _SCALAR else {} if kind is _MAP_START \
                    else []
            if value is _LEAVE or count > VALUES_MAX or (
                    kind is not _SCALAR and kind is not yaml.AliasEvent
                    and len(outer) + 2 > DEPTH_MAX):  # root: depth 1
                return None
            if at is None:
                container.append(value)
            else:
                container[here[-1]] = value
            if kind is _MAP_START or kind is yaml.SequenceStartEvent:
                outer.append((container, path, merged, anchor))
                container, path, merged = value, here, None
                anchor = opened[-1] if event.anchor is not None else None
                at = _KEY if kind is _MAP_START else None
                continue
            if event.anchor is not None and kind is _SCALAR:
                self._close(value, count)
            if at is not None:
                at = _KEY
        if type(get()) is not yaml.DocumentEndEvent or type(get()) is not yaml.StreamEndEvent:
            return None  # a second document
        return root


def _copy(value: Any) -> Any:
    """A fresh copy of read data, as the walker builds a value anew at every alias."""
    if type(value) is dict:
        return {key: _copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy(item) for item in value]
    return value


@lru_cache(maxsize=4096)
def _plain_tag(text: str) -> str:
    """The tag PyYAML's resolver gives a plain (unquoted, untagged) scalar: the same texts
    recur in every file (keys above all), so each is resolved once per process."""
    tag: str = _RESOLVER.resolve(ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag


_RESOLVER = Resolver()  # the resolver of both loaders; it keeps no state for a scalar
_SCALAR, _MAP_START, _MAP_END = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.MappingEndEvent
_SEQ_END = yaml.SequenceEndEvent
_KEY = object()  # a mapping awaits its next key
_LEAVE = object()  # a value the one pass leaves to the full way


def _one_pass(text: str) -> Document | None:
    if FAST_LOADER is None or not _plain(text):
        return None
    reading = _OnePass(FAST_LOADER)
    data = reading.read(text)
    return None if data is None else Document("", data, reading.values, reading.keys)


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
