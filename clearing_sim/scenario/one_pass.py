"""A scenario file read in one pass over libyaml's events (issue 30, section 3).

Public names: ``read_plain``.

``read_plain`` reads what needs no words: the data, the parser's mark of every value and
key, the depth guard and the value count together, without a node graph or a second parse.
Whatever would need words (see ``_OnePass``) answers ``None``, and ``scenario/source.py``
reads the file its full way, which words every problem.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

from clearing_sim.scenario.yaml_scalars import (
    DEPTH_MAX,
    MERGE_TAG,
    NULL_TAG,
    STR_TAG,
    VALUES_MAX,
    FieldPath,
    Mark,
    plain_tag,
    scalar_value,
)
from clearing_sim.service.body import text_problem

__all__ = ["read_plain"]


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
        get: Callable[[], Any] = parser.get_event  # events typed loosely: read by their kind
        try:
            get()  # the stream's start
            if type(get()) is not yaml.DocumentStartEvent:
                return None  # an empty file
            first: Any = get()
            if type(first) is not _MAP_START or first.anchor is not None \
                    or first.tag is not None:
                return None  # the full way says what a document that is not a mapping is
            assert first.start_mark is not None  # libyaml marks every event
            root = self._mapping(get, first.start_mark)
            if root is None or type(get()) is not yaml.DocumentEndEvent \
                    or type(get()) is not yaml.StreamEndEvent:
                return None  # a second document, or something to word
            return root
        except yaml.YAMLError:
            return None  # the full way words it as the Python loader does
        finally:
            parser.dispose()

    def _scalar(self, event: Any) -> Any:
        """The scalar's value, or ``_LEAVE`` where the full way has something to say."""
        text = event.value
        tag = plain_tag(text) if event.implicit[0] else STR_TAG  # quoted: a string
        if tag == STR_TAG and (text.isascii() or text_problem(text) is None):
            return text  # most are: no node made, no call (ASCII is canonical)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        value, why = scalar_value(self._constructor, node)
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

    def _key(self, event: Any, get: Callable[[], Any], container: dict[str, Any],
             path: FieldPath, merged: set[str] | None) \
            -> tuple[Any, set[str] | None, int] | None:
        """A mapping's key read: the path of its value (``_KEY`` after a merge key, whose
        value is read here), the keys merged into ``container`` and not yet written again,
        and how many values it counts; None where the full way must read it."""
        key = event.value if type(event) is _SCALAR and event.anchor is None else None
        if key is None or not (key.isascii() or text_problem(key) is None):
            return None
        tag = plain_tag(key) if event.implicit[0] else STR_TAG
        if tag == MERGE_TAG and not container and merged is None:
            merge = self._merge(get(), path, container)
            return None if merge is None else (_KEY, *merge)
        if tag in (NULL_TAG, MERGE_TAG) or (key in container and (
                merged is None or key not in merged)):
            return None  # a duplicate key, but one that overrides a merged key
        if merged is not None:
            merged.discard(key)
        at = (*path, key)
        self.keys[at] = event.start_mark
        if self.open:
            self._record(at, event.start_mark, True)
        return at, merged, 1  # a key is a value to the count, as ``_expanded`` counts it

    def _open(self, name: str, at: FieldPath, count: int) -> bool:
        """An anchor's walk recorded from here on; False for a second anchor of one name
        (the composer's error, worded by the full way)."""
        if name in self.anchors:
            return False
        self.anchors[name] = None
        self.open.append(_Recording(name, len(at), count))
        return True

    def _mapping(self, get: Callable[[], Any], mark: Mark) -> dict[str, Any] | None:
        """The top mapping, its start read (at ``mark``), to its end."""
        root: dict[str, Any] = {}
        values, opened = self.values, self.open
        values[()] = mark
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
                read = self._key(event, get, container, path, merged)
                if read is None:
                    return None
                at, merged, counted = read
                count += counted
                continue
            here = (*path, len(container)) if at is None else at
            if kind is yaml.AliasEvent:
                found = self._alias(event, here)
                if found is None:
                    return None
                count += found.size
                value = _copy(found.value)
            else:
                if event.anchor is not None and not self._open(event.anchor, here, count):
                    return None
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
        return root


def _copy(value: Any) -> Any:
    """A fresh copy of read data, as the walker builds a value anew at every alias."""
    if type(value) is dict:
        return {key: _copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy(item) for item in value]
    return value


_SCALAR, _MAP_START, _MAP_END = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.MappingEndEvent
_SEQ_END = yaml.SequenceEndEvent
_KEY = object()  # a mapping awaits its next key
_LEAVE = object()  # a value the one pass leaves to the full way


def read_plain(text: str, loader: type[yaml.CSafeLoader]) \
        -> tuple[Any, dict[FieldPath, Mark], dict[FieldPath, Mark]] | None:
    """``text``'s data and the marks of its values and keys, read by ``loader`` (libyaml)
    in one pass; None for a text whose reading needs words (the full way words them)."""
    reading = _OnePass(loader)
    data = reading.read(text)
    return None if data is None else (data, reading.values, reading.keys)
