"""The rewind route is handed the journal's replay (issue 32: "the shim's app is assembled from
its route tables"; docs/semantics.md, the request journal): the route tables and
``http.app`` never import ``http.replay``, which builds operator surfaces and apps;
``clearing_sim.http.create_app`` (``http.wired``) hands ``replay.rebuild`` in. An app
assembled without it refuses a rewind, changing nothing; the wired one rewinds.
"""

from __future__ import annotations

from pathlib import Path

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http import app as bare_app
from clearing_sim.http.replay import open_journal
from tests.http.conftest import TOKEN, Client, add, issuer_body


def _rewind_after_a_checkpoint(client: Client) -> tuple[int, str, str, str]:
    """(status, code or name, digest before, digest after) of a rewind to ``cp-1``."""
    assert client.op("POST", "/sim/v1/checkpoints", {}).status_code == 201
    add(client, issuer_body())  # a change after the checkpoint, for the rewind to undo
    before = client.op("GET", "/sim/v1/digest").json()["data"]["digest"]
    answer = client.op("POST", "/sim/v1/rewind", {"checkpoint": "cp-1"})
    after = client.op("GET", "/sim/v1/digest").json()["data"]["digest"]
    body = answer.json()
    said = body["errors"][0]["code"] if answer.status_code >= 400 else body["data"]["name"]
    return answer.status_code, said, before, after


def test_an_app_assembled_without_the_replay_refuses_a_rewind_and_changes_nothing(
        tmp_path: Path) -> None:
    app = bare_app.create_app(ServeOptions(operator_token=TOKEN, seed=3))
    open_journal(app, tmp_path / "j.jsonl", None, None)
    client = Client(app)
    status, code, before, after = _rewind_after_a_checkpoint(client)
    assert (status, code) == (409, "rewind_unavailable") and before == after
    client.close()


def test_the_packages_create_app_rewinds_through_the_replay_it_is_handed(
        tmp_path: Path) -> None:
    app = create_app(ServeOptions(operator_token=TOKEN, seed=3))
    open_journal(app, tmp_path / "j.jsonl", None, None)
    client = Client(app)
    status, name, before, after = _rewind_after_a_checkpoint(client)
    assert (status, name) == (200, "cp-1") and before != after
    client.close()
