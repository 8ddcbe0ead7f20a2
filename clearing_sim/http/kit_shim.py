"""The receiver kit's own shim: what ``clearing-sim conformance receiver`` serves.

Public names: ``kit_shim``, ``run_receiver_kit``, ``shim_api_key``.

The kit (``clearing_sim.conformance``) sits below this package and never imports it: it is
handed its shim (``receiver_run.ShimFactory``, giving the stage's ``ServedWorld`` and
``SteppedClock``) from here. ``kit_shim(seed, operator_token)`` is a fresh app
(``http.app.create_app``, manual clock, ``seed_only_keys``) with the kit's cast added
(``receiver_stage.add_cast``), served with ``EnvelopeH11Protocol``;
``run_receiver_kit(options, ...)`` is ``receiver_run.run_kit`` on it; ``shim_api_key(seed)``
is the API key it gives the kit's member for a seed (it depends on the seed alone). The
shim's own conformance route (``http.receiver_conformance``) runs the battery on the served
world instead, and does not import this module (route tables do not import the app).
"""

from __future__ import annotations

from collections.abc import Callable

from clearing_sim.conformance.receiver_kit import KitOptions
from clearing_sim.conformance.receiver_run import KitShim, ServedShim, run_kit
from clearing_sim.conformance.receiver_stage import add_cast
from clearing_sim.conformance.report import Report
from clearing_sim.http.app import create_app
from clearing_sim.http.options import ServeOptions
from clearing_sim.http.protocol import EnvelopeH11Protocol

__all__ = ["kit_shim", "run_receiver_kit", "shim_api_key"]


def kit_shim(seed: int, operator_token: str) -> ServedShim:
    """A fresh shim for the receiver kit (manual clock, ``seed_only_keys``), with its cast."""
    app = create_app(ServeOptions(operator_token=operator_token, seed=seed,
                                  seed_only_keys=True))
    sim = app.state.sim
    key = add_cast(sim.world, lambda pid: sim.api.credentials.issue_api_key(pid)[1])
    return ServedShim(app, sim, app.state.clock, key, EnvelopeH11Protocol)


def shim_api_key(seed: int) -> str:
    """The API key the kit's shim gives its member for this seed."""
    return kit_shim(seed, "unused-operator-token").api_key


async def run_receiver_kit(options: KitOptions, *, host: str = "127.0.0.1", port: int = 0,
                           seed: int = 0,
                           on_ready: Callable[[KitShim], None] | None = None,
                           public_url: str | None = None) -> Report:
    """``receiver_run.run_kit`` on the kit's own shim (``kit_shim``): serve it on
    ``host:port``, run the battery against ``options.url``, stop. ``OSError`` when the port
    cannot be bound; ``TargetUnreachable`` when the receiver gives no answer at all."""
    return await run_kit(options, kit_shim, host=host, port=port, seed=seed,
                         on_ready=on_ready, public_url=public_url)
