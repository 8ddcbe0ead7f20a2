"""A client generated from our OpenAPI document (issue 19): ``openapi-python-client`` builds
one from the served ``/openapi.json`` without a warning, names its functions after the spec's
verbs, and drives a redeem to ``settled`` against a real served world (uvicorn on loopback).

The fast structural tests below say why generation works: every operation has an explicit
``operationId`` (unique), enum values map to distinct member names, and no inline object is
named like a component schema."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from clearing_sim.http.gateways import INBOUND_ROUTES
from clearing_sim.http.openapi import document
from clearing_sim.http.operation_ids import OPERATION_IDS
from clearing_sim.http.operator import OPERATOR_ROUTES
from clearing_sim.service.routes import ROUTES
from tests.http.served import TOKEN, served

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "clearing_sim_client"  # from the document's title, "clearing-sim"


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, op) for path, item in document()["paths"].items()
            for method, op in item.items()]


def test_every_operation_has_an_explicit_unique_operation_id_in_the_specs_words() -> None:
    tables = {(r.method, r.template) for r in (*ROUTES, *OPERATOR_ROUTES, *INBOUND_ROUTES)}
    assert set(OPERATION_IDS) == tables
    ids = [op["operationId"] for _, _, op in _operations()]
    assert len(ids) == len(set(ids))
    # not named after the path (getApiV1TransactionsId)
    assert not [i for i in ids if re.match(r"(get|post|put|delete)(Api|Sim)V1", i)]
    named = {(m, p): op["operationId"] for m, p, op in _operations()}
    assert named[("POST", "/api/v1/transactions")] == "initiateTransaction"
    assert named[("POST", "/api/v1/conformance/run")] == "armConformanceScenario"
    assert named[("GET", "/api/v1/transactions/{id}")] == "getTransaction"
    assert named[("POST", "/issuer-webhooks/{issuerId}")] == "receiveIssuerStatusWebhook"


def _member_name(value: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", value.upper()).strip("_")


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_enum_values_map_to_distinct_member_names() -> None:
    """``self-custody`` and ``self_custody`` (the spec's accepted alias) are both SELF_CUSTODY
    unless ``x-enum-varnames`` names them apart."""
    for schema in _walk(document()):
        if "enum" in schema and schema.get("type") == "string":
            names = schema.get("x-enum-varnames") or [_member_name(v) for v in schema["enum"]]
            assert len(names) == len(set(names)) == len(schema["enum"]), schema["enum"]


def test_an_inline_object_is_not_named_like_a_component_schema() -> None:
    """A generator names an inline object ``<Parent><Property>``; Agent.capabilities inline
    was AgentCapabilities, the request schema's name, and Agent was dropped."""
    schemas = document()["components"]["schemas"]
    for parent, schema in schemas.items():
        for name, prop in schema.get("properties", {}).items():
            if prop.get("type") == "object" and prop.get("properties"):
                assert f"{parent}{name[:1].upper()}{name[1:]}" not in schemas, (parent, name)


def _generate(spec: dict[str, Any], into: Path) -> ModuleType:
    (into / "openapi.json").write_text(json.dumps(spec), encoding="utf-8")
    (into / "config.json").write_text(json.dumps({"post_hooks": []}), encoding="utf-8")
    done = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(into / "openapi.json"), "--meta", "none",
         "--config", str(into / "config.json")],
        capture_output=True, text=True, timeout=120, cwd=into)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr
    # issue 27: the package is named after the title; the long one gave
    # clearing_sim_the_clearing_service_api_and_the_simulators_operator_surface_client
    assert [p.name for p in into.iterdir() if p.is_dir()] == [PACKAGE]
    sys.path.insert(0, str(into))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(into))


@pytest.fixture
def generated_modules() -> Iterator[None]:
    yield
    for name in [n for n in sys.modules if n.split(".")[0] == PACKAGE]:
        del sys.modules[name]


@pytest.mark.skipif(not GENERATOR.exists(), reason="openapi-python-client (dev extra) missing")
@pytest.mark.usefixtures("generated_modules")
def test_a_generated_client_drives_a_redeem_to_settled_against_a_served_world(
        tmp_path: Path) -> None:
    with served(tmp_path) as server:
        spec = httpx.get(f"{server.base}/openapi.json", timeout=10).json()
        client_package = _generate(spec, tmp_path)
        models = importlib.import_module(f"{PACKAGE}.models")
        initiate = importlib.import_module(f"{PACKAGE}.api.api.initiate_transaction")
        get_transaction = importlib.import_module(f"{PACKAGE}.api.api.get_transaction")
        advance = importlib.import_module(f"{PACKAGE}.api.operator.advance_clock")
        participants = importlib.import_module(f"{PACKAGE}.api.operator.list_participants")
        member = client_package.AuthenticatedClient(base_url=server.base,
                                                    token=server.api_key("northbank"))
        operator = client_package.AuthenticatedClient(base_url=server.base, token=TOKEN)

        listed = participants.sync(client=operator)
        [issuer] = [p for p in listed.data if p.participant_name == "Ether Pound"]
        asset = issuer.assets[0].to_dict()
        body = models.InitiateRequest.from_dict({
            "useCase": "redeem", "paymentReference": "INV-GEN",
            "source": {"amount": "100.00", "asset": asset},
            "target": {"amount": "100.00", "asset": {"code": "GBP"}}})
        created = initiate.sync_detailed(client=member, body=body, idempotency_key="gen-1")
        assert created.status_code == 201, created.content
        tx_id = created.parsed.data.id
        assert created.parsed.data.lifecycle_status.value == "received"

        # the advance body is typed: one model per form (issue 27, section 5)
        waited = advance.sync(client=operator,
                              body=models.AdvanceUntilTerminal(until_terminal=str(tx_id),
                                                               max_seconds=60))
        assert (waited.data.met, waited.data.reason.value) == (False, "max_seconds")
        assert waited.data.stopped_at_ms == 60_000
        moved = advance.sync(client=operator, body=models.AdvanceUntilTerminal(
            until_terminal=str(tx_id)))
        assert (moved.data.met, moved.data.reason.value) == (True, "terminal")
        assert moved.data.now_ms == moved.data.stopped_at_ms < 120_000

        fetched = get_transaction.sync(client=member, id=tx_id)
        assert isinstance(fetched, models.GetTransactionResponse200), fetched
        assert fetched.data.lifecycle_status.value == "settled"
        assert fetched.data.terminal is True
