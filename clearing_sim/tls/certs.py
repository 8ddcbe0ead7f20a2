"""A local test CA and the certificates of Authentication 8, made with ``cryptography``.

Public names: ``CertBundle``, ``KeyPair``, ``issue``, ``issue_from_csr``, ``make_ca``,
``make_csr``, ``sign_csr_file``, ``write_bundle``.

The spec's flow: the issuer submits a CSR for the service's mTLS client certificate during
onboarding and supplies a CA bundle its own server certificate chains to. Locally one test CA
plays both roles: ``write_bundle`` makes the CA, the service's client key and CSR, the
certificate the CA issues from that CSR, the issuer's server certificate (for
``localhost`` and ``127.0.0.1``) and the service's own webhook endpoint's server certificate
(``service-webhooks.crt``: the kit's callback receiver serves HTTPS with it, and the
issuer's gateway verifies it against the same CA). Keys are EC P-256; files are PEM.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

from attrs import frozen
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["CertBundle", "KeyPair", "issue", "issue_from_csr", "make_ca", "make_csr",
           "sign_csr_file", "write_bundle"]

SERVER_NAMES = ("localhost", "127.0.0.1")


@frozen
class KeyPair:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    def key_pem(self) -> bytes:
        return self.key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())

    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)


@frozen
class CertBundle:
    """Paths written by ``write_bundle``."""

    ca_cert: Path
    client_cert: Path
    client_key: Path
    server_cert: Path
    server_key: Path
    webhook_cert: Path  # the service's own webhook endpoint (the kit's callback receiver)
    webhook_key: Path

    def files(self) -> tuple[Path, ...]:
        return (self.ca_cert, self.client_cert, self.client_key, self.server_cert,
                self.server_key, self.webhook_cert, self.webhook_key)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "clearing-sim test"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def make_ca(common_name: str, now: dt.datetime, days: int = 365) -> KeyPair:
    """A self-signed CA certificate valid from an hour before ``now`` for ``days``."""
    key = _key()
    name = _name(common_name)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                         False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return KeyPair(key, cert)


def make_csr(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.CertificateSigningRequest]:
    """A new key and the CSR the issuer (or the service) submits for it."""
    key = _key()
    csr = (x509.CertificateSigningRequestBuilder().subject_name(_name(common_name))
           .sign(key, hashes.SHA256()))
    return key, csr


def issue_from_csr(ca: KeyPair, csr: x509.CertificateSigningRequest, *, server: bool,
                   now: dt.datetime, days: int = 365,
                   names: tuple[str, ...] = SERVER_NAMES) -> x509.Certificate:
    """The CA signs the CSR: a server certificate (with ``names`` as SANs) or a client one.

    ``now`` and ``days`` set the validity; a negative ``days`` makes an expired certificate
    (for the handshake tests)."""
    assert csr.is_signature_valid, "the CSR's signature does not match its key"
    start = now - dt.timedelta(hours=1) if days > 0 else now + dt.timedelta(days=days - 1)
    end = now + dt.timedelta(days=days)
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (x509.CertificateBuilder().subject_name(csr.subject)
               .issuer_name(ca.cert.subject).public_key(csr.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                   ca.key.public_key()), critical=False))
    if server:
        sans: list[x509.GeneralName] = []
        for n in names:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(n)))
            except ValueError:
                sans.append(x509.DNSName(n))
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(ca.key, hashes.SHA256())


def issue(ca: KeyPair, common_name: str, *, server: bool, now: dt.datetime,
          days: int = 365) -> KeyPair:
    """Key, CSR and certificate in one step."""
    key, csr = make_csr(common_name)
    return KeyPair(key, issue_from_csr(ca, csr, server=server, now=now, days=days))


def sign_csr_file(out: Path, csr_pem: bytes, now: dt.datetime, days: int = 365) -> Path:
    """The test CA in ``out`` (``ca.crt``, ``ca.key`` from ``write_bundle``) signs a CSR an
    issuer submitted: a client certificate ``<common name>.crt`` beside it."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    ca_key = load_pem_private_key((out / "ca.key").read_bytes(), None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey), "the test CA's key is EC P-256"
    ca = KeyPair(ca_key, x509.load_pem_x509_certificate((out / "ca.crt").read_bytes()))
    csr = x509.load_pem_x509_csr(csr_pem)
    if not csr.is_signature_valid:
        raise ValueError("the CSR's signature does not match its public key")
    names = csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in
                   (str(names[0].value) if names else "client")) or "client"
    cert = issue_from_csr(ca, csr, server=False, now=now, days=days)
    target = out / f"{stem}.crt"
    target.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return target


def write_bundle(out: Path, now: dt.datetime, days: int = 365) -> CertBundle:
    """The test CA, the service's client certificate (through a CSR), the issuer's server
    certificate and the service's webhook endpoint certificate, as PEM files in ``out``
    (made if missing; keys readable by the owner only)."""
    out.mkdir(parents=True, exist_ok=True)
    ca = make_ca("clearing-sim test CA", now, days)
    client_key, client_csr = make_csr("clearing-sim service client")
    client = KeyPair(client_key, issue_from_csr(ca, client_csr, server=False, now=now,
                                                days=days))
    server = issue(ca, "issuer gateway", server=True, now=now, days=days)
    webhooks = issue(ca, "clearing-sim service webhooks", server=True, now=now, days=days)
    bundle = CertBundle(out / "ca.crt", out / "service-client.crt", out / "service-client.key",
                        out / "issuer-server.crt", out / "issuer-server.key",
                        out / "service-webhooks.crt", out / "service-webhooks.key")
    (out / "ca.key").write_bytes(ca.key_pem())
    bundle.ca_cert.write_bytes(ca.cert_pem())
    (out / "service-client.csr").write_bytes(client_csr.public_bytes(serialization.Encoding.PEM))
    bundle.client_cert.write_bytes(client.cert_pem())
    bundle.client_key.write_bytes(client.key_pem())
    bundle.server_cert.write_bytes(server.cert_pem())
    bundle.server_key.write_bytes(server.key_pem())
    bundle.webhook_cert.write_bytes(webhooks.cert_pem())
    bundle.webhook_key.write_bytes(webhooks.key_pem())
    for key_file in (out / "ca.key", bundle.client_key, bundle.server_key, bundle.webhook_key):
        key_file.chmod(0o600)
    return bundle
