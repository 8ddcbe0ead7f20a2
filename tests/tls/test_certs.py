"""Authentication 8: the TLS handshake with an issuer's gateway really verifies.

A server on loopback requires a client certificate (mTLS); the service's client verifies the
server against the CA bundle given at onboarding. A wrong CA, an expired certificate and a
missing client certificate each fail, with a sentence that says which.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clearing_sim.gateway.serving import ServerThread, ServerTls
from clearing_sim.tls import (
    CertBundle,
    client_context,
    describe_tls_error,
    make_ca,
    write_bundle,
)
from clearing_sim.tls.certs import issue

NOW = dt.datetime.now(dt.UTC)


async def _hello(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


APP = Starlette(routes=[Route("/hello", _hello)])


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> CertBundle:
    return write_bundle(tmp_path_factory.mktemp("certs"), NOW)


@pytest.fixture(scope="module")
def server(bundle: CertBundle) -> Iterator[ServerThread]:
    tls = ServerTls(bundle.server_cert, bundle.server_key, client_ca=bundle.ca_cert)
    with ServerThread(APP, tls=tls) as running:
        yield running


def _call(server: ServerThread, ca: Path, cert: Path | None, key: Path | None) -> str:
    """'ok' or the plain sentence describing the failure."""
    context = client_context(ca, cert, key)
    try:
        with httpx.Client(verify=context, timeout=5) as client:
            response = client.get(server.base_url + "/hello")
    except httpx.HTTPError as error:
        sentence = describe_tls_error(error, client_cert_presented=cert is not None)
        assert sentence is not None, f"not described as a TLS failure: {error!r}"
        return sentence
    assert response.status_code == 200
    return "ok"


def test_the_bundle_holds_a_ca_a_client_and_a_server_certificate(bundle: CertBundle) -> None:
    for path in bundle.files():
        assert path.read_bytes().startswith(b"-----BEGIN")
    ca = x509.load_pem_x509_certificate(bundle.ca_cert.read_bytes())
    client = x509.load_pem_x509_certificate(bundle.client_cert.read_bytes())
    assert client.issuer == ca.subject
    assert (bundle.client_cert.parent / "service-client.csr").exists()  # the CSR flow
    assert bundle.client_key.stat().st_mode & 0o077 == 0


def test_mtls_handshake_with_the_onboarding_ca_succeeds(server: ServerThread,
                                                        bundle: CertBundle) -> None:
    assert _call(server, bundle.ca_cert, bundle.client_cert, bundle.client_key) == "ok"


def test_a_wrong_ca_bundle_fails_clearly(server: ServerThread, bundle: CertBundle,
                                         tmp_path: Path) -> None:
    other = tmp_path / "other-ca.crt"
    other.write_bytes(make_ca("another CA", NOW).cert_pem())
    said = _call(server, other, bundle.client_cert, bundle.client_key)
    assert "not signed by the CA bundle given at onboarding" in said


def test_an_expired_server_certificate_fails_clearly(bundle: CertBundle, tmp_path: Path) -> None:
    ca = make_ca("expiring CA", NOW)
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(ca.cert_pem())
    expired = issue(ca, "issuer gateway", server=True, now=NOW, days=-1)
    cert, key = tmp_path / "server.crt", tmp_path / "server.key"
    cert.write_bytes(expired.cert_pem())
    key.write_bytes(expired.key_pem())
    with ServerThread(APP, tls=ServerTls(cert, key)) as running:
        assert "has expired" in _call(running, ca_file, None, None)


def test_a_missing_client_certificate_fails_clearly(server: ServerThread,
                                                    bundle: CertBundle) -> None:
    said = _call(server, bundle.ca_cert, None, None)
    assert "requires a client certificate and none was presented" in said


def test_an_expired_client_certificate_is_refused(server: ServerThread, bundle: CertBundle,
                                                  tmp_path: Path) -> None:
    ca_key = bundle.ca_cert.parent / "ca.key"
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    from clearing_sim.tls import KeyPair
    key = load_pem_private_key(ca_key.read_bytes(), None)
    ca = KeyPair(key, x509.load_pem_x509_certificate(bundle.ca_cert.read_bytes()))  # type: ignore[arg-type]
    expired = issue(ca, "clearing-sim service client", server=False, now=NOW, days=-1)
    cert, key_file = tmp_path / "client.crt", tmp_path / "client.key"
    cert.write_bytes(expired.cert_pem())
    key_file.write_bytes(expired.key_pem())
    said = _call(server, bundle.ca_cert, cert, key_file)
    assert "refused the service's client certificate" in said
