"""``compact_encoder`` gives ``json.dumps``'s text byte for byte (the log's digest, webhook
signatures and API bodies depend on it); ``parse_untrusted`` reads what ``json.loads`` reads
within its bounds, and refuses everything else with a ValueError only."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.jsontext import (
    DEPTH_MAX,
    INT_DIGITS_MAX,
    JSONRefused,
    canonical_encoder,
    compact_encoder,
    ordered_encoder,
    parse_untrusted,
)

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@pytest.mark.parametrize("sort_keys", [True, False])
@pytest.mark.parametrize("ensure_ascii", [True, False])
@given(value=_json_values)
def test_compact_encoder_is_json_dumps_with_the_same_options(
        sort_keys: bool, ensure_ascii: bool, value: Any) -> None:
    encode = compact_encoder(sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    assert encode(value) == json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                                       separators=(",", ":"))


def test_compact_encoder_refuses_what_json_refuses() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        compact_encoder(sort_keys=True, ensure_ascii=False)({"a": object()})


#: The log's values: JSON trees without floats (the log holds none), any text but lone
#: surrogates (which no UTF-8 line can hold; both encoders refuse them, below).
_log_text = st.text(st.characters(blacklist_categories=("Cs",)))
_log_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10**40),
                                                            max_value=10**40) | _log_text,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(_log_text, inner, max_size=5),
    max_leaves=24)


@given(value=_log_values)
def test_canonical_encoder_is_json_dumps_sorted_utf8_byte_for_byte(value: Any) -> None:
    """The event log's canonical form (the digest hashes it): msgspec's sorted encoding is
    the standard library's, for every value the log can hold."""
    assert canonical_encoder()(value) == json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def test_canonical_encoder_refuses_what_json_refuses() -> None:
    encode = canonical_encoder()
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode({"a": object()})
    with pytest.raises(UnicodeEncodeError):
        encode({"a": "\ud800"})


@given(value=_log_values)
def test_ordered_encoder_is_json_dumps_unsorted_utf8_byte_for_byte(value: Any) -> None:
    """Webhook bodies and the driver's request bodies (no floats): msgspec's encoding in the
    dict's order is the standard library's."""
    assert ordered_encoder()(value) == json.dumps(
        value, ensure_ascii=False, separators=(",", ":")).encode()


def test_ordered_encoder_keeps_the_members_order_and_refuses_what_json_refuses() -> None:
    encode = ordered_encoder()
    assert encode({"b": 1, "a": [True, None, "é"]}) == '{"b":1,"a":[true,null,"é"]}'.encode()
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode({"a": object()})
    with pytest.raises(UnicodeEncodeError):
        encode({"a": "\ud800"})


# parse_untrusted: the one decoder for JSON from outside ----------------------------------

_HOSTILE_TEXTS = [b"[" * 5000, b'{"a":' * 5000, b"[" * 100_000 + b"]" * 100_000,
                  b"[" * (DEPTH_MAX + 1) + b"]" * (DEPTH_MAX + 1), b"\xff", b"\xed\xa0\x80",
                  b'{"a":1,"a":2}', b'{"x":NaN}', b"[Infinity]", b"-Infinity",
                  b'{"n":' + b"9" * 5000 + b"}", b"9" * (INT_DIGITS_MAX + 1),
                  b"\xef\xbb\xbf{}", b"", b" ", b"{", b'"\\ud800"x']


@pytest.mark.parametrize("raw", _HOSTILE_TEXTS, ids=lambda raw: repr(raw[:12]))
def test_parse_untrusted_refuses_with_a_value_error_only(raw: bytes) -> None:
    """A body nested past the interpreter's recursion limit raised RecursionError through
    ``json.loads``, which callers catching ValueError let through: a 500 from the shim's
    issuer-webhook door, a saga killed by a gateway's answer. Every refusal is now one
    ValueError, JSONRefused."""
    with pytest.raises(JSONRefused):
        parse_untrusted(raw)


@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(
    lambda t: t.encode("utf-8", "surrogatepass")))
def test_parse_untrusted_of_any_bytes_is_a_value_or_json_refused(raw: bytes) -> None:
    with contextlib.suppress(JSONRefused):  # anything else fails the test
        parse_untrusted(raw)


@given(depth=st.integers(0, 3 * DEPTH_MAX), kind=st.sampled_from(["[", '{"k":']))
def test_parse_untrusted_takes_nesting_up_to_its_bound_and_no_deeper(depth: int,
                                                                     kind: str) -> None:
    close = "]" if kind == "[" else "}"
    text = kind * depth + "1" + close * depth
    if depth <= DEPTH_MAX:
        assert parse_untrusted(text) == json.loads(text)
    else:
        with pytest.raises(JSONRefused, match="levels deep"):
            parse_untrusted(text)


_readable = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**29), 10**29) | st.floats(allow_nan=False,
                                                                       allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(value=_readable)
def test_parse_untrusted_reads_what_json_loads_reads(value: Any) -> None:
    """Within the bounds, the same value as ``json.loads`` (bytes or text, any escapes)."""
    text = json.dumps(value)
    assert parse_untrusted(text) == json.loads(text)
    assert parse_untrusted(json.dumps(value, ensure_ascii=False).encode()) == json.loads(text)
