"""The console's static files (``console/``): the page, its script, its story renderer.

Public names: ``ASSET_TYPES``, ``asset_bytes``, ``asset_text``.

Five files, no CDN, nothing fetched from the network, no build step (issue 28):
``index.html``, ``story.js``, ``console.js``, ``console.css``, ``favicon.svg``. The shim
serves them (``clearing_sim.http.console_files``); the HTML reports inline them
(``clearing_sim.stories.html_report``), with ``report.js`` as the host of ``story.js``.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

__all__ = ["ASSET_TYPES", "asset_bytes", "asset_text"]

#: the console's files and their media types
ASSET_TYPES = {"index.html": "text/html; charset=utf-8",
               "story.js": "text/javascript; charset=utf-8",
               "console.js": "text/javascript; charset=utf-8",
               "console.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml"}
#: the reports' host of story.js (inlined into report pages, not served)
_REPORT_HOST = "report.js"


@cache
def asset_bytes(name: str) -> bytes:
    return files("clearing_sim.stories").joinpath("console", name).read_bytes()


def asset_text(name: str) -> str:
    """One of the console's files as text, or ``report.js`` (the HTML reports inline them)."""
    if name not in ASSET_TYPES and name != _REPORT_HOST:
        raise KeyError(name)
    return asset_bytes(name).decode("utf-8")
