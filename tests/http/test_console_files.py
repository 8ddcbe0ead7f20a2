"""``/sim/console`` (issue 28 §1): the console's files from inside the package, under a strict
Content-Security-Policy, answered without a token and without touching the world."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from clearing_sim.http.console_files import CONSOLE_POLICY, asset_text
from tests.http.conftest import Client, make_client
from tests.service.test_hostile_input import state_digest


@pytest.fixture
def client() -> Iterator[Client]:
    made = make_client(seed=3)
    yield made
    made.close()


@pytest.mark.parametrize(("path", "kind"), [
    ("/sim/console", "text/html"), ("/sim/console/", "text/html"),
    ("/sim/console/index.html", "text/html"), ("/sim/console/story.js", "text/javascript"),
    ("/sim/console/console.js", "text/javascript"), ("/sim/console/console.css", "text/css"),
    ("/sim/console/favicon.svg", "image/svg+xml")])
def test_console_files_are_served_with_a_strict_policy(client: Client, path: str,
                                                       kind: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith(kind)
    assert answer.headers["content-security-policy"] == CONSOLE_POLICY
    assert "script-src 'self'" in CONSOLE_POLICY and "unsafe-inline" not in CONSOLE_POLICY
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_the_page_has_no_inline_script_and_no_other_origin() -> None:
    """No CDN, no network (issue 28 §1): every script and stylesheet is a file of ours, and
    no inline script or handler (the policy would block it)."""
    page = asset_text("index.html")
    assert re.findall(r"<script[^>]*>\s*</script>", page) and not re.search(
        r"<script(?![^>]*\bsrc=)[^>]*>", page)
    assert not re.search(r"\son[a-z]+=", page)
    for name in ("index.html", "story.js", "console.js", "console.css"):
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", asset_text(name)), name
    script = asset_text("console.js")
    for storage in ("localStorage", "sessionStorage", "document.cookie", "indexedDB"):
        assert storage not in script.replace("localStorage or sessionStorage", "")


def test_console_answers_touch_nothing_and_refuse_other_methods(client: Client) -> None:
    world = client.sim.world
    before = state_digest(world), len(world.log)
    for _ in range(5):
        assert client.get("/sim/console").status_code == 200
        assert client.request("HEAD", "/sim/console/console.js").status_code == 200
    assert client.get("/sim/console/secret.txt").status_code == 404
    assert client.get("/sim/console/..%2Fv1%2Fclock").status_code == 404
    assert client.get("/sim/console/story.js/x").status_code == 404
    refused = client.post("/sim/console", content=b"{}")
    assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"
    assert (state_digest(world), len(world.log)) == before
