"""The generated reference pages match the route table and the catalogue; every error code
the package raises is in the catalogue (spec, Errors: structured ``type`` and ``code``)."""

from __future__ import annotations

import ast
from pathlib import Path

from clearing_sim.domain.errors import CATALOGUE
from clearing_sim.service.reference import api_page, errors_page
from clearing_sim.service.routes import ROUTES

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "regenerate with: python -m clearing_sim.service.reference"


def test_docs_api_md_is_the_rendering_of_the_route_table() -> None:
    assert (ROOT / "docs" / "api.md").read_text() == api_page(), REGENERATE


def test_docs_errors_md_is_the_rendering_of_the_catalogue() -> None:
    assert (ROOT / "docs" / "errors.md").read_text() == errors_page(), REGENERATE


def test_every_route_is_unique_and_under_api_v1() -> None:
    keys = [(r.method, r.template) for r in ROUTES]
    assert len(keys) == len(set(keys))
    assert all(r.template.startswith("/api/v1/") for r in ROUTES)


def _raised_codes() -> list[tuple[str, int, str]]:
    """String codes passed to ``Problem(param, code, …)``, ``X.one(param, code, …)`` and
    ``fields.problem(name, code, …)`` anywhere in the package."""
    found = []
    for path in sorted((ROOT / "clearing_sim").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in ("Problem", "one", "problem", "bad"):
                continue
            code = node.args[1]
            if isinstance(code, ast.Constant) and isinstance(code.value, str):
                found.append((str(path.relative_to(ROOT)), node.lineno, code.value))
    return found


def test_every_code_the_package_raises_is_in_the_catalogue() -> None:
    codes = _raised_codes()
    assert len(codes) > 40  # the scan sees the package
    missing = [c for c in codes if c[2] not in CATALOGUE]
    assert not missing, missing
