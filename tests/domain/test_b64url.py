"""One spelling of base64url for every decoded credential (issue 31 §6: portal JWT
signatures accepted ``!!!``, ``%%%``, ``==`` and the standard alphabet; cursors did not)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clearing_sim.domain import b64url


@given(st.binary(max_size=96))
def test_every_byte_string_has_one_spelling_that_reads_back(data: bytes) -> None:
    assert b64url.decode(b64url.encode(data)) == data


@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=!%. ",
               max_size=40))
def test_a_string_is_read_only_if_it_is_the_spelling_of_what_it_reads_as(text: str) -> None:
    """The class, not the instance: decode accepts ``text`` exactly when re-encoding its
    bytes gives ``text`` back; every other string is refused with ``ValueError``."""
    try:
        data = b64url.decode(text)
    except ValueError:
        lenient = _lenient(text)
        assert lenient is None or b64url.encode(lenient) != text
    else:
        assert b64url.encode(data) == text


def _lenient(text: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None


@pytest.mark.parametrize("spelling", ["!!!", "%%%", "==", "+", "/"])
def test_the_spellings_python_accepts_are_refused(spelling: str) -> None:
    canonical = b64url.encode(b"\xfb\xff\xfe" * 11)
    assert "-" in canonical and "_" in canonical
    variants = [canonical[:4] + spelling + canonical[4:], canonical + spelling,
                canonical.replace("-", "+").replace("_", "/")]
    for variant in variants:
        assert _lenient(variant) == b"\xfb\xff\xfe" * 11 or spelling in "+/"
        with pytest.raises(ValueError):
            b64url.decode(variant)


def test_unused_low_bits_make_another_spelling_that_is_refused() -> None:
    canonical = b64url.encode(b"\x00")  # "AA": the second character carries 4 unused bits
    assert canonical == "AA" and _lenient("AB") == b"\x00"
    with pytest.raises(ValueError):
        b64url.decode("AB")
