"""No input of any shape produces a 5xx or changes anything when refused (issue: Proof).

Hypothesis drives every route of the table with generated bodies (arbitrary JSON, valid
bodies with one field replaced, huge and unicode strings, negative and over-precise
amounts), path parameters, credentials and headers. Every state change is a log record
(DESIGN: the log is the spine), so "a refusal changes nothing" is checked as: a 4xx or 5xx
answer appends exactly one record, its own ``api.request``.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.service.messages import Request
from clearing_sim.service.routes import ROUTES
from tests.service.conftest import Service, make_service

_SCALARS = (st.none() | st.booleans() | st.integers(-10**30, 10**30)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40)
            | st.sampled_from(["", "0", "-1.00", "1.001", "1e9", "100.00", "0.00",
                               "9" * 80, "NaN", "redeem", "swap", "https://x.example/h",
                               "transaction.settled", "ON_INSTRUCTION", "stellar",
                               "2026-01-02T00:00:00Z", "é" * 300, "\u0000", "GBP"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=12), inner, max_size=5), max_leaves=12)

_FIELD_NAMES = ["useCase", "paymentReference", "source", "target", "amount", "asset", "code",
                "issuer", "agent", "agentId", "mandateProof", "url", "events", "description",
                "scenario", "transactionId", "email", "capabilities", "expiresAt",
                "amountCapGbp", "role", "custodyModel", "chain", "chains", "commitPoint",
                "organisationName", "primaryContact", "dryRun", "artifact", "keyId",
                "accountId", "ledger", "feedbackChannel", "fiatLeg", "apiBaseUrl"]
_BODIES = (_JSON | st.dictionaries(st.sampled_from(_FIELD_NAMES), _JSON, max_size=6))


def _fill(template: str, svc: Service, choice: int, junk: str) -> str:
    known = {"id": [tx.id for tx in svc.world.transactions][:1],
             "issuerId": [svc.issuers[2].participant.id, svc.member.participant.id]}
    parts = []
    for segment in template.split("/"):
        if segment.startswith("{"):
            values = [*known.get(segment[1:-1], []), junk, "00000000-0000-4000-8000-000000000000"]
            segment = values[choice % len(values)] or "x"
        parts.append(segment)
    return "/".join(parts)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(route=st.sampled_from(ROUTES), body=_BODIES, raw=st.sampled_from([None, b"{", b"\xff"]),
       who=st.integers(0, 6), choice=st.integers(0, 3), junk=st.text(max_size=20),
       key=st.sampled_from([None, "k", "k" * 257]),
       version=st.sampled_from([None, "2026-06-01", "bogus"]))
def test_no_request_is_answered_5xx_and_refusals_change_nothing(
        route: Any, body: Any, raw: bytes | None, who: int, choice: int, junk: str,
        key: str | None, version: str | None) -> None:
    svc = _SERVICE
    tokens = [None, svc.member.key, svc.member.admin, svc.issuers[2].key, svc.issuers[2].admin,
              svc.other.admin, "Bearer junk"]
    headers = {}
    if key is not None:
        headers["Idempotency-Key"] = key
    if version is not None:
        headers["Service-Version"] = version
    path = _fill(route.template, svc, choice, junk.replace("/", "").replace("?", ""))
    data = raw if raw is not None else json.dumps(body).encode()
    request = Request.build(route.method, path, token=tokens[who], body=data, headers=headers)
    before = len(svc.world.log)
    response = svc.api.handle(request)
    assert response.status < 500 or response.json()["errors"][0]["code"] == "sandbox_unavailable"
    if response.status >= 400:
        added = list(svc.world.log)[before:]
        assert [r.kind for r in added] == ["api.request"], (response.body, added)
        assert response.json()["errors"]


_SERVICE = make_service()
_SERVICE.api.handle(Request.build("POST", "/api/v1/transactions", token=_SERVICE.member.key,
                                  json_body=_SERVICE.redeem_body()))
