"""The id factory's ids: the same text ``uuid.UUID(int=bits, version=4)`` gives for the bits
drawn from the ``ids:<kind>`` stream (the ids of every recorded run depend on it)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.sim.streams import IdFactory, Streams


@given(seed=st.integers(0, 2**64), kind=st.sampled_from(["transaction", "command", "evt"]),
       draws=st.integers(1, 20))
def test_uuid_is_the_version_4_text_of_the_streams_bits(seed: int, kind: str,
                                                        draws: int) -> None:
    ids, bits = IdFactory(Streams(seed)), Streams(seed).get(f"ids:{kind}")
    for _ in range(draws):
        made = ids.uuid(kind)
        assert made == str(uuid.UUID(int=bits.getrandbits(128), version=4))
        assert uuid.UUID(made).version == 4 and uuid.UUID(made).variant == uuid.RFC_4122
