"""Screenshots of the console and of an HTML run report, for the README (issue 28 §4).

    python docs/examples/console_screenshots.py docs/images

Starts ``clearing-sim serve --seed 7`` (the README walkthrough's world), makes the
walkthrough's redeem and parked redeem through the API, moves the clock with the console's
own advance control, and saves ``console.png`` (1280×800, the parked transaction's story),
``console-narrow.png`` (420 px wide) and ``report.png`` (the 72-hour-disable scenario's
page of ``clearing-sim run --html``) into the folder given. Needs Debian's chromium and
chromium-driver and selenium (``clearing_sim.testing.browser``). The test suite never runs this: it
writes tracked files.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from clearing_sim.testing import ServedWorld, served_world
from clearing_sim.testing.browser import browser_missing, chromium

ROOT = Path(__file__).resolve().parents[2]


def _world(server: ServedWorld) -> str:
    """The walkthrough's cast, subscription and two redeems (the second armed to fail)."""
    client = server.client
    issuer = client.add_participant({"kind": "stablecoin_issuer", "name": "Ether Pound",
                                     "rtgsBalanceGbp": "1000000.00",
                                     "assets": [{"code": "GBPE", "ledger": "evm"}]})
    member = client.add_participant({"kind": "clearing_member", "name": "Northbank",
                                     "wallets": {"GBPE": "1000.00"}})
    key = {"Authorization": f"Bearer {member['apiKey']}"}
    client.http.post("/api/v1/webhooks", headers=key, json={
        "url": "https://hooks.northbank.example/clearing",
        "events": ["transaction.received", "transaction.in_flight", "transaction.settled",
                   "transaction.parked"]}).raise_for_status()
    ids = []
    for amount, reference in (("100.00", "INV-1"), ("50.00", "INV-2")):
        made = client.http.post("/api/v1/transactions", headers=key, json={
            "useCase": "redeem", "paymentReference": reference,
            "source": {"amount": amount, "asset": issuer["assets"][0]},
            "target": {"amount": amount, "asset": {"code": "GBP"}}})
        made.raise_for_status()
        ids.append(made.json()["data"]["id"])
    client.arm_outcome(member["adminToken"], ids[1], "failed")
    return str(ids[1])


def _console(driver: Any, server: ServedWorld, parked: str, out: Path) -> None:
    wait = WebDriverWait(driver, 20)
    driver.get(server.base_url + "/sim/console")
    driver.find_element(By.ID, "token").send_keys(server.operator_token + Keys.ENTER)
    wait.until(lambda d: d.find_element(By.ID, "app").is_displayed())
    field = driver.find_element(By.ID, "advance-seconds")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("120" + Keys.ENTER)
    wait.until(lambda d: "done" in d.find_element(By.ID, "status").text)
    row = f"tr[data-transaction-id='{parked}'] button.show-story"
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, row))
    driver.find_element(By.CSS_SELECTOR, row).click()
    wait.until(lambda d: "Parked because" in d.find_element(By.ID, "story").text)
    time.sleep(0.3)
    driver.save_screenshot(str(out / "console-top.png"))
    driver.execute_script("document.getElementById('story-panel').scrollIntoView();")
    time.sleep(0.2)
    driver.save_screenshot(str(out / "console.png"))
    driver.set_window_size(420, 800)
    time.sleep(0.3)
    driver.execute_script("document.getElementById('story-panel').scrollIntoView();")
    driver.save_screenshot(str(out / "console-narrow.png"))
    driver.set_window_size(1280, 800)


def _report(driver: Any, out: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        scenario = ROOT / "scenarios" / "webhook-disabled-after-72h-of-failure.yaml"
        subprocess.run([sys.executable, "-m", "clearing_sim.cli", "run", str(scenario),
                        "--html", folder], check=True, stdout=subprocess.DEVNULL)
        driver.get((Path(folder) / scenario.with_suffix(".html").name).as_uri())
        driver.execute_script("document.querySelector('.story-section').scrollIntoView();")
        driver.execute_script("document.querySelector('details.delivery').open = true;")
        time.sleep(0.3)
        driver.save_screenshot(str(out / "report.png"))


def main(out: Path) -> None:
    missing = browser_missing()
    if missing is not None:
        sys.exit(f"no browser: {missing}")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile, \
            served_world(seed=7, operator_token="devtoken1") as server:
        driver = chromium(Path(profile))
        try:
            _console(driver, server, _world(server), out)
            _report(driver, out)
        finally:
            driver.quit()
    print(f"wrote console-top.png, console.png, console-narrow.png, report.png to {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/examples/console_screenshots.py OUTDIR")
    main(Path(sys.argv[1]))
