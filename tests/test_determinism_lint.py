"""The engine layers read no wall clock, no global RNG and no uuid4 (DESIGN.md, determinism).

The ruff ``banned-api`` rule enforces it at lint time; this test proves the rule is wired up:
a file with each banned call, placed in the engine's packages, is reported.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

BANNED = {
    "time.time()": "import time\n\nx = time.time()\n",
    "time.monotonic()": "import time\n\nx = time.monotonic()\n",
    "datetime.now()": "from datetime import datetime\n\nx = datetime.now()\n",
    "datetime.utcnow()": "import datetime\n\nx = datetime.datetime.utcnow()\n",
    "uuid.uuid4()": "import uuid\n\nx = uuid.uuid4()\n",
    "random.random()": "import random\n\nx = random.random()\n",
    "random.choice()": "from random import choice\n\nx = choice([1])\n",
}


def _ruff() -> list[str]:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed")
    return [exe]


@pytest.mark.parametrize("layer", ["domain", "sim", "service"])
@pytest.mark.parametrize("call", sorted(BANNED))
def test_banned_call_is_reported_in_engine_layer(layer: str, call: str) -> None:
    probe = ROOT / "clearing_sim" / layer / "_probe_banned.py"
    probe.write_text(BANNED[call])
    try:
        result = subprocess.run([*_ruff(), "check", "--no-cache", "--select", "TID251",
                                 str(probe)], cwd=ROOT, capture_output=True, text=True)
    finally:
        probe.unlink()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "TID251" in result.stdout
