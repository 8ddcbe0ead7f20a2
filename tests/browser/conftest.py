"""A real browser against a real ``clearing-sim serve`` (issue 28 §4).

Debian's Chromium (``/usr/bin/chromium``) driven through Debian's ``chromium-driver``
(``/usr/bin/chromedriver``) by Selenium (``clearing_sim.testing.browser``): nothing downloads a
browser build. ``.ci/run`` installs both.
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
from typing import Any

import pytest

from clearing_sim.testing import ServedWorld, served_world
from clearing_sim.testing.browser import browser_missing, chromium

TOKEN = "devtoken1"
SEED = 7


def browser_required() -> bool:
    """In CI (``CI`` set, not ``0``/``false``) or on request a missing browser fails."""
    ci = os.environ.get("CI", "").strip().lower()
    return ci not in ("", "0", "false", "no") or \
        os.environ.get("CLEARING_SIM_REQUIRE_BROWSER") == "1"


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = browser_missing()
    if missing is not None:
        if browser_required():
            pytest.fail(f"the browser tests must run here (CI or "
                        f"CLEARING_SIM_REQUIRE_BROWSER=1): {missing}", pytrace=False)
        pytest.skip(f"no browser for the console tests: {missing}")
    profile = tmp_path_factory.mktemp("chromium-profile")
    driver = chromium(profile)
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
