"""(to be written)"""

from __future__ import annotations

from clearing_sim.service.context import Route

__all__ = ["ROUTES"]

ROUTES: tuple[Route, ...] = ()
