"""A refused request costs the journal a bounded entry (issue 31 §5: an unauthenticated
1 MiB ``POST /api/v1/tools/integration-path`` wrote ~1.05 MB to the journal; 20 of them
21 MB in 0.2 s; an unsigned issuer webhook was stored whole).

A refusal draws a command id and writes its ``api.request`` record, so replay needs to know
it happened, but not its body: the journal keeps the record's fields (``refused`` entries;
``dropped`` for an issuer webhook refused), and replay writes the same record again."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clearing_sim.http.journal import read_journal
from clearing_sim.service.routes import ROUTES
from tests.http.conftest import Client, add, issuer_body, member_body, redeem_body
from tests.http.test_replay import digest, journaled

#: what one refused request may add to the journal, whatever the route and the request
REFUSAL_BYTES_MAX = 1024

_TEMPLATES = sorted({r.template for r in ROUTES})
_PATHS = st.one_of(
    st.sampled_from(_TEMPLATES).map(lambda t: t.replace("{", "").replace("}", "")),
    st.sampled_from(_TEMPLATES).map(lambda t: t.split("{")[0] + "x" * 5000),
    st.text(alphabet="/abcé\u0301\U0001f600%", max_size=400).map(lambda t: "/api/v1/" + t))
_BODIES = st.one_of(st.binary(max_size=2048), st.just(b"x" * (1 << 20)),
                    st.just(b"\xff" * 300_000),
                    st.dictionaries(st.text(max_size=6), st.integers(), max_size=300)
                    .map(lambda d: json.dumps(d).encode()))


def _cast(client: Client) -> tuple[dict[str, str], dict[str, str]]:
    issuer, member = add(client, issuer_body()), add(client, member_body())
    assert issuer.asset is not None
    created = client.post("/api/v1/transactions", headers={**member.auth},
                          json=redeem_body(issuer.asset))
    assert created.status_code == 201
    return member.auth, {"Authorization": "Bearer sk_sandbox_" + "0" * 64}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(requests=st.lists(st.tuples(st.sampled_from(["POST", "PUT", "GET", "DELETE"]), _PATHS,
                                   _BODIES, st.sampled_from(["none", "member", "forged"])),
                         min_size=1, max_size=4))
def test_a_refused_request_adds_at_most_a_bounded_entry_and_replays(
        tmp_path_factory: object, requests: list[tuple[str, str, bytes, str]]) -> None:
    folder = Path(tmp_path_factory.mktemp("refused"))  # type: ignore[attr-defined]
    path = folder / "j.jsonl"
    client, _ = journaled(path)
    member, forged = _cast(client)
    credentials = {"none": {}, "member": member, "forged": forged}
    refused = 0
    for method, target, body, who in requests:
        size = path.stat().st_size
        answer = client.request(method, target, content=body, headers={
            **credentials[who], "Content-Type": "application/json"})
        assert answer.status_code < 500
        if 400 <= answer.status_code < 500:
            refused += answer.status_code != 415  # the shim's own: the world never saw it
            assert path.stat().st_size - size <= REFUSAL_BYTES_MAX, (method, target[:80])
    before = digest(client)
    client.close()
    again, _ = journaled(path)
    assert digest(again) == before  # the refusals' records, written again by replay
    again.close()
    entries = [entry for _, entry in read_journal(path).entries]
    assert sum(e["k"] == "refused" or (e["k"] == "api" and e["status"] >= 400)
               for e in entries) >= refused


def test_an_unsigned_issuer_webhook_is_journaled_as_its_two_ids(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path)
    issuer = add(client, issuer_body())
    body = json.dumps({"instructionId": "i" * 150, "pad": "x" * 500_000}).encode()
    size = path.stat().st_size
    answer = client.post(f"/issuer-webhooks/{issuer.id}", content=body,
                         headers={"Service-Signature": "t=1,v1=00"})
    assert answer.status_code == 401
    assert path.stat().st_size - size <= REFUSAL_BYTES_MAX
    before = digest(client)
    client.close()
    entry = read_journal(path).entries[-1][1]
    assert (entry["k"], entry["issuerId"], entry["instructionId"]) == (
        "dropped", issuer.id, "i" * 150)
    again, _ = journaled(path)
    assert digest(again) == before
    again.close()
