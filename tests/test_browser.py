"""``clearing_sim.testing.browser`` and the browser tests' gate (issue 28 §4): without Debian's
Chromium the tests skip saying what to install, except in CI, where they fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from clearing_sim.testing import browser
from tests.browser.conftest import browser_required


def test_a_missing_chromium_or_driver_is_named_with_its_debian_package(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "no-chromium")
    missing = browser.browser_missing()
    assert missing is not None and "no-chromium is missing" in missing
    assert "apt-get install -y chromium " in missing
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setattr(browser, "CHROMIUM", fake)
    monkeypatch.setattr(browser, "CHROMEDRIVER", tmp_path / "no-driver")
    missing = browser.browser_missing()
    assert missing is not None and "apt-get install -y chromium-driver" in missing


@pytest.mark.parametrize(("ci", "require", "required"), [
    (None, None, False), ("", None, False), ("0", None, False), ("false", None, False),
    ("1", None, True), ("true", None, True), (None, "1", True), (None, "0", False)])
def test_ci_or_the_opt_in_makes_a_missing_browser_a_failure(
        monkeypatch: pytest.MonkeyPatch, ci: str | None, require: str | None,
        required: bool) -> None:
    for name, value in (("CI", ci), ("CLEARING_SIM_REQUIRE_BROWSER", require)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert browser_required() is required
