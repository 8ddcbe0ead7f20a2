"""The body decoder's value check: the same verdict and message as the plain walk it
replaced (every path formatted up front), on any JSON value (docs/semantics.md, "Hostile
input": every string canonical, at most ``DEPTH_MAX`` levels)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain import jsontext
from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.service import body
from clearing_sim.service.body import DEPTH_MAX, text_problem


def _reference_check(value: Any) -> None:
    """The walk as it was before paths were formatted lazily (the reference)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            why = text_problem(item)
            if why is not None:
                raise body._Refused(f"{path or 'the body'} {why}", path or None,
                                    "invalid_string")
        elif isinstance(item, dict | list):
            if depth >= DEPTH_MAX:
                raise body._Refused(f"the body nests arrays and objects more than {DEPTH_MAX} "
                                    "levels deep")
            if isinstance(item, list):
                stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(item))
                continue
            for name, member in item.items():
                at = f"{path}.{name}" if path else name
                why = text_problem(name)
                if why is not None:
                    raise body._Refused(f"a member name {why}", path or None, "invalid_string")
                stack.append((member, at[:200], depth + 1))


def _verdict(check: Any, value: Any) -> tuple[str, str | None, str] | None:
    try:
        check(value)
    except body._Refused as refused:
        return str(refused), refused.param, refused.code
    return None


# ASCII, accented (NFC and not), lone surrogates, long names: every branch of the check
_texts = st.one_of(st.text(max_size=8), st.sampled_from(["e\u0301", "\u00e9", "\ud800", "x" * 250]))
_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_texts, inner, max_size=4)),
    max_leaves=30)


@given(_values)
@settings(max_examples=400)
def test_check_value_same_verdict_as_the_plain_walk(value: Any) -> None:
    assert _verdict(body._check_value, value) == _verdict(_reference_check, value)


def test_check_value_depth_bound_same_verdict() -> None:
    deep: Any = "x"
    for _ in range(DEPTH_MAX + 1):
        deep = {"a": [deep]}
    assert _verdict(body._check_value, deep) == _verdict(_reference_check, deep)
    assert _verdict(body._check_value, deep) is not None


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value] if levels % 2 else {"a": value}
    return value


# integers within the decoder's digit bound, which is checked before the walk
_bodies = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), _texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_texts, inner, max_size=4)),
    max_leaves=30)


@given(st.one_of(_bodies, st.integers(DEPTH_MAX - 2, DEPTH_MAX + 2).map(_deep)),
       st.booleans())
@settings(max_examples=400)
def test_a_body_skipped_as_plain_is_one_the_walk_accepts(value: Any, ascii_only: bool) -> None:
    """Hostile input: a body is not walked only when the walk could refuse nothing (ASCII
    without escapes, few brackets); the decoder's verdict is the walk's on every body."""
    try:
        raw = json.dumps({"v": value}, ensure_ascii=ascii_only).encode()
    except UnicodeEncodeError:  # a lone surrogate is only sent escaped
        return
    decoded = json.loads(raw)
    if body._plain(raw):
        assert _verdict(_reference_check, decoded) is None
    try:
        got: Any = body.parse_json_object(raw)
    except InvalidRequest as refused:
        got = [(p.param, p.code) for p in refused.problems]
    reference = _verdict(_reference_check, decoded)
    assert got == (decoded if reference is None else [(reference[1], reference[2])])


def test_text_problem_ascii_is_canonical_and_others_still_checked() -> None:
    assert text_problem("plain ASCII \x00 text") is None
    assert text_problem("\u00e9") is None
    assert text_problem("e\u0301") == "is not in Unicode Normalization Form C"
    assert "lone surrogate" in (text_problem("a\ud800") or "")


def _outcome(decode: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", decode(text)
    except ValueError as refused:  # JSONDecodeError and _Refused alike
        return type(refused).__name__, str(refused)


_json_texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\ufeff{}", '{"a":1,"a":2}', "NaN", '{"a":-Infinity}', "1" * 40, "{}",
                     '{"a":[1,2', '{"a":1} x', "  [1, {\"b\": null}]  "]),
    _bodies.map(json.dumps))


@given(_json_texts)
@settings(max_examples=400)
def test_the_decoder_made_once_answers_as_json_loads_with_the_hooks(text: str) -> None:
    """The same value, or the same error and message, as ``json.loads`` with the hooks."""
    reference = _outcome(lambda t: json.loads(
        t, parse_constant=jsontext._no_constants, parse_int=jsontext._bounded_int,
        object_pairs_hook=jsontext._no_duplicates), text)
    assert _outcome(jsontext.decode_strict, text) == reference


_SPACE_LIKE = st.lists(st.sampled_from([b" ", b"\t", b"\r", b"\n", b"\x0b", b"\x0c", b"\x1c",
                                         b"\x85", b"\xa0", b"{}", b"{"]), max_size=6)


@given(st.one_of(st.binary(max_size=8), _SPACE_LIKE.map(b"".join)))
def test_an_empty_body_is_only_nothing_or_json_whitespace(raw: bytes) -> None:
    """Issue 31 §6 (``POST /sim/v1/reset`` with the body ``\\x0c`` reset the world): a route
    that takes an empty body reads ``{}`` only from bytes JSON itself calls whitespace (RFC
    8259 §2); anything else must parse as a JSON object or is refused."""
    try:
        value = body.parse_json_object(raw, empty_ok=True)
    except InvalidRequest:
        assert raw.strip(b" \t\r\n") and not _is_json_object(raw)
    else:
        assert value == {}
        assert not raw.strip(b" \t\r\n") or _is_json_object(raw)


def _is_json_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw.decode("utf-8")), dict)
    except ValueError:
        return False
