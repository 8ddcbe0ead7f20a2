"""A real browser against a real ``clearing-sim serve`` (issue 28 §4).

Debian's Chromium (``/usr/bin/chromium``) driven through Debian's ``chromium-driver``
(``/usr/bin/chromedriver``) by Selenium: nothing downloads a browser build (Selenium's own
driver manager is never asked, since the driver's path is given). ``.ci/run`` installs both.
Without them the tests skip, saying what is missing, except in CI (``CI`` set) or with
``CLEARING_SIM_REQUIRE_BROWSER=1``, where a missing browser fails the run.

One headless Chromium per session, with a fresh profile (``--user-data-dir`` in a temporary
folder) and no background networking; one served world (seed 7, token ``devtoken1``: the
README walkthrough's) per module, reset to its seed before each test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clearing_sim.testing import ServedWorld, served_world

CHROMIUM = Path(os.environ.get("CLEARING_SIM_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("CLEARING_SIM_CHROMEDRIVER", "/usr/bin/chromedriver"))
TOKEN = "devtoken1"
SEED = 7
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--disable-dev-shm-usage", "--window-size=1280,800")


def browser_required() -> bool:
    """In CI (``CI`` set, not ``0``/``false``) or on request a missing browser fails."""
    ci = os.environ.get("CI", "").strip().lower()
    return ci not in ("", "0", "false", "no") or \
        os.environ.get("CLEARING_SIM_REQUIRE_BROWSER") == "1"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (path.is_file() and os.access(path, os.X_OK)):
            return (f"{path} is missing: apt-get install -y {package} (Debian's package; "
                    ".ci/run installs it)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install -e '.[dev]'"
    return None


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = browser_missing()
    if missing is not None:
        if browser_required():
            pytest.fail(f"the browser tests must run here (CI or "
                        f"CLEARING_SIM_REQUIRE_BROWSER=1): {missing}", pytrace=False)
        pytest.skip(f"no browser for the console tests: {missing}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in (*_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def served() -> Iterator[ServedWorld]:
    with served_world(seed=SEED, operator_token=TOKEN) as server:
        yield server


@pytest.fixture
def world(served: ServedWorld, browser: Any) -> ServedWorld:
    """The module's served world, fresh (reset to seed 7), and a browser with nothing in it
    from an earlier test (a blank page, no cookies, its log drained)."""
    served.reset(SEED)
    browser.get("about:blank")
    browser.delete_all_cookies()
    browser.get_log("browser")
    return served
