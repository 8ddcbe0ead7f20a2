"""``clearing_sim.testing`` and its pytest fixtures (issue 27, section 3): a served world
started from a test suite, ready when health says so, reset per test with new keys, its
output on a failed test's report, and always stopped (an exception, Ctrl-C, a server that
cannot start): no process or port left behind."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import httpx
import pytest

from clearing_sim.testing import ServedWorld, ServerFailed, served_world
from tests.http.served import WORLD

pytest_plugins = ["pytester"]


def _children() -> set[int]:
    """This process's live child processes (Linux's /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        found |= {int(pid) for pid in (task / "children").read_text().split()}
    return {pid for pid in found if Path(f"/proc/{pid}").exists()
            and "Z" not in (Path(f"/proc/{pid}/stat").read_text().split(") ")[1][:1])}


def _refused(base_url: str) -> bool:
    host, port = base_url.removeprefix("http://").rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except OSError:
        return True
    return False


def test_a_served_world_file_gives_its_keys_and_a_reset_gives_new_ones(tmp_path: Path) -> None:
    """Issue 27 §3: "a reset issues new API keys: the client hands out the new ones". The
    world file's participants' keys work on /api/v1; a reset with another seed issues
    others: the old key is refused, ``api_keys`` holds the new one, which works."""
    world = tmp_path / "world.yaml"
    world.write_text(WORLD, encoding="utf-8")
    with served_world(world) as server:
        health = httpx.get(f"{server.base_url}/sim/v1/health").json()["data"]
        assert health == {"alive": True, "ready": True}
        old = server.api_keys["northbank"]
        listing = server.client.http.get("/api/v1/transactions",
                                         headers={"Authorization": f"Bearer {old}"})
        assert listing.status_code == 200, listing.text
        answer = server.reset(seed=6)
        assert answer["seed"] == 6
        new = server.api_keys["northbank"]
        assert new != old
        assert server.client.http.get("/api/v1/transactions", headers={
            "Authorization": f"Bearer {old}"}).status_code == 401
        assert server.client.http.get("/api/v1/transactions", headers={
            "Authorization": f"Bearer {new}"}).status_code == 200
        listed = server.client.http.get("/sim/v1/participants").json()["data"]
        assert server.participant_ids["northbank"] in {p["participantId"] for p in listed}


@pytest.mark.parametrize("interruption", [
    KeyboardInterrupt, pytest.param(AssertionError, marks=pytest.mark.slow)])
def test_the_server_is_stopped_however_the_block_ends(
        interruption: type[BaseException]) -> None:
    """A failed assertion or Ctrl-C inside the block: the server is stopped, its port
    closed, no child process left; its output (the digest line it prints on Ctrl-C) kept."""
    before = _children()
    held: list[ServedWorld] = []
    with pytest.raises(interruption), served_world() as server:
        held.append(server)
        assert server.process.pid in _children()
        raise interruption("stop here")
    server = held[0]
    assert server.process.returncode is not None
    assert _refused(server.base_url)
    assert _children() == before
    assert "clearing-sim stopped at virtual" in server.stdout


def test_a_server_that_cannot_start_raises_with_its_output_and_leaves_nothing(
        tmp_path: Path) -> None:
    before = _children()
    world = tmp_path / "broken.yaml"
    world.write_text("world: {seed: 1}\nmembers:\n  northbank: {name: 7}\n", encoding="utf-8")
    with pytest.raises(ServerFailed, match=r"exited \(2\)[\s\S]*broken.yaml:3"), \
            served_world(world):
        pass  # pragma: no cover - never reached
    assert _children() == before


# the fixtures, as a user's suite gets them -------------------------------------------------
INNER = '''
def test_reset_gives_each_test_a_fresh_world(clearing_sim):
    assert clearing_sim.client.reset()["seed"] == 0
    clearing_sim.client.add_participant({"kind": "clearing_member", "name": "Northbank"})
    assert len(clearing_sim.client.http.get("/sim/v1/participants").json()["data"]) == 1
    clearing_sim.reset(seed=9)  # the next test still starts from the session's seed


def test_and_again(clearing_sim):
    test_reset_gives_each_test_a_fresh_world(clearing_sim)


def test_fails_after_a_request(clearing_sim):
    clearing_sim.client.http.get("/sim/v1/clock?marker=1")
    assert False, "a deliberate failure"
'''


def test_the_fixture_resets_per_test_and_a_failure_shows_the_servers_output(
        pytester: pytest.Pytester) -> None:
    """Two tests each add one participant and see one, and find the session's seed though
    the first left the server on another (the per-test reset); the failing
    test's report shows the server's output since its reset: its own request, not the
    earlier tests'. The inner session's server is gone when it ends, failure and all."""
    before = _children()
    pytester.makepyfile(test_inner=INNER)
    done = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q",
                                        "-W", "ignore::pytest.PytestAssertRewriteWarning")
    out = done.stdout.str()
    done.assert_outcomes(passed=2, failed=1)
    section = out[out.index("clearing-sim serve output"):]
    assert "GET /sim/v1/clock?marker=1 HTTP/1.1\" 400" in section, out
    assert "POST /sim/v1/participants" not in section, out
    assert _children() == before
