"""``/sim/v1/rtgs/calendar``: the RTGS's business hours on the operator surface (beyond the
spec; issue 29 §4, docs/http.md): read, set, cleared, refused field by field, and obeyed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.cli import load_world
from tests.http.conftest import TOKEN, Client, Shim

PATH = "/sim/v1/rtgs/calendar"
CHAPS = {"timeZone": "Europe/London", "opens": "06:00", "cutOff": "17:40", "closes": "18:00",
         "closedWeekdays": ["saturday", "sunday"], "holidays": ["2026-01-01", "2026-01-02"]}


def test_without_a_calendar_the_rtgs_is_always_open(client: Client) -> None:
    response = client.op("GET", PATH)
    assert response.status_code == 200
    assert response.json()["data"] == {"calendar": None, "rtgsConnection": "connected",
                                       "nextOpeningAt": None}


def test_a_calendar_is_set_reported_logged_and_cleared(client: Client) -> None:
    # the shim's epoch 2026-01-01T00:00Z: New Year's Day and Friday 2 January are holidays
    # here, then the weekend: closed, and the next opening is Monday 5 January 06:00 GMT
    response = client.op("PUT", PATH, {"calendar": CHAPS})
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"calendar": CHAPS, "rtgsConnection": "closed",
                                       "nextOpeningAt": "2026-01-05T06:00:00.000Z"}
    assert client.op("GET", PATH).json()["data"]["calendar"] == CHAPS
    [record] = client.sim.world.log.select("rtgs.calendar")
    assert record["calendar"] == CHAPS
    cleared = client.op("PUT", PATH, {"calendar": None})
    assert cleared.json()["data"] == {"calendar": None, "rtgsConnection": "connected",
                                      "nextOpeningAt": None}
    assert client.sim.world.rtgs.calendar is None


@pytest.mark.parametrize(("body", "param", "code"), [
    ({}, "calendar", "required"),
    ({"calendar": "06:00-18:00"}, "calendar", "invalid_body"),
    ({"calendar": {**CHAPS, "timeZone": "Europe/Paris/Left"}}, "calendar.timeZone",
     "invalid_value"),
    ({"calendar": {**CHAPS, "cutOff": "18:30"}}, "calendar.cutOff", "invalid_value"),
    ({"calendar": {**CHAPS, "holidays": ["2026-13-01"]}}, "calendar.holidays[0]",
     "invalid_value"),
    ({"calendar": {**CHAPS, "contingency": "20:00"}}, "calendar.contingency", "unknown_field"),
    ({"calendar": CHAPS, "also": 1}, "also", "unknown_field"),
])
def test_a_bad_calendar_is_400_naming_the_field_and_changes_nothing(
        client: Client, body: dict[str, Any], param: str, code: str) -> None:
    before = len(client.sim.world.log)
    response = client.op("PUT", PATH, body)
    assert response.status_code == 400, response.text
    error = response.json()["errors"][0]
    assert (error["param"], error["code"]) == (param, code), error
    assert client.sim.world.rtgs.calendar is None
    assert not client.sim.world.log.select("rtgs.calendar")
    assert len(client.sim.world.log) >= before


def test_a_redeem_asked_while_closed_is_earmarked_at_the_opening(shim: Shim) -> None:
    client = shim.client
    client.op("PUT", PATH, {"calendar": {**CHAPS, "holidays": []}})
    tx = shim.initiate()
    client.advance(3_600)
    world = client.sim.world
    [wait] = world.log.select("rtgs.closed_wait", transactionId=tx)
    assert wait["reopensAt"] == "2026-01-01T06:00:00.000Z"
    status = client.get("/api/v1/system/status", headers=shim.member.auth)
    assert status.json()["data"]["rtgsConnection"] == "closed"
    client.advance(5 * 3_600)  # 06:00
    [earmark] = world.log.select("rtgs.earmark", transactionId=tx)
    assert world.iso(earmark.at_ms) == "2026-01-01T06:00:00.000Z"


def test_a_served_world_file_s_calendar_is_kept_and_comes_back_on_reset(
        tmp_path: Path) -> None:
    """``serve --world``: the file's ``world.rtgs_calendar`` (snake_case keys) is the RTGS's,
    a PUT changes it, and ``POST /sim/v1/reset`` rebuilds the file's."""
    path = tmp_path / "world.yaml"
    path.write_text('world:\n  epoch: "2026-11-27T17:50:00Z"\n  rtgs_calendar:\n'
                    '    time_zone: Europe/London\n    opens: "06:00"\n'
                    '    cut_off: "17:40"\n    closes: "18:00"\n'
                    '    closed_weekdays: [saturday, sunday]\n'
                    'members:\n  northbank: {}\n')
    client = Client(create_app(ServeOptions(operator_token=TOKEN),
                               scenario=load_world(str(path))))
    try:
        state = client.op("GET", PATH).json()["data"]
        assert state["calendar"] == {**CHAPS, "holidays": []}
        assert (state["rtgsConnection"], state["nextOpeningAt"]) \
            == ("connected", "2026-11-30T06:00:00.000Z")  # 17:50: settling until 18:00
        client.op("PUT", PATH, {"calendar": None})
        assert client.op("POST", "/sim/v1/reset", {}).status_code == 200
        assert client.op("GET", PATH).json()["data"]["calendar"] == {**CHAPS, "holidays": []}
    finally:
        client.close()
