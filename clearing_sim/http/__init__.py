"""The HTTP shim: the service's API over HTTP, with a virtual clock the caller controls.

Public names: ``create_app``, ``ClockMode``, ``ServeOptions``.

``create_app(options)`` (``http.wired``: ``http.app.create_app`` with the journal's replay
handed in for rewind) is a Starlette application (served by uvicorn in
``clearing-sim serve``, ``clearing_sim.http.cli``): ``/api/v1`` is ``ServiceAPI.handle`` on
one ``World``, ``/sim/v1`` is the operator surface (``clearing_sim.http.operator``: the clock,
participants, issuer and receiver behaviour, deliveries, balances, the log, reset) and
``/openapi.json`` describes both (``clearing_sim.http.openapi``). The clock is manual or
follows the wall clock (``clearing_sim.http.clock``); with ``deliver_webhooks`` due deliveries
are really POSTed (``clearing_sim.http.delivery``). Nothing below this package imports it.
"""

from __future__ import annotations

from clearing_sim.http.options import ClockMode, ServeOptions
from clearing_sim.http.wired import create_app

__all__ = ["ClockMode", "ServeOptions", "create_app"]
