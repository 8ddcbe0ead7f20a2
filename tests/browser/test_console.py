"""The console in headless Chromium against a real ``clearing-sim serve`` (issue 28 §4): it
loads without errors, shows a redeem made through the API, settles it with its own advance
control and tells its story, says why a transaction parked, keeps the token out of URLs,
cookies and storage, and changes no digest by being open."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from clearing_sim.testing import ServedWorld, served_world
from tests.browser.conftest import browser_required

if not browser_required():  # in CI a missing selenium is an error, not a skip
    pytest.importorskip("selenium", reason="selenium is not installed: pip install -e '.[dev]'")
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

#: the README walkthrough's final digest (docs/http.md, tests/test_readme.py)
README_DIGEST = "f52b4eeefaff94c6159d0e84076e31e37bfb58386de4fa22bec4cc3dbd8054c0"
_WAIT_S = 15


def _wait(browser: Any, condition: Callable[[Any], Any], what: str) -> Any:
    return WebDriverWait(browser, _WAIT_S, poll_frequency=0.05).until(
        condition, f"the console did not show {what} within {_WAIT_S} s")


def _text(browser: Any, element_id: str) -> str:
    return str(browser.find_element(By.ID, element_id).text)


def _connect(browser: Any, world: ServedWorld) -> None:
    """Open the console and give it the token, by keyboard only (type it, press Enter)."""
    browser.get(world.base_url + "/sim/console")
    field = browser.find_element(By.ID, "token")
    field.send_keys(world.operator_token + Keys.ENTER)
    _wait(browser, lambda b: b.find_element(By.ID, "app").is_displayed(), "the app")
    _wait(browser, lambda b: "Connected" in _text(b, "status"), "that it is connected")


def _severe(browser: Any) -> list[dict[str, Any]]:
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _advance(browser: Any, seconds: int) -> None:
    """The console's advance control, by keyboard: type the seconds, press Enter; wait for
    its answer in the status line."""
    field = browser.find_element(By.ID, "advance-seconds")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(str(seconds) + Keys.ENTER)
    _wait(browser, lambda b: f"Advance by {seconds} s: done" in _text(b, "status"),
          f"the advance by {seconds} s done")


def _show_story(browser: Any, transaction_id: str) -> None:
    row = f"tr[data-transaction-id='{transaction_id}'] button.show-story"
    _wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, row), "the transaction's row")
    browser.find_element(By.CSS_SELECTOR, row).click()
    _wait(browser, lambda b: transaction_id in _text(b, "story"), "its story")


class _Api:
    """The README walkthrough's calls, made over HTTP as curl makes them."""

    def __init__(self, world: ServedWorld) -> None:
        self.http = httpx.Client(base_url=world.base_url, timeout=30)
        self.op = {"Authorization": f"Bearer {world.operator_token}"}

    def call(self, method: str, path: str, auth: dict[str, str], body: Any = None,
             expect: int = 200, **headers: str) -> Any:
        answer = self.http.request(method, path, json=body, headers={**auth, **headers})
        assert answer.status_code == expect, (method, path, answer.text)
        return answer.json()["data"] if answer.content else None

    def cast(self) -> tuple[dict[str, Any], dict[str, Any]]:
        self.call("GET", "/sim/v1/clock", self.op)
        issuer = self.call("POST", "/sim/v1/participants", self.op, {
            "kind": "stablecoin_issuer", "name": "Ether Pound", "rtgsBalanceGbp": "1000000.00",
            "assets": [{"code": "GBPE", "ledger": "evm"}]}, 201)
        member = self.call("POST", "/sim/v1/participants", self.op, {
            "kind": "clearing_member", "name": "Northbank", "wallets": {"GBPE": "1000.00"}}, 201)
        return issuer, member

    def subscribe(self, member: dict[str, Any]) -> None:
        self.call("POST", "/api/v1/webhooks", self.key(member), {
            "url": "https://hooks.northbank.example/clearing",
            "events": ["transaction.received", "transaction.in_flight", "transaction.settled",
                       "transaction.cancelled", "transaction.parked", "transaction.failed"]},
            201)

    def redeem(self, issuer: dict[str, Any], member: dict[str, Any], amount: str,
               reference: str, **headers: str) -> str:
        return str(self.call("POST", "/api/v1/transactions", self.key(member), {
            "useCase": "redeem", "paymentReference": reference,
            "source": {"amount": amount, "asset": issuer["assets"][0]},
            "target": {"amount": amount, "asset": {"code": "GBP"}}}, 201, **headers)["id"])

    @staticmethod
    def key(party: dict[str, Any]) -> dict[str, str]:
        return {"Authorization": f"Bearer {party['apiKey']}"}

    def close(self) -> None:
        self.http.close()


def test_the_page_loads_with_no_console_errors(world: ServedWorld, browser: Any) -> None:
    _connect(browser, world)
    _wait(browser, lambda b: "records" in _text(b, "digest"), "the digest")
    assert "manual" in _text(browser, "clock") and "2026-01-01T00:00:00.000Z" in _text(
        browser, "clock")
    assert _severe(browser) == []


