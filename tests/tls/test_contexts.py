"""TLS contexts never ask for a passphrase: an encrypted private key is a clear refusal.

OpenSSL, given a passphrase-protected key and no passphrase, prompts on the controlling
terminal: a served shim, a reference gateway or a kit would sit waiting for an answer nobody
gives. ``client_context`` and ``server_context`` tell it there is none, and say why the key
cannot be used.
"""

from __future__ import annotations

import datetime as dt
import os
import pty
import select
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from clearing_sim.gateway.cli import issuer
from clearing_sim.tls import CertBundle, TlsProblem, client_context, server_context, write_bundle


@pytest.fixture
def bundle(tmp_path: Path) -> CertBundle:
    return write_bundle(tmp_path / "tls", dt.datetime.now(dt.UTC))


def _encrypted_copy(key_file: Path, traditional: bool = False) -> Path:
    key = load_pem_private_key(key_file.read_bytes(), None)
    fmt = serialization.PrivateFormat.TraditionalOpenSSL if traditional \
        else serialization.PrivateFormat.PKCS8
    target = key_file.with_name(f"encrypted-{'trad' if traditional else 'pkcs8'}.key")
    target.write_bytes(key.private_bytes(serialization.Encoding.PEM, fmt,
                                         serialization.BestAvailableEncryption(b"s3cret")))
    return target


@pytest.mark.parametrize("traditional", [False, True])
def test_an_encrypted_key_is_refused_saying_so(bundle: CertBundle, traditional: bool) -> None:
    client_key = _encrypted_copy(bundle.client_key, traditional)
    with pytest.raises(TlsProblem, match=r"is encrypted .*give a key without one"):
        client_context(bundle.ca_cert, bundle.client_cert, client_key)
    server_key = _encrypted_copy(bundle.server_key, traditional)
    with pytest.raises(TlsProblem, match="is encrypted"):
        server_context(bundle.server_cert, server_key, bundle.ca_cert)


def test_plain_keys_still_load(bundle: CertBundle) -> None:
    client_context(bundle.ca_cert, bundle.client_cert, bundle.client_key)
    server_context(bundle.server_cert, bundle.server_key, bundle.ca_cert)


def test_a_key_that_does_not_match_its_certificate_is_refused(bundle: CertBundle) -> None:
    with pytest.raises(TlsProblem, match="cannot load TLS files"):
        server_context(bundle.server_cert, bundle.client_key)


def test_no_passphrase_prompt_on_a_terminal(bundle: CertBundle) -> None:
    """In a child with a real controlling terminal (a pseudo-terminal), loading an encrypted
    key returns at once with the refusal; OpenSSL's ``Enter PEM pass phrase:`` never shows
    (before, the child waited on the prompt)."""
    key = _encrypted_copy(bundle.client_key)
    code = ("from pathlib import Path\n"
            "from clearing_sim.tls import TlsProblem, client_context\n"
            "try:\n"
            f"    client_context(Path({str(bundle.ca_cert)!r}), "
            f"Path({str(bundle.client_cert)!r}), Path({str(key)!r}))\n"
            "except TlsProblem as problem:\n"
            "    print('refused:', problem, flush=True)\n")
    try:
        pid, fd = pty.fork()
    except OSError as error:  # a machine without pseudo-terminals
        pytest.skip(f"no pseudo-terminal: {error}")
    if pid == 0:  # the child: a session leader whose controlling terminal is the pty
        os.execv(sys.executable, [sys.executable, "-c", code])
    seen = b""
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and b"\n" not in seen \
                and b"pass phrase" not in seen:  # a whole line, or the prompt (it waits)
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # the child ended and closed the terminal
                    break
                seen += chunk
    finally:
        if os.waitpid(pid, os.WNOHANG) == (0, 0):  # still running: waiting on the prompt
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
    assert b"pass phrase" not in seen, seen
    assert b"refused:" in seen and b"is encrypted" in seen, seen


def test_issuer_serve_with_an_encrypted_key_exits_2_before_serving(bundle: CertBundle) -> None:
    key = _encrypted_copy(bundle.server_key)
    result = CliRunner().invoke(issuer, ["serve", "--port", "0", "--tls-cert",
                                         str(bundle.server_cert), "--tls-key", str(key)])
    assert result.exit_code == 2, result.output
    assert "is encrypted" in result.output and "Traceback" not in result.output
