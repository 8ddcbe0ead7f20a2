"""``clearing-sim conformance …`` and ``clearing-sim receiver serve``: thin doors to the kits.

Public names: ``conformance``, ``receiver``, ``write_report``.

``conformance`` is a click group; each kit adds its command (``receiver`` here; a kit of
another side adds its own with ``conformance.add_command``). ``write_report`` prints and
writes a ``Report`` the same way for every kit (text or ``--json`` on stdout, ``--junit``
and ``--html`` files) and gives the exit code (``report.exit_code``). Bad usage, a port that
cannot be bound and a receiver that does not answer at all exit 2 with one line on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

import click

from clearing_sim.conformance.receiver_kit import (
    PROCESS_WITHIN_S,
    KitOptions,
    TargetUnreachable,
    http_url_problem,
)
from clearing_sim.conformance.receiver_run import KitShim, shim_base_url
from clearing_sim.conformance.receiver_server import (
    HttpTransactionSource,
    receiver_app,
    wall_clock_s,
)
from clearing_sim.conformance.receiver_stage import Precondition
from clearing_sim.conformance.receiver_variants import (
    DEFECTS,
    AckFirstReceiver,
    ReceiverDefect,
    defective,
)
from clearing_sim.conformance.report import (
    EXIT_USAGE,
    Report,
    dumps,
    exit_code,
    html_page,
    junit_xml,
    text_lines,
)
from clearing_sim.gateway.cli import conformance_issuer
from clearing_sim.http.kit_shim import run_receiver_kit, shim_api_key
from clearing_sim.serving import GuardedServer, ServeLimits, limit_options
from clearing_sim.webhooks import NaiveReceiver, ReferenceReceiver

__all__ = ["conformance", "receiver", "write_report"]

DEFAULT_SHIM_PORT = 8790
_SECRET_ENV = "CLEARING_SIM_WEBHOOK_SECRET"


def write_report(report: Report, *, as_json: bool, junit_file: str | None,
                 html_file: str | None, verbose: bool = False) -> int:
    """Print the report (text, or JSON with ``as_json``), write the files; the exit code."""
    if as_json:
        click.echo(dumps(report), nl=False)
    else:
        for line in text_lines(report, verbose=verbose):
            click.echo(line)
    try:
        if junit_file is not None:
            Path(junit_file).write_bytes(junit_xml(report))
        if html_file is not None:
            Path(html_file).write_text(html_page(report), encoding="utf-8")
    except OSError as error:
        click.echo(f"error: cannot write the report: {error}", err=True)
        return EXIT_USAGE
    return exit_code(report)


def _http_url(value: str | None, option: str) -> None:
    if value is None:
        return
    problem = http_url_problem(value)
    if problem is not None:
        raise click.BadParameter(problem, param_hint=option)


def _base_url(value: str | None) -> str | None:
    """``--shim-public-url``: an http(s) base URL, no query or fragment, without its last
    ``/`` (the receiver appends ``/api/v1/...``)."""
    if value is None:
        return None
    _http_url(value, "--shim-public-url")
    parts = urlsplit(value)
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise click.BadParameter(f"{value!r}: a base URL has no query or fragment",
                                 param_hint="--shim-public-url")
    return value.rstrip("/")


@click.group()
def conformance() -> None:
    """Conformance kits: point one at your endpoint, get a verdict per check."""


conformance.add_command(conformance_issuer)  # clearing-sim conformance issuer (gateway)


@conformance.command("receiver")
@click.argument("url", required=False)
@click.option("--secret", envvar=_SECRET_ENV, metavar="WHSEC",
              help=f"The receiver's signing secret (or ${_SECRET_ENV}).")
@click.option("--probe-url", default=None, metavar="URL",
              help="GET URL (with {id}) where the receiver shows its view of a transaction.")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False), default=None,
              help="Write JUnit XML: one testcase per check.")
@click.option("--html", "html_file", type=click.Path(dir_okay=False), default=None,
              help="Write a self-contained HTML report with every request and response.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--verbose", "-v", is_flag=True, help="Show the evidence of passing checks.")
@click.option("--process-within", "process_within_s", type=click.FloatRange(0.1, 600),
              default=PROCESS_WITHIN_S, show_default=True, metavar="SECONDS",
              help="How long after its answer the receiver has to fetch a new event's "
                   "transaction and show the service's view through the probe.")
@click.option("--shim-host", default="127.0.0.1", show_default=True,
              help="Where the kit's shim (the API your receiver calls) listens.")
@click.option("--shim-port", type=click.IntRange(0, 65535), default=DEFAULT_SHIM_PORT,
              show_default=True, help="The kit's shim port.")
@click.option("--shim-public-url", default=None, metavar="URL",
              help="The shim's base URL as your receiver reaches it, when that is not the "
                   "address it listens on (a receiver in a container, behind a proxy).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="The shim world's seed (the API key depends on it).")
@click.option("--show-shim", is_flag=True,
              help="Print the shim's base URL and API key to configure your receiver, exit.")
def receiver_command(url: str | None, secret: str | None, probe_url: str | None,
                     junit_file: str | None, html_file: str | None, as_json: bool,
                     verbose: bool, process_within_s: float, shim_host: str, shim_port: int,
                     shim_public_url: str | None, seed: int, show_shim: bool) -> None:
    """Run the receiver battery against the webhook receiver at URL.

    Your receiver fetches GET /api/v1/transactions/{id} from the kit's shim with the
    shim's API key (see --show-shim). Exit 0: every check passed; 1: a check failed;
    2: bad usage or the receiver did not answer. See docs/conformance.md.

    \b
    Example:
      eval "$(clearing-sim conformance receiver --show-shim)"
      clearing-sim receiver serve --port 4242 --secret whsec_test \\
          --api-base-url "$CLEARING_SIM_API_BASE_URL" --api-key "$CLEARING_SIM_API_KEY" &
      clearing-sim conformance receiver http://127.0.0.1:4242/webhooks \\
          --secret whsec_test --probe-url 'http://127.0.0.1:4242/transactions/{id}'
    """
    public_url = _base_url(shim_public_url)
    base_url = public_url or shim_base_url(shim_host, shim_port)
    if show_shim:
        click.echo(f"export CLEARING_SIM_API_BASE_URL={base_url}")
        click.echo(f"export CLEARING_SIM_API_KEY={shim_api_key(seed)}")
        return
    if url is None:
        raise click.UsageError("give the receiver's URL (or --show-shim)")
    if not secret:
        raise click.UsageError(f"give --secret (or set {_SECRET_ENV})")
    _http_url(url, "URL")
    _http_url(probe_url, "--probe-url")

    def ready(shim: KitShim) -> None:
        click.echo(f"kit shim on {shim.base_url}  API key {shim.api_key}  (your receiver "
                   f"fetches {shim.base_url}/api/v1/transactions/{{id}} with it)",
                   err=as_json)

    if not _loopback(shim_host):
        click.echo(f"warning: the kit's shim listens on {shim_host}, beyond this machine, and "
                   f"its API key follows from --seed {seed} alone: anyone who can reach it can "
                   "read the kit's test transactions while the battery runs "
                   "(docs/conformance.md)", err=True)
    try:
        options = KitOptions(url, secret, probe_url, process_within_s=process_within_s)
        report = asyncio.run(run_receiver_kit(options,
                                              host=shim_host, port=shim_port, seed=seed,
                                              on_ready=ready, public_url=public_url))
    except OSError as error:
        click.echo(f"error: the kit's shim cannot listen on {shim_host}:{shim_port}: "
                   f"{error.strerror or error}", err=True)
        raise click.exceptions.Exit(EXIT_USAGE) from None
    except TargetUnreachable as error:
        click.echo(f"error: the receiver did not answer: {error}", err=True)
        raise click.exceptions.Exit(EXIT_USAGE) from None
    except Precondition as error:  # the kit's own world could not be staged: say why
        click.echo(f"error: {error.problems[0].message}", err=True)
        raise click.exceptions.Exit(EXIT_USAGE) from None
    code = write_report(report, as_json=as_json, junit_file=junit_file, html_file=html_file,
                        verbose=verbose)
    raise click.exceptions.Exit(code)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@click.group()
def receiver() -> None:
    """Reference webhook receivers, as real HTTP servers."""


@receiver.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=4242, show_default=True)
@click.option("--secret", envvar=_SECRET_ENV, metavar="WHSEC", help="The signing secret.")
@click.option("--naive", is_flag=True,
              help="The anti-pattern: dedup on type + transaction, trust the payload, no "
                   "replay window.")
@click.option("--ack-first", is_flag=True,
              help="Answer 200 once verified, fetch and update the view afterwards (it "
                   "follows the spec: the kit passes it).")
@click.option("--defect", default=None, metavar="NAME|list",
              help="The reference receiver with one defect that loses events (the kit "
                   "fails it); --defect list lists them.")
@click.option("--api-base-url", default=None, metavar="URL",
              help="The service (or shim) the reference receiver fetches transactions from.")
@click.option("--api-key", default=None, metavar="KEY", help="Its API key.")
@limit_options
def serve_receiver(host: str, port: int, secret: str | None, naive: bool, ack_first: bool,
                   defect: str | None, api_base_url: str | None, api_key: str | None,
                   limits: ServeLimits) -> None:
    """Serve a receiver: POST /webhooks takes deliveries, GET /transactions/{id} shows its
    view (the kit's probe)."""
    if defect == "list":
        for each, info in DEFECTS.items():
            click.echo(f"{each.value:28} {info.does} (caught by {info.caught_by})")
        return
    if not secret:
        raise click.UsageError(f"give --secret (or set {_SECRET_ENV})")
    if naive + ack_first + (defect is not None) > 1:
        raise click.UsageError("choose one of --naive, --ack-first and --defect")
    if defect is not None and defect not in {d.value for d in ReceiverDefect}:
        raise click.BadParameter(f"unknown defect {defect!r}; --defect list shows them",
                                 param_hint="--defect")
    if not naive and (api_base_url is None or api_key is None):
        raise click.UsageError("the reference receiver needs --api-base-url and --api-key "
                               "(it fetches each transaction); --naive needs neither")
    _http_url(api_base_url, "--api-base-url")
    hook: NaiveReceiver | ReferenceReceiver
    if naive:
        hook = NaiveReceiver(secret, wall_clock_s, None)
    else:
        assert api_base_url is not None and api_key is not None
        source = HttpTransactionSource(api_base_url)
        if ack_first:
            hook = AckFirstReceiver(source, api_key, secret, wall_clock_s)
        elif defect is not None:
            hook = defective(ReceiverDefect(defect), source, api_key, secret, wall_clock_s)
        else:
            hook = ReferenceReceiver(source, api_key, secret, wall_clock_s)
    try:
        sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host
                                    else socket.AF_INET, reuse_port=False)
    except OSError as error:
        raise click.UsageError(f"cannot listen on {host}:{port}: {error.strerror or error}") \
            from None
    bound = sock.getsockname()
    kind = "naive" if naive else "ack-first" if ack_first else \
        f"{defect} (defective)" if defect else "reference"
    click.echo(f"{kind} receiver on http://{host}:{bound[1]}  POST /webhooks, "
               "probe GET /transactions/{id}")
    sys.stdout.flush()
    server = GuardedServer(receiver_app(hook, echo=click.echo), limits)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
