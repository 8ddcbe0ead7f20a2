"""``POST /sim/v1/conformance/receivers``: the receiver battery, run from a running shim.

Public names: ``ROUTES``.

The body: ``url`` (the receiver, http or https), ``secret`` (its signing secret),
``apiKey`` (the API key the receiver fetches transactions with: a clearing member of this
world holding at least 40.00 of an asset whose issuer takes instructions, Mode 2 or 3) and
an optional ``probeUrl`` (docs/conformance.md). The battery stages four redeems of that
member in this world, moves this world's clock (about a minute of virtual time) and answers
200 with the report (``clearing_sim.conformance.report.to_json``: each check's verdict and
evidence). A receiver that does not answer at all is 400 ``receiver_unreachable`` on
``url``; a key the world cannot stage with is 409 (``kit_api_key_unknown``,
``kit_not_a_member``, ``kit_nothing_to_redeem``). During the battery the shim answers the
receiver's next fetch of one staged transaction with 503 once, in the API's place (the
world never sees that request). The route does not hold the world lock
(the clock takes it), so the receiver's fetches are served while the battery waits for its
answers.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httpx

from clearing_sim.conformance.receiver_kit import (
    KitOptions,
    TargetUnreachable,
    http_url_problem,
    run_battery,
)
from clearing_sim.conformance.receiver_stage import Stage
from clearing_sim.conformance.report import to_json
from clearing_sim.domain.errors import InvalidRequest
from clearing_sim.http.surface import OperatorContext, OperatorRoute
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Reply

__all__ = ["ROUTES"]

_URL_MAX = 2048


def _url(f: Fields, name: str, *, required: bool) -> str | None:
    value = f.text(name, required=required, length_max=_URL_MAX)
    if value is not None and http_url_problem(value) is not None:
        f.problem(name, "invalid_value", f"{name} must be an http:// or https:// URL with a "
                                         "host and a port from 1 to 65535")
        return None
    return value


async def run_receivers(ctx: OperatorContext) -> Reply:
    f = ctx.fields()
    url = _url(f, "url", required=True)
    secret = f.text("secret", length_max=1000)
    api_key = f.text("apiKey", length_max=200)
    probe_url = _url(f, "probeUrl", required=False)
    f.done()
    assert url is not None and secret is not None and api_key is not None
    async with ctx.sim.world_lock:
        stage = Stage.open(ctx.sim, ctx.clock, api_key)  # checks; stages nothing yet
    try:
        closed = await _unreachable(url)
        if closed is not None:  # before anything is staged: a refusal changes nothing
            raise InvalidRequest.one("url", "receiver_unreachable",
                                     f"the receiver did not answer: {closed}")
        async with httpx.AsyncClient() as client:
            report = await run_battery(stage, KitOptions(url, secret, probe_url), client)
    except TargetUnreachable as error:
        raise InvalidRequest.one("url", "receiver_unreachable",
                                 f"the receiver did not answer: {error}") from None
    finally:
        stage.close()
    return Reply(200, to_json(report))


async def _unreachable(url: str) -> str | None:
    """Why no TCP connection to the receiver's host and port opens within 5 s, or None."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), 5.0)
    except (OSError, TimeoutError) as error:
        return f"{type(error).__name__}: {error}"[:300]
    writer.close()
    return None


ROUTES: tuple[OperatorRoute, ...] = (
    OperatorRoute("POST", "/sim/v1/conformance/receivers", run_receivers,
                  "run the receiver conformance battery against a webhook receiver",
                  exclusive=False),
)