def test_a_redeem_settles_from_the_advance_control_and_its_story_shows_the_delivery(
        world: ServedWorld, browser: Any) -> None:
    """Issue 28 §4: a redeem created through the API appears; the console's advance control
    settles it; the story shows transaction.settled and its delivery, with the attempt's
    time as ISO and offset, its status and signature header."""
    api = _Api(world)
    issuer, member = api.cast()
    api.subscribe(member)
    tx = api.redeem(issuer, member, "100.00", "INV-1")
    _connect(browser, world)
    _show_story(browser, tx)
    assert "received" in _text(browser, "transactions")
    _advance(browser, 120)
    _wait(browser, lambda b: "settled: event transaction.settled" in _text(b, "story"),
          "the settled event in the story")
    delivery = browser.find_element(By.CSS_SELECTOR,
                                    "details.delivery[data-event-type='transaction.settled']")
    assert "DELIVERED" in delivery.text
    delivery.find_element(By.TAG_NAME, "summary").click()  # open it, as a reader would
    attempt = delivery.text
    assert "+0:00:43.461" in attempt and "2026-01-01T00:00:43.461Z" in attempt
    assert "t=1767225643,v1=" in attempt and "200" in attempt
    row = browser.find_element(By.CSS_SELECTOR, f"tr[data-transaction-id='{tx}']").text
    assert "settled" in row and "MODE_2_TWO_PHASE" in row
    assert _severe(browser) == []
    api.close()


def test_a_parked_transaction_shows_why(world: ServedWorld, browser: Any) -> None:
    api = _Api(world)
    issuer, member = api.cast()
    tx = api.redeem(issuer, member, "50.00", "INV-2")
    api.call("POST", "/api/v1/conformance/run",
             {"Authorization": f"Bearer {member['adminToken']}"},
             {"scenario": "failed", "transactionId": tx})
    api.call("POST", "/sim/v1/clock/advance", api.op, {"seconds": 120})
    _connect(browser, world)
    _show_story(browser, tx)
    why = browser.find_element(By.CSS_SELECTOR, "#story .parked-why").text
    assert "PARKED" in why and "Parked because: issuer_failed" in why
    [row] = api.call("GET", "/sim/v1/transactions?parked=true", api.op)
    assert f"reason issuer_failed at +0:00:10.682 ({row['updatedAt']})" in why
    row = browser.find_element(By.CSS_SELECTOR, f"tr[data-transaction-id='{tx}']").text
    assert "PARKED" in row and "issuer_failed" in row  # in words, not colour alone
    api.close()


def test_the_token_is_never_in_a_url_a_cookie_or_storage(world: ServedWorld,
                                                         browser: Any) -> None:
    """Issue 28 §1: the token lives in the tab's memory only."""
    api = _Api(world)
    issuer, member = api.cast()
    tx = api.redeem(issuer, member, "100.00", "INV-1")
    _connect(browser, world)
    _show_story(browser, tx)
    _advance(browser, 60)
    token = world.operator_token
    seen = browser.execute_script(
        "return {url: location.href, cookie: document.cookie,"
        " local: JSON.stringify(Object.assign({}, localStorage)),"
        " session: JSON.stringify(Object.assign({}, sessionStorage)),"
        " history: history.length,"
        " resources: performance.getEntriesByType('resource').map(e => e.name),"
        " field: document.getElementById('token').value};")
    assert token not in json.dumps(seen)
    assert seen["local"] == "{}" and seen["session"] == "{}" and seen["cookie"] == ""
    assert browser.get_cookies() == []
    assert any("/sim/v1/overview" in name for name in seen["resources"])
    assert token not in browser.current_url
    api.close()


def _session(api: _Api) -> str:
    """The README walkthrough's API calls and clock moves (through the operator route);
    the world's digest after them."""
    issuer, member = api.cast()
    api.subscribe(member)
    tx = api.redeem(issuer, member, "100.00", "INV-1", **{"Idempotency-Key": "redeem-1"})
    api.call("GET", f"/api/v1/transactions/{tx}", api.key(member))
    api.call("POST", "/sim/v1/clock/advance", api.op, {"seconds": 120})
    return str(api.call("GET", "/sim/v1/digest", api.op)["digest"])


def test_the_digest_is_the_same_with_and_without_the_console_open(
        world: ServedWorld, browser: Any) -> None:
    """Issue 28 §2: the same API calls give the same digest whether or not a console is
    open and polling (its reads change nothing)."""
    api = _Api(world)
    without = _session(api)
    world.reset(7)
    _connect(browser, world)
    browser.find_element(By.ID, "log-kind").send_keys("webhook.")
    with_console = _session(api)
    _wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#transactions tbody tr"),
          "the transaction")
    browser.find_element(By.CSS_SELECTOR, "#transactions button.show-story").click()
    _wait(browser, lambda b: "settled" in _text(b, "story"), "the story")
    assert api.call("GET", "/sim/v1/digest", api.op)["digest"] == with_console == without
    api.close()


