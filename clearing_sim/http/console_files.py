"""``/sim/console``: the console's static files, served from inside the package.

Public names: ``CONSOLE_PATH``, ``CONSOLE_POLICY``, ``asset_text``, ``console_response``,
``is_console``.

The console (issue 28) is five files in ``clearing_sim/stories/console/`` (``index.html``,
``story.js``, ``console.js``, ``console.css``, ``favicon.svg``): no CDN, nothing fetched
from the network, no build step. ``GET``/``HEAD`` ``/sim/console`` (or ``/sim/console/``)
is ``index.html``; ``/sim/console/<file>`` the file. Answering them touches nothing: no
clock catch-up, no world lock, no journal, no command id; no credential is asked (the page
holds no data: it asks for the operator token and reads through the quiet ``/sim/v1``
routes with it). Each answer carries a strict ``Content-Security-Policy``: scripts and
styles from this origin only, no inline script, requests to this origin only, no framing;
and ``Cache-Control: no-store``, ``Referrer-Policy: no-referrer``,
``X-Content-Type-Options: nosniff``.
"""

from __future__ import annotations

from clearing_sim.service.messages import Request, Response
from clearing_sim.stories.assets import ASSET_TYPES, asset_bytes, asset_text

__all__ = ["CONSOLE_PATH", "CONSOLE_POLICY", "asset_text", "console_response", "is_console"]

CONSOLE_PATH = "/sim/console"
CONSOLE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; "
                  "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
                  "frame-ancestors 'none'")
_TYPES = ASSET_TYPES
_HEADERS = (("Content-Security-Policy", CONSOLE_POLICY), ("Cache-Control", "no-store"),
            ("Referrer-Policy", "no-referrer"), ("X-Content-Type-Options", "nosniff"),
            ("X-Frame-Options", "DENY"))
_TEXT = (("Content-Type", "text/plain; charset=utf-8"),)


def is_console(path: str) -> bool:
    return path == CONSOLE_PATH or path.startswith(CONSOLE_PATH + "/")


def console_response(request: Request) -> Response:
    """The file for a console path: 200, 404 for an unknown file, 405 for another method."""
    name = request.path[len(CONSOLE_PATH):].lstrip("/") or "index.html"
    if name not in _TYPES:
        return Response(404, (*_TEXT, *_HEADERS), b"not found\n")
    if request.method not in ("GET", "HEAD"):
        return Response(405, (*_TEXT, *_HEADERS, ("Allow", "GET, HEAD")),
                        b"method not allowed\n")
    return Response(200, (("Content-Type", _TYPES[name]), *_HEADERS), asset_bytes(name))
