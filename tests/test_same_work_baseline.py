"""The same-work baseline (``benchmarks/same_work.py``, issue 30 §4) does the model's
modelled work: for each mode its records per redeem are of the same kinds, with the same
field names in the same order, as the model's log for a redeem of that mode. The ratio
``bench_sagas.py --mix`` prints (model / same-work) is honest only while this holds; a
change to the model's log fails here until the baseline follows it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from clearing_sim.sim.examples import example_world
from clearing_sim.sim.workload import poisson_redeems

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "same_work.py"
_spec = importlib.util.spec_from_file_location("same_work", _PATH)
assert _spec is not None and _spec.loader is not None
same_work = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(same_work)

Shape = tuple[str, tuple[str, ...]]
#: Records whose count and place depend on latency draws (polls, reads after a webhook,
#: the webhooks themselves): compared as kinds of record, not by position.
_TIMED = {("issuer.request", "GET /instructions/{id}"), ("issuer.webhook", None)}


def _shapes_by_mode(log: list[tuple[int, int, str, dict[str, Any]]]
                    ) -> tuple[dict[str, set[tuple[Shape, ...]]], dict[str, set[Shape]]]:
    """Per ledger (one per mode): the ordered shapes of each redeem's records without the
    timed ones, and the set of every shape its records take."""
    owner: dict[str, str] = {}  # transaction, idempotency key or instruction -> transaction
    per_tx: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for _, _, kind, fields in log:
        tx = fields.get("transactionId")
        if tx is None:
            ref = fields.get("idempotencyKey") or fields.get("instructionId")
            tx = owner.get(ref) if ref else None
        if tx is None:
            continue  # the world's set-up
        for key in ("idempotencyKey", "instructionId"):
            if key in fields:
                owner[fields[key]] = tx
        per_tx.setdefault(tx, []).append((kind, fields))
    ordered: dict[str, set[tuple[Shape, ...]]] = {}
    every: dict[str, set[Shape]] = {}
    for records in per_tx.values():
        ledger = next(f["ledger"] for k, f in records if k == "ledger.lock")
        shapes = [(kind, tuple(fields)) for kind, fields in records]
        every.setdefault(ledger, set()).update(shapes)
        ordered.setdefault(ledger, set()).add(tuple(
            shape for shape, (kind, fields) in zip(shapes, records, strict=True)
            if (kind, fields.get("route") if kind == "issuer.request" else None) not in _TIMED))
    return ordered, every


def _model_log(count: int) -> list[tuple[int, int, str, dict[str, Any]]]:
    cast = example_world(0)
    cast.world.env.process(poisson_redeems(cast, count, mean_gap_ms=2_000))
    cast.world.run_all()
    return [(r.at_ms, r.seq, r.kind, dict(r.fields)) for r in cast.world.log]


def test_same_work_records_match_the_models_kinds_and_fields_per_mode() -> None:
    model = _shapes_by_mode(_model_log(40))
    mine = _shapes_by_mode(same_work.simulate(40, 0))
    assert sorted(model[0]) == ["evm", "solana", "stellar"]
    assert mine == model


def test_the_comparison_fails_on_a_baseline_with_a_field_renamed_or_a_record_dropped() -> None:
    model = _shapes_by_mode(_model_log(40))
    log = same_work.simulate(40, 0)
    renamed = [(at, seq, kind, {("feeAmount" if k == "feeGbp" else k): v
                                for k, v in fields.items()})
               for at, seq, kind, fields in log]
    assert _shapes_by_mode(renamed) != model
    dropped = [record for record in log if record[2] != "saga.event"]
    assert _shapes_by_mode(dropped) != model
