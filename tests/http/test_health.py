"""``GET /sim/v1/health`` (issue 27, section 2): ``{alive, ready}`` without a credential,
ready only once the world is built and the journal replayed, and nothing changed or revealed
by any number of calls, whatever their method, headers or query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.health import HEALTH_PATH
from clearing_sim.http.journal import read_journal
from clearing_sim.http.options import ClockMode
from clearing_sim.http.replay import open_journal
from tests.http.conftest import TOKEN, Client, add, issuer_body, member_body, redeem_body
from tests.http.test_hostile_http import call
from tests.service.test_hostile_input import state_digest
from tests.strategies import hostile_texts


def _health(app: Starlette, headers: list[tuple[bytes, bytes]] | None = None,
            method: str = "GET", query: bytes = b"") -> tuple[int, dict[str, Any]]:
    sent = call(app, method, HEALTH_PATH, query, headers or [])
    return sent.status, json.loads(sent.body) if sent.body else {}


def test_health_needs_no_credential_and_answers_alive_and_ready() -> None:
    """Issue 27 §2: the one /sim/v1 route without the operator token."""
    app = create_app(ServeOptions(operator_token=TOKEN, seed=31))
    status, body = _health(app)
    assert status == 200, body
    assert body["data"] == {"alive": True, "ready": True}
    assert set(body) == {"data", "meta"} and set(body["meta"]) == {"commandId"}
    # the route next to it still needs the token (the exception is one route, not a prefix)
    assert call(app, "GET", "/sim/v1/clock").status == 401


@pytest.mark.parametrize("credential", [b"Bearer not-the-token", b"Basic eDp5", b"Bearer ",
                                        f"Bearer {TOKEN}".encode()])
def test_health_with_any_credential_reveals_nothing_else(credential: bytes) -> None:
    """A wrong token is ignored (still 200), and the right one earns nothing more: no seed,
    version, clock or digest in the answer."""
    app = create_app(ServeOptions(operator_token=TOKEN, seed=424242))
    status, body = _health(app, [(b"authorization", credential)])
    assert status == 200 and body["data"] == {"alive": True, "ready": True}
    text = json.dumps(body)
    for secret in ("424242", app.state.sim.world.log.digest(), "2026", TOKEN):
        assert secret not in text


def test_other_methods_on_health_are_405_with_allow() -> None:
    app = create_app(ServeOptions(operator_token=TOKEN))
    sent = call(app, "POST", HEALTH_PATH, headers=[(b"authorization", f"Bearer {TOKEN}".encode())])
    assert sent.status == 405 and sent.headers[b"allow"] == b"GET, HEAD"
    assert call(app, "HEAD", HEALTH_PATH).status == 200


def test_ready_is_false_until_the_journal_is_replayed(tmp_path: Path) -> None:
    """Issue 27 §2: ``ready`` only once the world is loaded and the journal replayed. A
    journaled session is served again (as ``clearing-sim serve --journal`` does: the app
    first, the replay next): before ``open_journal`` the shim says not ready, after it
    ready, and the replayed world is the session's."""
    path = tmp_path / "session.jsonl"
    first = create_app(ServeOptions(operator_token=TOKEN, seed=3))
    open_journal(first, path, None, None)
    client = Client(first)
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    client.post("/api/v1/transactions", headers=member.auth, json=redeem_body(issuer.asset))
    client.advance(60)
    digest = first.state.sim.world.log.digest()
    first.state.sim.journal.writer.close()
    client.close()

    again = create_app(ServeOptions(operator_token=TOKEN, seed=3), journal_pending=True)
    assert _health(again)[1]["data"] == {"alive": True, "ready": False}
    open_journal(again, path, None, read_journal(path))
    assert _health(again)[1]["data"] == {"alive": True, "ready": True}
    assert again.state.sim.world.log.digest() == digest
    again.state.sim.journal.writer.close()


