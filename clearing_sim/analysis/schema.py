"""The workload and sweep files' JSON Schemas (shipped beside this module) and their problems.

Public names: ``SWEEP_SCHEMA``, ``WORKLOAD_SCHEMA``, ``sweep_problems``, ``workload_problems``.

Both schemas reuse the scenario schema's definitions (issuer, profile, behaviour, latency,
network, durations) by ``$ref`` to its ``$id``, so a profile or a latency is written the same
way in every file. Violations are explained by the scenario loader's own explainer: an unknown
key at the key with the closest allowed one, a union by the branch of the right JSON type.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from referencing import Registry, Resource

from clearing_sim.scenario.errors import Problem
from clearing_sim.scenario.jsonschema_import import Draft202012Validator
from clearing_sim.scenario.schema import SCHEMA as SCENARIO_SCHEMA
from clearing_sim.scenario.schema import explain
from clearing_sim.scenario.source import Document, FieldPath

__all__ = ["SWEEP_SCHEMA", "WORKLOAD_SCHEMA", "sweep_problems", "workload_problems"]


def _load(name: str) -> dict[str, Any]:
    text = resources.files("clearing_sim.analysis").joinpath(name).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


WORKLOAD_SCHEMA = _load("workload.schema.json")
SWEEP_SCHEMA = _load("sweep.schema.json")
_REGISTRY: Registry[Any] = Registry().with_resources([
    (SCENARIO_SCHEMA["$id"], Resource.from_contents(SCENARIO_SCHEMA)),
    (WORKLOAD_SCHEMA["$id"], Resource.from_contents(WORKLOAD_SCHEMA))])  # the sweep's gates
_WORKLOAD = Draft202012Validator(WORKLOAD_SCHEMA, registry=_REGISTRY)
_SWEEP = Draft202012Validator(SWEEP_SCHEMA, registry=_REGISTRY)


def _problems(validator: Draft202012Validator,
              document: Document) -> list[tuple[FieldPath | None, Problem]]:
    found: list[tuple[FieldPath | None, Problem]] = []
    for error in validator.iter_errors(document.data):
        for path, message, at_key in explain(error):
            blocking = error.validator != "additionalProperties"
            found.append((path if blocking else None,
                          document.problem_at(path, message, key=at_key)))
    return found


def workload_problems(document: Document) -> list[tuple[FieldPath | None, Problem]]:
    """Every schema violation of a workload file, located; with the path it makes unusable
    (``None`` for an unknown key: reading goes on without it)."""
    return _problems(_WORKLOAD, document)


def sweep_problems(document: Document) -> list[tuple[FieldPath | None, Problem]]:
    """Every schema violation of a sweep file, located, as ``workload_problems``."""
    return _problems(_SWEEP, document)
