"""TLS contexts for the service's calls to an issuer's gateway, and plain words for failures.

Public names: ``TlsProblem``, ``client_context``, ``describe_tls_error``.

``client_context`` verifies the issuer's server certificate against the CA bundle given at
onboarding (hostname checked) and presents the service's client certificate (mTLS).
``describe_tls_error`` turns OpenSSL's reasons into a sentence an issuer's engineer can act
on: wrong CA, expired certificate, missing client certificate, hostname mismatch.
"""

from __future__ import annotations

import ssl
from pathlib import Path

__all__ = ["TlsProblem", "client_context", "describe_tls_error"]


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
        if cert_file is not None:
            context.load_cert_chain(str(cert_file), None if key_file is None else str(key_file))
    except (OSError, ssl.SSLError) as error:
        raise TlsProblem(f"cannot load TLS files ({ca_file}, {cert_file}, {key_file}): "
                         f"{error}") from None
    return context


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
