"""Screenshot an HTML report in headless Chromium (an artefact for a reader; not a test).

    python tools/screenshot_report.py reports/baseline.html --out build/screenshots/baseline.png

Runs ``chromium --headless --screenshot=OUT --window-size=WIDTH,HEIGHT file://REPORT`` (the
browser found on PATH as ``chromium`` or ``chromium-browser``, or ``--browser``). The page is
taken WIDTH pixels wide and HEIGHT tall (long reports: raise ``--height``). Whether a figure's
legend, title or tick labels fit is checked without a browser, by
tests/analysis/test_figure_extents.py: the figures are PNGs, which a browser cannot measure.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="the HTML report")
    parser.add_argument("--out", type=Path, help="the PNG (default: build/screenshots/NAME.png)")
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--height", type=int, default=6000)
    parser.add_argument("--browser", help="the Chromium executable")
    args = parser.parse_args(argv)
    browser = args.browser or shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("error: no chromium on PATH; give --browser", file=sys.stderr)
        return 2
    out = args.out or Path("build/screenshots") / f"{args.report.stem}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--window-size={args.width},{args.height}", f"--screenshot={out.resolve()}",
               args.report.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or not out.is_file():
        print(done.stderr, file=sys.stderr)
        return 1
    print(f"screenshot written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
