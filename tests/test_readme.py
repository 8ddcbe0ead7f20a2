"""The README's Python examples run and print what their comments say (STYLE: examples are
tests)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_python_block_of_the_readme_runs_and_prints_its_promise() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), {})
        promised = re.findall(r"print\(.*?#\s*(.+)$", block, re.M)
        if promised:
            assert out.getvalue().splitlines()[-len(promised):] == promised
