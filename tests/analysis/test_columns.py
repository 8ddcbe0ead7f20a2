"""The frame builder's table: rows closed in any order, batched into Arrow, come back as the
Series a list of Python values gives, in the order they were added."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.analysis import columns
from clearing_sim.analysis.columns import Table

COLUMNS = (("id", "str"), ("status", "str"), ("mode", "Int8"), ("code", "Int16"),
           ("at_ms", "int64"), ("done_ms", "Int64"), ("latency_s", "float64"),
           ("n", "int8"), ("parked", "bool"))
DEFAULTS = {"n": 0, "parked": False}

ROW = st.fixed_dictionaries({
    "status": st.none() | st.sampled_from(["received", "settled", "parked", "ünïcode"]),
    "mode": st.none() | st.integers(1, 3), "code": st.none() | st.integers(100, 599),
    "at_ms": st.integers(0, 2**62), "done_ms": st.none() | st.integers(0, 2**62),
    "latency_s": st.none() | st.floats(allow_nan=False), "n": st.integers(0, 7),
    "parked": st.booleans()})


def _expected(rows: list[dict[str, Any]]) -> dict[str, pd.Series]:
    return {name: pd.Series([row.get(name, DEFAULTS.get(name)) for row in rows], dtype=dtype)
            for name, dtype in COLUMNS}


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(ROW, max_size=40), closing=st.randoms(use_true_random=False),
       later=st.lists(ROW, max_size=40))
def test_rows_closed_in_any_order_come_back_in_the_order_added(
        rows: list[dict[str, Any]], closing: Any, later: list[dict[str, Any]]) -> None:
    """Rows are added open, changed (``later``: a second set of values for some), closed in
    a shuffled order while more rows come, with batches of 4 rows: the columns equal the
    Series of the final values, dtypes included."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columns, "BATCH", 4)
        _check_rows(rows, closing, later)


def _check_rows(rows: list[dict[str, Any]], closing: Any, later: list[dict[str, Any]]) -> None:
    table = Table(COLUMNS, DEFAULTS)
    final: list[dict[str, Any]] = []
    keys = []
    for number, values in enumerate(rows):
        key = f"tx-{number}"
        table.add(key, id=key, at_ms=values["at_ms"])
        final.append({"id": key, "at_ms": values["at_ms"]})
        keys.append(key)
        if number % 3 == 0:  # close some of the open rows as the reading goes
            closing.shuffle(keys)
            for done in keys[:2]:
                update = later[int(done[3:]) % len(later)] if later else {}
                _set(table, final, done, update)
                table.close(done)
            del keys[:2]
    for key in keys:
        _set(table, final, key, rows[int(key[3:])])
    table.add(id="no-key", at_ms=1, status="settled")  # closed at once
    final.append({"id": "no-key", "at_ms": 1, "status": "settled"})
    data = table.columns()
    for name, expected in _expected(final).items():
        pd.testing.assert_series_equal(data[name], expected, check_names=False)


def _set(table: Table, final: list[dict[str, Any]], key: str, update: dict[str, Any]) -> None:
    values = {k: v for k, v in update.items() if k != "at_ms"}
    table.set(table.index[key], **values)
    final[int(key[3:])].update(values)


def test_an_empty_table_gives_empty_columns_of_their_dtypes() -> None:
    data = Table(COLUMNS, DEFAULTS).columns()
    assert [(name, str(series.dtype)) for name, series in data.items()] == [
        (name, str(pd.Series(dtype=dtype).dtype)) for name, dtype in COLUMNS]
    assert all(len(series) == 0 for series in data.values())


def test_get_reads_an_open_row_and_defaults_fill_what_was_never_set() -> None:
    table = Table(COLUMNS, DEFAULTS)
    row = table.add("a", id="a", at_ms=5)
    assert table.get(row, "n") == 0 and table.get(row, "mode") is None
    table.set(row, mode=2)
    assert table.get(row, "mode") == 2
    assert list(table.columns()["mode"]) == [2]
