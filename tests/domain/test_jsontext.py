"""``compact_encoder`` gives ``json.dumps``'s text byte for byte (the log's digest, webhook
signatures and API bodies depend on it)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain.jsontext import compact_encoder

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
