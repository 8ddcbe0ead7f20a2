"""``clearing-sim serve``: the HTTP shim under uvicorn, on one event loop.

Public names: ``serve``, ``load_world``, ``load_world_or_exit`` (the last two from
``clearing_sim.http.world_file``, kept here for the commands and tests that import them).

A front door (STYLE.md): check the options (a bad one exits 2 with a message, never a
traceback), build the application, bind the socket, print where it listens and the
operator token, run. With ``--deliver-webhooks`` every real delivery is printed as it is
answered, like a webhook CLI's listener.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import secrets
import socket
import sys
from pathlib import Path

import attrs
import click

from clearing_sim.commands.stopping import term_as_interrupt
from clearing_sim.commands.terminal import colour_wanted
from clearing_sim.http.delivery import RealOutcome
from clearing_sim.http.journal_cli import read_existing, start_journal
from clearing_sim.http.options import ClockMode, ServeOptions
from clearing_sim.http.protocol import EnvelopeH11Protocol
from clearing_sim.http.wired import create_app
from clearing_sim.http.world_file import load_world, load_world_or_exit
from clearing_sim.scenario.model import Scenario
from clearing_sim.scenario.stage import SetupFailed, StepFailed
from clearing_sim.serving import GuardedServer, ServeLimits, limit_options
from clearing_sim.sim.receivers import Arrival
from clearing_sim.sim.world import Environment
from clearing_sim.tls.contexts import TlsProblem, client_context

__all__ = ["load_world", "load_world_or_exit", "serve", "token_warning"]

_TOKEN = re.compile(r"[\x21-\x7e]{8,256}")
_TOKEN_ADVISED = 16  # characters; the default token is 32 (token_urlsafe(24))


def token_warning(token: str) -> str | None:
    """What ``serve`` says of a short operator token (it is still taken: demos use one)."""
    if len(token) >= _TOKEN_ADVISED:
        return None
    return (f"warning: the operator token has {len(token)} characters. It keys every secret "
            "of this world, and any API key or webhook secret handed out lets its holder "
            "test guesses of it offline (each one costing a scrypt): give "
            f"{_TOKEN_ADVISED} or more random characters, or leave --operator-token out for a "
            "random one")
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _echo_delivery(arrival: Arrival, outcome: RealOutcome) -> None:
    copy = " (duplicate)" if arrival.copy else ""
    detail = f" {outcome.error}" if outcome.error else ""
    colour = "green" if 200 <= outcome.status < 300 else "red"
    line = (f"--> {arrival.event_id} attempt {arrival.attempt}{copy} POST "
            f"{arrival.request.url} [" + click.style(str(outcome.status), fg=colour) + "]"
            + detail)
    click.echo(line, color=colour_wanted())


def _bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        raise click.UsageError(f"cannot listen on {host}:{port}: {error.strerror or error}") \
            from None
    return sock


#: The largest CA bundle ``--webhook-ca`` reads (the system's own is about 200 KiB).
_CA_BYTES_MAX = 4 << 20


def _trust(webhook_ca: str | None, deliver: bool) -> Path | None:
    """``--webhook-ca``: a PEM bundle a TLS context can load, for real deliveries only."""
    if webhook_ca is None:
        return None
    if not deliver:
        raise click.UsageError("--webhook-ca applies to --deliver-webhooks only")
    bundle = Path(webhook_ca)
    try:
        readable = bundle.is_file() and bundle.stat().st_size <= _CA_BYTES_MAX
    except (OSError, ValueError):  # a name the system refuses (a NUL in it, too long)
        readable = False
    if not readable:
        raise click.BadParameter(f"{webhook_ca}: expected a PEM file of at most "
                                 f"{_CA_BYTES_MAX >> 20} MiB", param_hint="--webhook-ca")
    try:
        client_context(bundle)
    except TlsProblem:
        raise click.BadParameter(f"{webhook_ca}: no CA certificate could be loaded from it "
                                 "(expected PEM)", param_hint="--webhook-ca") from None
    return bundle


def _options(seed: int | None, operator_token: str, environment: str | None, clock: str,
             speed: float | None, deliver: bool, allow_private: bool,
             world: Scenario | None, webhook_ca: Path | None = None) -> ServeOptions:
    if speed is not None and clock != ClockMode.REALTIME.value:
        raise click.UsageError("--speed applies to --clock realtime only")
    if speed is not None and not (math.isfinite(speed) and 0 < speed <= 1_000_000):
        raise click.BadParameter("must be a number above 0, at most 1000000",
                                 param_hint="--speed")
    if not _TOKEN.fullmatch(operator_token):
        raise click.BadParameter("must be 8 to 256 visible ASCII characters, no spaces",
                                 param_hint="--operator-token")
    if world is not None and environment is not None \
            and environment != world.world.environment:
        raise click.UsageError(f"--environment {environment} contradicts the world file's "
                               f"environment ({world.world.environment})")
    return ServeOptions(operator_token=operator_token, seed=seed,
                        environment=Environment(environment) if environment else None,
                        clock=ClockMode(clock), speed=speed or 1.0, deliver_webhooks=deliver,
                        allow_private_webhook_urls=allow_private, webhook_ca=webhook_ca)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              envvar="CLEARING_SIM_HOST", show_envvar=True,
              help="Address to listen on (loopback unless you mean otherwise).")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              envvar="CLEARING_SIM_PORT", show_envvar=True,
              help="Port to listen on; 0 picks a free one (printed at start).")
@click.option("--seed", type=int, default=None,
              envvar="CLEARING_SIM_SEED", show_envvar=True,
              help="The world's seed.  [default: the world file's seed, or 0]")
@click.option("--operator-token", default=None, metavar="TOKEN",
              envvar="CLEARING_SIM_OPERATOR_TOKEN", show_envvar=True,
              help="Bearer token for /sim/v1.  [default: a random one, printed at start]")
@click.option("--world", "world_file", type=click.Path(dir_okay=False), default=None,
              envvar="CLEARING_SIM_WORLD", show_envvar=True,
              metavar="FILE.yaml", help="Start from a scenario file's world, members, issuers, "
                                        "agents and webhooks (its steps are not run).")
@click.option("--environment", type=click.Choice(["sandbox", "production"]), default=None,
              envvar="CLEARING_SIM_ENVIRONMENT", show_envvar=True,
              help="The world's environment.  [default: the world file's, or sandbox]")
@click.option("--clock", type=click.Choice(["manual", "realtime"]), default="manual",
              envvar="CLEARING_SIM_CLOCK", show_envvar=True,
              show_default=True, help="manual: time moves only on POST /sim/v1/clock/advance; "
                                      "realtime: it follows the wall clock.")
@click.option("--speed", type=float, default=None,
              help="Realtime only: virtual seconds per wall second.  [default: 1]")
@click.option("--deliver-webhooks", is_flag=True,
              help="POST due webhook deliveries to the subscribed URLs for real (httpx).")
@click.option("--allow-private-webhook-urls", is_flag=True,
              help="Accept webhook URLs on loopback/private addresses and http:// (a receiver "
                   "on your own machine).")
@click.option("--webhook-ca", default=None, metavar="PEM",
              help="With --deliver-webhooks: also trust this CA bundle for https receivers "
                   "(a receiver under test with a private CA's certificate).")
@click.option("--access-log", is_flag=True,
              help="Print one line per HTTP request (uvicorn's access log).")
@click.option("--journal", "journal_file", type=click.Path(dir_okay=False), default=None,
              envvar="CLEARING_SIM_JOURNAL", show_envvar=True,
              metavar="FILE", help="Append every change to this journal, durable before its "
                                   "answer; an existing journal is replayed first (restart).")
@click.option("--history-dir", type=click.Path(file_okay=False, exists=True), default=None,
              envvar="CLEARING_SIM_HISTORY_DIR", show_envvar=True, metavar="DIR",
              help="Keep the world's history (log records, finished transactions) in an "
                   "SQLite file made in DIR, removed at exit.  [default: the temporary "
                   "directory]")
@click.option("--history-in-memory", is_flag=True,
              help="Keep the history in memory instead (memory grows with it).")
@limit_options
def serve(host: str, port: int, seed: int | None, operator_token: str | None,
          world_file: str | None, environment: str | None, clock: str, speed: float | None,
          deliver_webhooks: bool, allow_private_webhook_urls: bool, webhook_ca: str | None,
          access_log: bool, journal_file: str | None, history_dir: str | None,
          history_in_memory: bool, limits: ServeLimits) -> None:
    """Serve the API over HTTP on a simulated world whose clock you drive.

    /api/v1 is the service's API (the same bytes as in-process), /sim/v1 the operator
    surface (Authorization: Bearer TOKEN), /openapi.json the OpenAPI document. See
    docs/http.md. An option that names an env var below may come from it instead (how the
    container image is configured); the command line wins over the environment.

    \b
    Example:
      clearing-sim serve --seed 7 --operator-token devtoken1 --port 8080
      curl -s -H 'Authorization: Bearer devtoken1' localhost:8080/sim/v1/clock
      curl -s -X POST -H 'Authorization: Bearer devtoken1' \\
           -d '{"seconds": 3600}' localhost:8080/sim/v1/clock/advance
    """
    world = None if world_file is None else load_world_or_exit(world_file)
    existing = read_existing(journal_file)
    if existing is not None:  # a restart: what the command line leaves out, the journal says
        seed = existing.header.seed if seed is None else seed
        environment = environment or (None if world is not None
                                      else existing.header.environment)
    token = operator_token if operator_token is not None else secrets.token_urlsafe(24)
    options = _options(seed, token, environment, clock, speed, deliver_webhooks,
                       allow_private_webhook_urls, world, _trust(webhook_ca, deliver_webhooks))
    if history_in_memory and history_dir is not None:
        raise click.UsageError("--history-dir and --history-in-memory contradict each other")
    options = attrs.evolve(options, history_on_disk=not history_in_memory,
                           history_dir=None if history_dir is None else Path(history_dir))
    try:
        app = create_app(options, scenario=world, echo=_echo_delivery, owns_heap=True,
                         journal_pending=journal_file is not None)
    except SetupFailed as error:  # the world file's line and field at fault
        site = error.site
        click.echo(f"{world_file}:{site.line}:{site.column}: {site.field}: {error}", err=True)
        raise click.exceptions.Exit(2) from None
    except StepFailed as error:
        raise click.UsageError(f"{world_file}: {error}") from None
    journaled = [] if journal_file is None else start_journal(
        app, Path(journal_file), world_file, existing, token_given=operator_token is not None)
    sock = _bind(host, port)
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if ":" in str(bound[0]) else str(bound[0])
    base = f"http://{shown}:{bound[1]}"
    sim = app.state.sim
    click.echo(f"clearing-sim serving on {base}  ({sim.world.config.environment.value} world, "
               f"seed {sim.seed}, {clock} clock at {sim.world.iso()})")
    click.echo(f"operator token: {token}   (Authorization: Bearer {token} on /sim/v1)")
    warning = token_warning(token)
    if warning is not None:
        click.echo(warning, err=True)
    click.echo(f"OpenAPI: {base}/openapi.json")
    for line in journaled:
        click.echo(line)
    for staged in sim.staged:
        click.echo(f"participant {staged.key}: {staged.participant.id} "
                   f"({staged.participant.kind.value}) API key {staged.api_key}")
    for hook in sim.staged_webhooks:
        click.echo(f"webhook {hook.key}: {hook.subscription_id} {hook.url} signing secret "
                   f"{hook.signing_secret}")
    if sim.staged_webhooks:
        click.echo(f"(every subscription's secret: GET {base}/sim/v1/webhooks)")
    if host not in _LOOPBACK:
        click.echo(f"warning: listening on {host}, not loopback: anyone who can reach it can "
                   "use the API keys and secrets it prints", err=True)
    sys.stdout.flush()
    server = GuardedServer(app, limits, protocol=EnvelopeH11Protocol, access_log=access_log,
                           lifespan="on", use_colors=colour_wanted())
    if access_log:  # log_level applies to the access logger too: let its lines through
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    # uvicorn stops cleanly on SIGINT or SIGTERM, then re-raises the signal to the handler
    # that was there before: for SIGTERM (kill, a service manager) too, that ends here. A
    # signal that came while the two were blocked is raised as term_as_interrupt lifts the
    # block, before the server runs: the outer suppress stops that one as cleanly.
    with contextlib.suppress(KeyboardInterrupt), term_as_interrupt():
        server.run(sockets=[sock])
    if sim.journal is not None:
        sim.journal.writer.close()
    click.echo(f"clearing-sim stopped at virtual {sim.world.iso()}, digest "
               f"{sim.world.log.digest()}")
