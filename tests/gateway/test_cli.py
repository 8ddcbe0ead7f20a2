"""The doors: ``clearing-sim issuer certs``, ``issuer serve`` refusals, ``--defect list``,
``conformance issuer`` bad usage (exit 2, one line, no traceback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from clearing_sim.conformance.cli import conformance
from clearing_sim.gateway.cli import issuer
from clearing_sim.gateway.reference import DEFECTS


def test_certs_writes_the_bundle(tmp_path: Path) -> None:
    result = CliRunner().invoke(issuer, ["certs", "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    names = {Path(line).name for line in result.output.split()}
    assert {"ca.crt", "service-client.crt", "service-client.key", "service-client.csr",
            "issuer-server.crt", "issuer-server.key", "service-webhooks.crt",
            "service-webhooks.key"} <= names


def test_certs_signs_a_submitted_csr_with_the_test_ca(tmp_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    from clearing_sim.tls import make_csr

    out = tmp_path / "c"
    assert CliRunner().invoke(issuer, ["certs", "--out", str(out)]).exit_code == 0
    _, csr = make_csr("acme issuer client")
    csr_file = tmp_path / "acme.csr"
    csr_file.write_bytes(csr.public_bytes(serialization.Encoding.PEM))
    result = CliRunner().invoke(issuer, ["certs", "--out", str(out), "--csr", str(csr_file)])
    assert result.exit_code == 0, result.output
    cert = x509.load_pem_x509_certificate(Path(result.output.strip()).read_bytes())
    ca = x509.load_pem_x509_certificate((out / "ca.crt").read_bytes())
    assert cert.issuer == ca.subject and cert.subject == csr.subject
    garbage = tmp_path / "bad.csr"
    garbage.write_text("not a csr")
    refused = CliRunner().invoke(issuer, ["certs", "--out", str(out), "--csr", str(garbage)])
    assert refused.exit_code == 2 and "Traceback" not in refused.output


def test_defect_list_names_every_defect_and_what_catches_it() -> None:
    """``clearing-sim issuer serve --defect list``, as the README writes it: no ``--port``
    (issue 27: it failed with ``Missing option '--port'``)."""
    result = CliRunner().invoke(issuer, ["serve", "--defect", "list"])
    assert result.exit_code == 0, result.output
    for defect, info in DEFECTS.items():
        assert defect.value in result.output and info.catches[0] in result.output


def test_serve_still_needs_a_port_to_serve() -> None:
    result = CliRunner().invoke(issuer, ["serve", "--defect", "unsigned-callbacks"])
    assert result.exit_code == 2 and "Missing option '--port'" in result.output


def test_serve_refuses_bad_usage_with_exit_2(tmp_path: Path) -> None:
    cert = tmp_path / "x.crt"
    cert.write_text("x")
    for args in (["--defect", "nope"], ["--tls-cert", str(cert)],
                 ["--oauth-client-id", "svc"]):
        result = CliRunner().invoke(issuer, ["serve", "--port", "0", *args])
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output


def test_conformance_issuer_refuses_bad_usage_with_exit_2() -> None:
    for args in (["--api-base-url", "ftp://x", "--triggers"],
                 ["--api-base-url", "http://127.0.0.1:9"],  # neither states nor triggers
                 ["--api-base-url", "http://127.0.0.1:9", "--triggers", "--token-url",
                  "http://127.0.0.1:9/t"]):
        result = CliRunner().invoke(conformance, ["issuer", *args])
        assert result.exit_code == 2, (args, result.output)
        assert result.output.startswith("error: ") and "Traceback" not in result.output


def test_serve_holds_mode_2_at_pending_approval_unless_told_approved(serve: Any) -> None:
    """``--hold-at``: the spec's words by default (PENDING_APPROVAL), APPROVED on request;
    anything else is refused before anything is served."""
    default = serve("--mode", "2")
    approved = serve("--mode", "2", "--hold-at", "APPROVED")
    assert default.banner.startswith("reference issuer gateway (mode 2, holds at "
                                     "PENDING_APPROVAL")
    assert "holds at APPROVED" in approved.banner
    result = CliRunner().invoke(issuer, ["serve", "--port", "0", "--hold-at", "EXECUTING"])
    assert result.exit_code == 2 and "EXECUTING" in result.output