def test_the_readme_walkthrough_with_every_clock_move_from_the_console(
        world: ServedWorld, browser: Any) -> None:
    """Issue 28, done when: the README walkthrough's API calls made over HTTP (as curl makes
    them) and every clock move made with the console's advance control end with the
    README's digest, and the console shows both transactions' stories."""
    api = _Api(world)
    issuer, member = api.cast()
    key, admin = api.key(member), {"Authorization": f"Bearer {member['adminToken']}"}
    api.subscribe(member)
    tx = api.redeem(issuer, member, "100.00", "INV-1", **{"Idempotency-Key": "redeem-1"})
    api.call("GET", f"/api/v1/transactions/{tx}", key)
    _connect(browser, world)
    _advance(browser, 120)
    api.call("GET", f"/api/v1/transactions/{tx}", key)
    api.call("GET", f"/sim/v1/balances?participantId={member['participantId']}", api.op)
    api.call("GET", f"/sim/v1/deliveries?transactionId={tx}", api.op)
    api.call("GET", f"/sim/v1/deliveries?transactionId={tx}", api.op)
    tx2 = api.redeem(issuer, member, "50.00", "INV-2")
    api.call("POST", "/api/v1/conformance/run", admin,
             {"scenario": "failed", "transactionId": tx2})
    _advance(browser, 120)
    api.call("GET", f"/api/v1/transactions/{tx2}", key)
    api.call("GET", f"/sim/v1/deliveries?transactionId={tx2}", api.op)
    api.call("POST", f"/sim/v1/operator/transactions/{tx2}/resolve", api.op)
    _advance(browser, 120)
    api.call("GET", f"/sim/v1/deliveries?transactionId={tx2}", api.op)
    digest = api.call("GET", "/sim/v1/digest", api.op)
    assert (digest["digest"], digest["records"]) == (README_DIGEST, 136)
    _wait(browser, lambda b: README_DIGEST in _text(b, "digest"), "the README's digest")
    for transaction_id in (tx, tx2):
        _show_story(browser, transaction_id)
        _wait(browser, lambda b: "settled: event transaction.settled" in _text(b, "story"),
              "a settled story")
    assert "in-flight: event transaction.in_flight" in _text(browser, "story")
    assert _severe(browser) == []
    api.close()


def test_a_narrow_window_has_no_sideways_scroll(world: ServedWorld, browser: Any) -> None:
    """Issue 28 §5: works in a narrow window (wide tables scroll inside their box)."""
    api = _Api(world)
    issuer, member = api.cast()
    api.subscribe(member)
    tx = api.redeem(issuer, member, "100.00", "INV-1")
    api.call("POST", "/sim/v1/clock/advance", api.op, {"seconds": 120})
    browser.set_window_size(420, 800)
    try:
        _connect(browser, world)
        _show_story(browser, tx)
        widths = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth];")
        assert widths[0] <= widths[1], widths
    finally:
        browser.set_window_size(1280, 800)
    api.close()


@pytest.mark.slow  # a second server, journaled: about 30 s on a loaded 2-core machine
def test_checkpoint_waits_and_rewind_from_the_console(browser: Any, tmp_path: Path) -> None:
    """Issue 28 §1: with a journal, the console takes a checkpoint, advances until a chosen
    transaction is terminal and until idle, and rewinds to the checkpoint: each through the
    operator route a curl user would call, each answer shown in the status line."""
    journal = tmp_path / "session.jsonl"
    with served_world(seed=7, operator_token="devtoken1",
                      args=("--journal", str(journal))) as server:
        browser.get_log("browser")
        api = _Api(server)
        issuer, member = api.cast()
        tx = api.redeem(issuer, member, "100.00", "INV-1")
        start = api.call("GET", "/sim/v1/digest", api.op)["digest"]
        _connect(browser, server)
        browser.find_element(By.ID, "checkpoint-name").send_keys("before" + Keys.ENTER)
        _wait(browser, lambda b: "Checkpoint: done (before)" in _text(b, "status"),
              "the checkpoint taken")
        option = f"#terminal-tx option[value='{tx}']"
        _wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, option), "the transaction")
        Select(browser.find_element(By.ID, "terminal-tx")).select_by_value(tx)
        browser.find_element(By.ID, "terminal-button").click()
        _wait(browser, lambda b: "(terminal, met)" in _text(b, "status"), "the terminal stop")
        [row] = api.call("GET", "/sim/v1/transactions", api.op)
        assert row["terminal"] is True
        browser.find_element(By.ID, "idle-button").click()
        _wait(browser, lambda b: "(idle, met)" in _text(b, "status"), "the idle stop")
        browser.find_element(By.CSS_SELECTOR, "button[data-checkpoint='before']").click()
        _wait(browser, lambda b: "Rewind to before: done" in _text(b, "status"), "the rewind")
        assert api.call("GET", "/sim/v1/digest", api.op)["digest"] == start
        [row] = api.call("GET", "/sim/v1/transactions", api.op)
        assert row["lifecycleStatus"] == "received"
        kinds = [json.loads(line)["k"] for line in journal.read_text().splitlines()[1:]]
        assert "checkpoint" in kinds and "rewind" in kinds
        assert _severe(browser) == []
        api.close()
