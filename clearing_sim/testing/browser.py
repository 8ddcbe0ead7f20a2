"""Debian's headless Chromium, driven by Selenium through Debian's ``chromium-driver``.

Public names: ``CHROMEDRIVER``, ``CHROMIUM``, ``FLAGS``, ``browser_missing``, ``chromium``.

What the console's browser tests (``tests/browser``) and the screenshot script
(``docs/examples/console_screenshots.py``) start: ``/usr/bin/chromium`` through
``/usr/bin/chromedriver`` (``apt-get install chromium chromium-driver``; ``.ci/run`` installs
them), or the paths in ``CLEARING_SIM_CHROMIUM`` / ``CLEARING_SIM_CHROMEDRIVER``. Nothing here
downloads a browser: the driver's path is given, so Selenium's driver manager is never asked.
Each browser gets a fresh profile, no background networking, no component updates, no sync.
Selenium is a dev extra (``pip install -e '.[dev]'``), imported only when a browser starts.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["CHROMEDRIVER", "CHROMIUM", "FLAGS", "browser_missing", "chromium"]

CHROMIUM = Path(os.environ.get("CLEARING_SIM_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("CLEARING_SIM_CHROMEDRIVER", "/usr/bin/chromedriver"))
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")


def browser_missing() -> str | None:
    """Why no browser can start here (what to install), or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (path.is_file() and os.access(path, os.X_OK)):
            return (f"{path} is missing: apt-get install -y {package} (Debian's package; "
                    ".ci/run installs it)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install -e '.[dev]'"
    return None


def chromium(profile: Path, width: int = 1280, height: int = 800) -> Any:
    """A headless Chromium (a Selenium ``WebDriver``) with its profile in ``profile`` (a
    fresh folder) and its window ``width`` × ``height``; its console log is kept
    (``driver.get_log("browser")``). The caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    return driver
