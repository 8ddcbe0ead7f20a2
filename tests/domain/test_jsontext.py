"""``compact_encoder`` gives ``json.dumps``'s text byte for byte (the log's digest, webhook
signatures and API bodies depend on it)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.jsontext import canonical_encoder, compact_encoder, ordered_encoder

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
