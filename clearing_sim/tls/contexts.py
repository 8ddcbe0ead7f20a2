"""TLS contexts for the service's calls to an issuer's gateway, and plain words for failures.

Public names: ``TlsProblem``, ``client_context``, ``describe_tls_error``, ``server_context``.

``client_context`` verifies the issuer's server certificate against the CA bundle given at
onboarding (hostname checked) and presents the service's client certificate (mTLS);
``server_context`` serves a certificate (and asks for a client's, given a CA). Neither ever
asks for a passphrase: OpenSSL would prompt on the terminal and hold a server or a kit
waiting for an answer nobody gives, so an encrypted private key is a ``TlsProblem`` that says
so.
``describe_tls_error`` turns OpenSSL's reasons into a sentence an issuer's engineer can act
on: wrong CA, expired certificate, missing client certificate, hostname mismatch.
"""

from __future__ import annotations

import ssl
from pathlib import Path

__all__ = ["TlsProblem", "client_context", "describe_tls_error", "server_context"]

#: What OpenSSL is told when a key wants a passphrase: none (it then fails, never prompts).
_NO_PASSPHRASE = b""


class TlsProblem(Exception):
    """A file or setting that makes no usable TLS context."""


def client_context(ca_file: Path | None, cert_file: Path | None = None,
                   key_file: Path | None = None) -> ssl.SSLContext:
    """Verify the server against ``ca_file`` (the system store when None); present
    ``cert_file``/``key_file`` as the client certificate when given."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        if ca_file is not None:
            context.load_verify_locations(cafile=str(ca_file))
    except (OSError, ssl.SSLError) as error:
        raise TlsProblem(f"cannot load TLS files ({ca_file}, {cert_file}, {key_file}): "
                         f"{error}") from None
    if cert_file is not None:
        _load_key_pair(context, cert_file, key_file, (ca_file, cert_file, key_file))
    return context


def server_context(cert_file: Path, key_file: Path,
                   client_ca: Path | None = None) -> ssl.SSLContext:
    """Serve ``cert_file`` with ``key_file``; given ``client_ca``, require a client
    certificate it signed (mTLS)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_key_pair(context, cert_file, key_file, (cert_file, key_file, client_ca))
    if client_ca is not None:
        try:
            context.load_verify_locations(cafile=str(client_ca))
        except (OSError, ssl.SSLError) as error:
            raise TlsProblem(f"cannot load the client CA bundle {client_ca}: {error}") from None
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def _load_key_pair(context: ssl.SSLContext, cert_file: Path, key_file: Path | None,
                   files: tuple[Path | None, ...]) -> None:
    try:
        context.load_cert_chain(str(cert_file), None if key_file is None else str(key_file),
                                password=_NO_PASSPHRASE)
    except (OSError, ssl.SSLError) as error:
        if _encrypted(key_file or cert_file):
            raise TlsProblem(f"the private key in {key_file or cert_file} is encrypted "
                             "(it has a passphrase): give a key without one") from None
        shown = ", ".join(str(f) for f in files if f is not None)
        raise TlsProblem(f"cannot load TLS files ({shown}): {error}") from None


def _encrypted(key_file: Path) -> bool:
    """The PEM holds an encrypted private key (PKCS#8 or the traditional header)."""
    try:
        with key_file.open("rb") as f:
            head = f.read(1 << 16)
    except (OSError, ValueError):
        return False
    return b"ENCRYPTED PRIVATE KEY" in head or b"Proc-Type: 4,ENCRYPTED" in head


_REASONS = (
    ("certificate has expired", "the issuer's server certificate has expired"),
    ("unable to get local issuer certificate",
     "the issuer's server certificate is not signed by the CA bundle given at onboarding"),
    ("self-signed certificate in certificate chain",
     "the issuer's server certificate is not signed by the CA bundle given at onboarding "
     "(it chains to another CA)"),
    ("self signed certificate", "the issuer's server certificate is self-signed and not in the "
                                "CA bundle"),
    ("hostname mismatch", "the issuer's server certificate does not name the host called"),
    ("IP address mismatch", "the issuer's server certificate does not name the address called"),
    ("certificate required", "the gateway requires a client certificate and none was "
                             "presented (give --client-cert and --client-key)"),
    ("unknown ca", "the gateway does not trust the service's client certificate (its CA "
                   "bundle does not hold the CA that signed it)"),
    ("bad certificate", "the gateway refused the service's client certificate"),
    ("certificate expired", "the gateway says the service's client certificate has expired"),
    ("wrong version number", "the gateway does not speak TLS at this address (http:// ?)"),
)


_CLOSED = ("disconnected without sending a response", "connection reset",
           "unexpected eof", "eof occurred in violation of protocol")


def describe_tls_error(error: BaseException, *, client_cert_presented: bool = True,
                       https: bool = True) -> str | None:
    """A plain sentence for a TLS failure found anywhere in ``error``'s chain; None if the
    failure is not a TLS one.

    Under TLS 1.3 a server that wants a client certificate may just close the connection
    after the handshake; when none was presented over https, that is the likely reason."""
    text = str(error).lower()
    if https and not client_cert_presented and any(c in text for c in _CLOSED):
        return ("TLS handshake failed: the gateway requires a client certificate and none was "
                f"presented (give --client-cert and --client-key) ({str(error)[:200]})")
    if https and any(c in text for c in _CLOSED):
        return ("TLS: the gateway closed the connection without answering: it probably refused "
                "the service's client certificate (expired, or signed by a CA it does not "
                f"trust) ({str(error)[:200]})")
    seen: BaseException | None = error
    while seen is not None:
        text = str(seen)
        for needle, sentence in _REASONS:
            if needle.lower() in text.lower():
                return f"TLS handshake failed: {sentence} ({text.strip()[:200]})"
        if isinstance(seen, ssl.SSLError):
            return f"TLS handshake failed: {text.strip()[:200]}"
        seen = seen.__cause__ or seen.__context__
    return None
