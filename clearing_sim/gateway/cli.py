"""``clearing-sim issuer serve|certs`` and ``clearing-sim conformance issuer``.

Public names: ``conformance_issuer``, ``issuer``.

``conformance_issuer`` is added to the shared ``clearing-sim conformance`` group
(``clearing_sim.conformance.cli``) as ``conformance issuer``.

Thin doors: each decodes its options, calls one function (the reference gateway, the
certificate bundle, the kit) and prints. Exit codes of the kit: 0 every mandatory scenario
passed, 1 one failed, 2 bad usage or an unreachable gateway.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sys
from decimal import Decimal
from pathlib import Path
from typing import NoReturn

import click

from clearing_sim.conformance.report import (
    EXIT_USAGE,
    dumps,
    exit_code,
    html_page,
    junit_xml,
    text_lines,
)
from clearing_sim.domain.instruction import Outcome
from clearing_sim.domain.profile import SettlementMode
from clearing_sim.gateway.kit import KitOptions, KitUnusable, run_kit
from clearing_sim.gateway.reference import DEFECTS, Defect, GatewaySettings, ReferenceIssuer
from clearing_sim.gateway.reference.app import Auth, create_app
from clearing_sim.gateway.reference.state import HOLD_POINTS, TRIGGERS_DEFAULT
from clearing_sim.gateway.serving import ServerTls, bind
from clearing_sim.gateway.transport import GatewayConfig
from clearing_sim.serving import GuardedServer, ServeLimits, limit_options
from clearing_sim.tls import TlsProblem
from clearing_sim.tls.certs import sign_csr_file, write_bundle

__all__ = ["conformance_issuer", "issuer"]

_MODES = {"2": SettlementMode.MODE_2, "3": SettlementMode.MODE_3}
_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _amount(ctx: click.Context, param: click.Parameter, value: str | Decimal) -> Decimal:
    """A trigger amount: a positive, finite decimal string (``2.22``)."""
    try:
        amount = Decimal(str(value))
    except ArithmeticError:
        amount = Decimal("NaN")
    if not amount.is_finite() or amount <= 0:
        raise click.BadParameter(f"{value!r} is not a positive decimal amount (e.g. 2.22)")
    return amount


@click.group()
def issuer() -> None:
    """The issuer side: a reference issuer gateway and the certificates it needs."""


def _defects(ctx: click.Context, param: click.Parameter,
             names: tuple[str, ...]) -> frozenset[Defect]:
    """``--defect``: eager, so ``--defect list`` prints the table and exits before
    ``--port`` (required only to serve) is asked for."""
    if "list" in names:
        for defect, info in DEFECTS.items():
            click.echo(f"{defect.value:26} {info.does}")
            click.echo(f"{'':26} breaks: {info.rule}")
            click.echo(f"{'':26} caught by: {', '.join(info.catches)} "
                       f"(modes {', '.join(m[-1] for m in info.modes)})")
        ctx.exit(0)
    known = {d.value for d in Defect}
    for name in names:
        if name not in known:
            raise click.BadParameter(f"unknown defect {name!r}; --defect list shows them")
    return frozenset(Defect(n) for n in names)


@issuer.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), required=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--mode", type=click.Choice(["2", "3"]), default="3", show_default=True,
              help="2: two-phase, nothing moves until execute; 3: pre-burn transfer, no "
                   "execute")
@click.option("--hold-at", type=click.Choice(HOLD_POINTS), default=HOLD_POINTS[0],
              show_default=True,
              help="Mode 2: the status held until execute (PENDING_APPROVAL: decide after "
                   "execute, the spec's words; APPROVED: decide first)")
@click.option("--defect", "defects", multiple=True, metavar="NAME|list", is_eager=True,
              callback=_defects,
              help="break one rule of the contract (repeatable); 'list' lists them")
@click.option("--step-ms", type=click.IntRange(1, 60_000), default=20, show_default=True,
              help="mean wall latency of each status step")
@click.option("--tls-cert", type=_FILE, help="server certificate (PEM): serve https")
@click.option("--tls-key", type=_FILE, help="server key (PEM)")
@click.option("--client-ca", type=_FILE, help="require client certificates from this CA (mTLS)")
@click.option("--bearer", help="require this static bearer token on the contract routes")
@click.option("--oauth-client-id", help="enable POST /oauth/token for this client")
@click.option("--oauth-client-secret", help="its secret")
@click.option("--token-ttl", type=click.IntRange(1), default=300, show_default=True)
@click.option("--webhook-url", help="send signed status webhooks here")
@click.option("--webhook-secret", help="the signing secret the service issued")
@click.option("--webhook-ca", type=_FILE,
              help="verify an https webhook receiver against this CA (default: the system's)")
@limit_options
def serve(host: str, port: int, seed: int, mode: str, hold_at: str, defects: frozenset[Defect],
          step_ms: int,
          tls_cert: Path | None, tls_key: Path | None, client_ca: Path | None,
          bearer: str | None, oauth_client_id: str | None, oauth_client_secret: str | None,
          token_ttl: int, webhook_url: str | None, webhook_secret: str | None,
          webhook_ca: Path | None, limits: ServeLimits) -> None:
    """Run the reference issuer gateway: the issuer side of the contract over HTTP.

    \b
    Example:
      clearing-sim issuer certs --out certs
      clearing-sim issuer serve --port 8443 --tls-cert certs/issuer-server.crt \\
          --tls-key certs/issuer-server.key --client-ca certs/ca.crt --bearer t0ken
    """
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    if client_ca is not None and tls_cert is None:
        raise click.UsageError("--client-ca (mTLS) needs --tls-cert and --tls-key")
    if (oauth_client_id is None) != (oauth_client_secret is None):
        raise click.UsageError("--oauth-client-id and --oauth-client-secret go together")
    if webhook_url is not None and not webhook_url.startswith(("http://", "https://")):
        raise click.UsageError(f"--webhook-url {webhook_url!r} is not an http(s) URL")
    try:
        state = ReferenceIssuer(GatewaySettings(
            seed, f"MODE_{mode}", hold_at, step_ms, webhook_url, webhook_secret, defects,
            webhook_ca=webhook_ca))
    except TlsProblem as problem:
        raise click.UsageError(f"--webhook-ca: {problem}") from None
    app = create_app(state, Auth(bearer, oauth_client_id, oauth_client_secret, token_ttl))
    tls = None if tls_cert is None or tls_key is None else ServerTls(tls_cert, tls_key, client_ca)
    try:
        if tls is not None:
            tls.context()
    except TlsProblem as problem:
        raise click.UsageError(f"--tls-cert/--tls-key/--client-ca: {problem}") from None
    try:
        sock = bind(host, port)
    except OSError as error:
        raise click.UsageError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    scheme = "https" if tls else "http"
    held = f", holds at {hold_at}" if mode == "2" else ""
    click.echo(f"reference issuer gateway (mode {mode}{held}, seed {seed}, defects "
               f"{', '.join(sorted(defects)) or 'none'}) on "
               f"{scheme}://{host}:{sock.getsockname()[1]}", err=False)
    sys.stdout.flush()
    options = tls.uvicorn_options() if tls is not None else {}
    with contextlib.suppress(KeyboardInterrupt):
        GuardedServer(app, limits, lifespan="off", **options).run(sockets=[sock])


@issuer.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--days", type=click.IntRange(1, 3650), default=365, show_default=True)
@click.option("--csr", type=_FILE, help="sign this CSR (PEM) with the test CA already in OUT")
def certs(out: Path, days: int, csr: Path | None) -> None:
    """Make a test CA, the service's client certificate (from a CSR) and an issuer's server
    certificate for localhost and 127.0.0.1, as PEM files in OUT; with --csr, sign a CSR
    with the CA already in OUT instead (a client certificate)."""
    if csr is not None:
        if not (out / "ca.key").is_file():
            _usage(f"no test CA in {out}: run clearing-sim issuer certs --out {out} first")
        try:
            click.echo(str(sign_csr_file(out, csr.read_bytes(), dt.datetime.now(dt.UTC), days)))
        except (ValueError, TypeError) as error:
            _usage(f"{csr}: not a usable CSR (or {out}/ca.key is not the test CA's key): "
                   f"{error}")
        except OSError as error:
            _usage(f"cannot sign into {out}: {error.strerror or error}")
        return
    try:
        bundle = write_bundle(out, dt.datetime.now(dt.UTC), days)
    except (OSError, ValueError) as error:  # a file in the way, no permission, a NUL byte
        _usage(f"cannot write the certificates into {out}: "
               f"{getattr(error, 'strerror', None) or error}")
    for path in (*bundle.files(), out / "ca.key", out / "service-client.csr"):
        click.echo(str(path))


@click.command("issuer")
@click.option("--api-base-url", required=True, help="the gateway's apiBaseUrl")
@click.option("--mode", type=click.Choice(["2", "3"]), default="3", show_default=True)
@click.option("--ca-file", type=_FILE, help="the issuer's CA bundle (verifies its server)")
@click.option("--client-cert", type=_FILE, help="the service's mTLS client certificate")
@click.option("--client-key", type=_FILE, help="its key")
@click.option("--bearer", help="a static bearer token for the gateway")
@click.option("--token-url", help="OAuth 2.0 token endpoint (client credentials)")
@click.option("--client-id")
@click.option("--client-secret")
@click.option("--provider-states-url", help="the gateway's provider-state set-up URL")
@click.option("--triggers", is_flag=True,
              help="ask for rejection and silence by trigger amounts instead "
                   f"(rejected {TRIGGERS_DEFAULT[Outcome.REJECTED]}, silence "
                   f"{TRIGGERS_DEFAULT[Outcome.SILENCE]})")
@click.option("--reject-amount", default=str(TRIGGERS_DEFAULT[Outcome.REJECTED]),
              callback=_amount, show_default=True)
@click.option("--silence-amount", default=str(TRIGGERS_DEFAULT[Outcome.SILENCE]),
              callback=_amount, show_default=True)
@click.option("--approval-sla-seconds", type=click.IntRange(1), default=900, show_default=True)
@click.option("--webhook-secret", default="whsec_conformance_kit", show_default=True,
              help="the signing secret issued to the gateway for status webhooks")
@click.option("--no-webhooks", is_flag=True, help="the profile has no SIGNED_WEBHOOK")
@click.option("--callback-port", type=click.IntRange(0, 65535), default=0)
@click.option("--callback-tls-cert", type=_FILE,
              help="serve the status-webhook receiver over HTTPS with this certificate "
                   "(service-webhooks.crt from issuer certs)")
@click.option("--callback-tls-key", type=_FILE, help="its key")
@click.option("--patience-ms", type=click.IntRange(0), default=1000, show_default=True)
@click.option("--timeout-s", type=click.FloatRange(0.1, 120), default=5.0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def conformance_issuer(api_base_url: str, mode: str, ca_file: Path | None,
                       client_cert: Path | None, client_key: Path | None, bearer: str | None,
                       token_url: str | None, client_id: str | None,
                       client_secret: str | None, provider_states_url: str | None,
                       triggers: bool, reject_amount: Decimal, silence_amount: Decimal,
                       approval_sla_seconds: int, webhook_secret: str, no_webhooks: bool,
                       callback_port: int, callback_tls_cert: Path | None,
                       callback_tls_key: Path | None, patience_ms: int, timeout_s: float,
                       seed: int,
                       junit: Path | None, html: Path | None, as_json: bool) -> None:
    """Run the issuer conformance suite against a real gateway, on virtual time.

    Exit 0 when every mandatory scenario passes, 1 when one fails, 2 on bad usage or an
    unreachable gateway.
    """
    if not api_base_url.startswith(("http://", "https://")):
        _usage(f"--api-base-url {api_base_url!r} is not an http(s) URL")
    if (client_cert is None) != (client_key is None):
        _usage("--client-cert and --client-key go together")
    if token_url is not None and (client_id is None or client_secret is None):
        _usage("--token-url needs --client-id and --client-secret")
    if (callback_tls_cert is None) != (callback_tls_key is None):
        _usage("--callback-tls-cert and --callback-tls-key go together")
    callback_tls = None if callback_tls_cert is None or callback_tls_key is None \
        else ServerTls(callback_tls_cert, callback_tls_key)
    try:
        if callback_tls is not None:
            callback_tls.context()
    except TlsProblem as problem:
        _usage(f"--callback-tls-cert/--callback-tls-key: {problem}")
    if provider_states_url is None and not triggers:
        _usage("say how the kit makes the gateway reject or stay silent: "
               "--provider-states-url URL or --triggers")
    config = GatewayConfig(
        api_base_url, None, ca_file, client_cert, client_key, bearer, token_url, client_id,
        client_secret, timeout_s, patience_ms=patience_ms,
        provider_states_url=provider_states_url,
        triggers={Outcome.REJECTED: reject_amount, Outcome.SILENCE: silence_amount}
        if triggers else None, webhook_secret=webhook_secret)
    options = KitOptions(config, _MODES[mode], approval_sla_seconds, seed, not no_webhooks,
                         callback_port, callback_tls=callback_tls)
    try:
        report = run_kit(options)
    except KitUnusable as problem:
        _usage(str(problem))
    if junit is not None:
        junit.write_bytes(junit_xml(report))
    if html is not None:
        html.write_text(html_page(report), encoding="utf-8")
    click.echo(dumps(report) if as_json else "\n".join(text_lines(report)))
    raise SystemExit(exit_code(report))


def _usage(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(EXIT_USAGE)
