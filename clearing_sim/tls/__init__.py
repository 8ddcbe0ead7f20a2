"""TLS tooling for Authentication 8 (mTLS to issuer gateways): a test CA, a CSR flow and
TLS contexts, all made with ``cryptography`` and the standard ``ssl`` module.

Public names: ``CertBundle``, ``KeyPair``, ``TlsProblem``, ``client_context``,
``describe_tls_error``, ``issue_from_csr``, ``make_ca``, ``make_csr``, ``server_context``,
``write_bundle``.

``certs`` makes the CA, keys and certificates; ``contexts`` builds client and server
contexts and words a handshake's failure plainly.
"""

from clearing_sim.tls.certs import (
    CertBundle,
    KeyPair,
    issue_from_csr,
    make_ca,
    make_csr,
    write_bundle,
)
from clearing_sim.tls.contexts import (
    TlsProblem,
    client_context,
    describe_tls_error,
    server_context,
)

__all__ = ["CertBundle", "KeyPair", "TlsProblem", "client_context", "describe_tls_error",
           "issue_from_csr", "make_ca", "make_csr", "server_context", "write_bundle"]
