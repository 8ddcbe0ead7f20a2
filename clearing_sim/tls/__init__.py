"""Authentication 8 tooling: a test CA, a CSR flow and TLS contexts for issuer-gateway calls.

Public names: ``CertBundle``, ``KeyPair``, ``TlsProblem``, ``client_context``,
``describe_tls_error``, ``issue_from_csr``, ``make_ca``, ``make_csr``, ``server_context``,
``write_bundle``.
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
