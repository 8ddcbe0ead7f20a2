"""The shim's application with every seam wired: what ``clearing_sim.http.create_app`` is.

Public names: ``create_app``.

``create_app(options, ...)`` is ``http.app.create_app`` (same arguments) with the journal's
replay (``http.replay.rebuild``) handed to the operator surface, so ``POST /sim/v1/rewind``
can rebuild a world. The app module and the route tables do not import the replay: the
replay builds operator surfaces and, for ``clearing-sim journal``, apps of its own (the
assembly is here, above both, as Starlette's app is assembled from routes that do not
import it).
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette

from clearing_sim.http import app
from clearing_sim.http.delivery import RealOutcome
from clearing_sim.http.options import ServeOptions
from clearing_sim.http.replay import rebuild
from clearing_sim.scenario.model import Scenario
from clearing_sim.sim.receivers import Arrival

__all__ = ["create_app"]


def create_app(options: ServeOptions, *, scenario: Scenario | None = None,
               echo: Callable[[Arrival, RealOutcome], None] | None = None,
               owns_heap: bool = False, journal_pending: bool = False) -> Starlette:
    """``http.app.create_app`` with rewind wired (``http.replay.rebuild``)."""
    return app.create_app(options, scenario=scenario, echo=echo, owns_heap=owns_heap,
                          journal_pending=journal_pending, rebuild=rebuild)
