"""Schemathesis hooks for ``bench_hostile.py schemathesis``: creations get a valid body half
the time, so the stateful phase has resources to follow the document's links to (a fuzzed
redemption names no asset the world has, and an agent reference it never made).

Loaded by the Schemathesis CLI through ``SCHEMATHESIS_HOOKS=hostile_hooks``; the asset comes
in ``BENCH_HOSTILE_ASSET`` (JSON), set by the bench.
"""

from __future__ import annotations

import json
import os
from typing import Any

import schemathesis
from hypothesis import strategies as st

_ASSET = json.loads(os.environ.get("BENCH_HOSTILE_ASSET", "{}"))
VALID: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/v1/transactions"): {
        "useCase": "redeem", "paymentReference": "ST-1",
        "source": {"amount": "1.00", "asset": _ASSET},
        "target": {"amount": "1.00", "asset": {"code": "GBP"}}},
    ("POST", "/api/v1/webhooks"): {
        "url": "https://hooks.example.com/in", "events": ["transaction.settled"]},
    ("POST", "/api/v1/sandbox/agents"): {
        "capabilities": {"initiateTransaction": True, "cancelOwnTransaction": True},
        "expiresAt": "2026-06-01T00:00:00Z"},
}


@schemathesis.hook
def flatmap_case(context: Any, case: Any) -> st.SearchStrategy[Any]:
    """Half the positive cases of a creation carry a valid body; negative cases are left as
    drawn (a valid body there would read as "a schema-violating request accepted")."""
    made = VALID.get((case.operation.method.upper(), case.operation.path))
    meta = getattr(case, "_meta", None)
    positive = meta is not None and str(getattr(meta.generation.mode, "value", "")) == "positive"
    if made is None or not positive:
        return st.just(case)

    def valid(use: bool) -> Any:
        if use:
            case.body = made
        return case
    return st.booleans().map(valid)
