"""How the project's servers serve: one guarded way for the shim, both reference servers and
the issuer kit's callback receiver.

Public names: ``GuardedServer``, ``ServeLimits``, ``ServerThread``, ``bind``,
``limit_options``.

``clearing-sim serve``, ``receiver serve`` and ``issuer serve`` are doors; each imports
this package (below all of them, above none of them) and none imports another. What it
guarantees (docs/http.md, "Connections and limits"): a header-read deadline (a TLS handshake
included), a connection cap that evicts connections still without a complete request head
rather than refusing new clients, counted log lines instead of one (or a traceback) per
refusal, absolute-form request targets, and no handler run on a body that was cut off
(``clearing_sim.serving.server``, ``clearing_sim.serving.guard``).
"""

from __future__ import annotations

from clearing_sim.serving.server import (
    GuardedServer,
    ServeLimits,
    ServerThread,
    bind,
    limit_options,
)

__all__ = ["GuardedServer", "ServeLimits", "ServerThread", "bind", "limit_options"]
