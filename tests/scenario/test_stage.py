"""The stage a file's run builds: a ``ServiceAPI`` that makes its read indexes at the first
read (``read_indexes=False``, issue 30 §3) answers every request with the bytes one that keeps
them from the start answers (a served world's, issue 30 §2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clearing_sim.scenario import stage as stage_module
from clearing_sim.scenario.loader import load_scenario
from clearing_sim.scenario.runner import play
from clearing_sim.service.api import ServiceAPI
from clearing_sim.service.messages import Request, Response

ROOT = Path(__file__).resolve().parents[2]
#: the files that read the status check (its RTGS and latency figures) and the lists
READERS = ["rtgs-calendar-friday-evening-redeem-settles-monday.yaml",
           "production-sandbox-routes-are-503.yaml", "list-cursors-cannot-be-forged.yaml",
           "silence-parks-exactly-at-sla.yaml"]


def _answers(monkeypatch: pytest.MonkeyPatch, name: str, read_indexes: bool) -> list[Any]:
    """Every request of the file's run and its answer, bytes and all, and the run's result,
    with the stage's API keeping its read indexes from the start or not."""
    seen: list[Any] = []
    handle = ServiceAPI.handle
    stage_init = stage_module.Stage.__init__

    def recorded(api: ServiceAPI, request: Request, **options: Any) -> Response:
        response = handle(api, request, **options)
        seen.append((request, response.status, response.headers, response.body))
        return response

    def staged(self: Any, *args: Any, **kwargs: Any) -> None:
        stage_init(self, *args, **{**kwargs, "read_indexes": read_indexes})

    with monkeypatch.context() as patched:  # each run's own patches, undone after it
        patched.setattr(ServiceAPI, "handle", recorded)
        patched.setattr(stage_module.Stage, "__init__", staged)
        result, stage = play(load_scenario(ROOT / "scenarios" / name))
        status = stage.request("GET", "/api/v1/system/status",
                               stage.keys[next(iter(stage.keys))])
    assert len(seen) > 2
    return [*seen, result, status.body]


@pytest.mark.parametrize("name", READERS)
def test_read_indexes_made_at_the_first_read_answer_the_same_bytes(
        monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    kept = _answers(monkeypatch, name, read_indexes=True)
    made_late = _answers(monkeypatch, name, read_indexes=False)
    assert made_late == kept
