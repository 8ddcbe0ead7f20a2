"""The operator token keys every secret of a served world (Authentication; isolation and
secrets): what a caller is handed must not make guessing the token cheap."""

from __future__ import annotations

import hashlib
import hmac

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.cli import token_warning
from clearing_sim.http.sealing import token_check, token_key


def test_the_token_key_is_scrypt_at_interactive_login_cost() -> None:
    """RFC 7914 with N = 2^15, r = 8, p = 1 (32 MiB): a guess costs what a password hash
    costs. Before, the key secret was one SHA-256 of the token, so an API key and the
    printed seed let a member test about a million guesses a second on one core, and a
    hit forged every other participant's credentials."""
    assert token_key("devtoken1") == hashlib.scrypt(
        b"devtoken1", salt=b"clearing-sim operator token", n=1 << 15, r=8, p=1, dklen=32,
        maxmem=64 << 20)
    assert token_key("devtoken1") != token_key("devtoken2")


def test_the_worlds_key_secret_and_the_journals_check_come_from_the_token_key() -> None:
    sim = create_app(ServeOptions(operator_token="devtoken1", seed=3)).state.sim
    assert sim.key_secret == hashlib.sha256(b"clearing-sim key secret\x00"
                                            + token_key("devtoken1")).digest()
    fast = hashlib.sha256(b"clearing-sim key secret\x00devtoken1").digest()
    assert not hmac.compare_digest(sim.key_secret, fast)
    assert token_check("devtoken1", "00" * 16) != token_check("devtoken2", "00" * 16)


def test_serve_warns_of_a_short_token_and_not_of_the_default_length() -> None:
    warning = token_warning("devtoken1")
    assert warning is not None and "9 characters" in warning and "16" in warning
    assert token_warning("x" * 16) is None
    assert token_warning("A" * 32) is None  # secrets.token_urlsafe(24), the default