def test_health_does_not_catch_the_realtime_clock_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any other /sim/v1 request first runs a realtime world up to the wall clock (a change):
    health does not. The clock read after it shows the catch-up health left alone."""
    app = create_app(ServeOptions(operator_token=TOKEN, clock=ClockMode.REALTIME))
    wall = [100.0]
    clock = app.state.clock
    monkeypatch.setattr(clock, "_wall_s", lambda: wall[0])
    clock.rebase()
    wall[0] += 5.0  # five wall seconds: five virtual seconds are due
    before = app.state.sim.world.now_ms
    assert _health(app)[0] == 200
    assert app.state.sim.world.now_ms == before
    assert call(app, "GET", "/sim/v1/clock", headers=[
        (b"authorization", f"Bearer {TOKEN}".encode())]).status == 200
    assert app.state.sim.world.now_ms == before + 5000  # what health did not do


# any number of calls, any method, headers, query: nothing changes --------------------------
def _session(journal: Path | None) -> Starlette:
    """A shim (journaled to ``journal``) with a cast, a transaction and a minute run."""
    app = create_app(ServeOptions(operator_token=TOKEN, seed=8))
    if journal is not None:
        open_journal(app, journal, None, None)
    client = Client(app)
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    client.post("/api/v1/transactions", headers=member.auth, json=redeem_body(issuer.asset))
    client.advance(30)
    client.loop.close()
    return app


@pytest.fixture(scope="module")
def journaled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Starlette, Path]:
    path = tmp_path_factory.mktemp("health") / "health.jsonl"
    return _session(path), path


_HEADERS = st.lists(st.tuples(
    st.sampled_from([b"authorization", b"content-type", b"idempotency-key", b"x-a", b"cookie"]),
    st.binary(max_size=30) | st.sampled_from([f"Bearer {TOKEN}".encode(), b"Bearer x"])
    | hostile_texts(15).map(lambda t: t.encode("utf-8", "surrogatepass"))), max_size=3)
_QUERIES = st.sampled_from([b"", b"verbose=1", b"ready", b"%ff%fe=%ed%a0%80", b"a=1&a=2"]) \
    | st.binary(max_size=20)
_METHODS = st.sampled_from(["GET", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
                            "get", "X-" + "Y" * 40])


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(method=_METHODS, headers=_HEADERS, query=_QUERIES,
       body=st.sampled_from([b"", b"{}", b'{"seed": 1}', b"\xff" * 10]))
def test_no_health_request_changes_the_world_the_log_or_the_journal(
        journaled: tuple[Starlette, Path], method: str,
        headers: list[tuple[bytes, bytes]], query: bytes, body: bytes) -> None:
    """Issue 27 §2: health changes nothing in the world, writes nothing to the event log or
    the journal. Every method, header and query on its path: the digest, the log's length
    and the journal's bytes stay; the answer is 200, 400 (a query, a malformed header) or
    405 (another method), never 5xx."""
    app, path = journaled
    sim = app.state.sim
    sim.journal.writer.flush()
    digest, records, journal_bytes = state_digest(sim.world), len(sim.world.log), \
        path.read_bytes()
    for _ in range(3):
        sent = call(app, method, HEALTH_PATH, query, headers, body)
        assert sent.status in (200, 400, 405), (sent.status, sent.body)
        if sent.status == 200 and method.upper() == "GET":
            assert json.loads(sent.body)["data"] == {"alive": True, "ready": True}
    sim.journal.writer.flush()
    assert state_digest(sim.world) == digest
    assert len(sim.world.log) == records
    assert path.read_bytes() == journal_bytes, path.read_bytes()[len(journal_bytes):]


def test_health_draws_no_operator_command_id() -> None:
    """The operator's commandIds come from a seeded stream: a health call drawing one would
    shift every later operator answer's id (and show an unauthenticated caller a value of
    the seed's). After health calls a shim's next operator commandId is its twin's (same
    seed, same calls, no health call)."""
    app, twin = _session(None), _session(None)
    for _ in range(5):
        assert call(app, "GET", HEALTH_PATH).status == 200
    operator = [(b"authorization", f"Bearer {TOKEN}".encode())]
    ids = [json.loads(call(a, "GET", "/sim/v1/clock", headers=operator).body)["meta"]
           ["commandId"] for a in (app, twin)]
    assert ids[0] == ids[1]
