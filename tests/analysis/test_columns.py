"""The frame builder's table: rows closed in any order, batched into Arrow, come back as the
Series a list of Python values gives, in the order they were added."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.analysis import columns
from clearing_sim.analysis.columns import Table

COLUMNS = (("id", "str"), ("status", "str"), ("mode", "Int8"), ("code", "Int16"),
           ("at_ms", "int64"), ("done_ms", "Int64"), ("latency_s", "float64"),
           ("n", "int8"), ("parked", "bool"), ("leg", "category"))
DEFAULTS = {"n": 0, "parked": False}

ROW = st.fixed_dictionaries({
    "status": st.none() | st.sampled_from(["received", "settled", "parked", "ünïcode"]),
    "mode": st.none() | st.integers(1, 3), "code": st.none() | st.integers(100, 599),
    "at_ms": st.integers(0, 2**62), "done_ms": st.none() | st.integers(0, 2**62),
    "latency_s": st.none() | st.floats(allow_nan=False), "n": st.integers(0, 7),
    "parked": st.booleans(), "leg": st.none() | st.sampled_from(["mint", "burn", "ünï"])})


def _expected(rows: list[dict[str, Any]]) -> dict[str, pd.Series]:
    return {name: _series([row.get(name, DEFAULTS.get(name)) for row in rows], dtype)
            for name, dtype in COLUMNS}


def _series(values: list[Any], dtype: str) -> pd.Series:
    """A list's Series; a ``category`` one's categories are its values, sorted, as ``str``."""
    if dtype == "category":
        categories = pd.Index(sorted({v for v in values if v is not None}), dtype="str")
        return pd.Series(pd.Categorical(values, categories=categories))
    return pd.Series(values, dtype=dtype)


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
        patch.setattr(columns, "LAG", 3)
        patch.setattr(columns, "BLOCK", 8)
        patch.setattr(columns, "MERGE", 2)
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
        (name, str(_series([], dtype).dtype)) for name, dtype in COLUMNS]
    assert all(len(series) == 0 for series in data.values())


def test_get_reads_an_open_row_and_defaults_fill_what_was_never_set() -> None:
    table = Table(COLUMNS, DEFAULTS)
    row = table.add("a", id="a", at_ms=5)
    assert table.get(row, "n") == 0 and table.get(row, "mode") is None
    table.set(row, mode=2)
    assert table.get(row, "mode") == 2
    assert list(table.columns()["mode"]) == [2]


def test_category_codes_widen_as_values_come_in_batches_and_late_rows() -> None:
    """A ``category`` column's codes start as int8 and widen when more than 127 values
    come, in a batch or in a row written back after its batch."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columns, "BATCH", 4)
        patch.setattr(columns, "LAG", 2)
        patch.setattr(columns, "BLOCK", 8)
        patch.setattr(columns, "MERGE", 2)
        table = Table((("id", "str"), ("leg", "category")))
        table.add("open", id="open")
        values = [f"v{n:03d}" for n in range(300)]
        for value in values:
            table.add(id=value, leg=value)
        table.set(table.index["open"], leg="zzz")
        table.close("open")
        data = table.columns()
    expected = pd.Series(pd.Categorical(["zzz", *values],
                                        categories=pd.Index([*values, "zzz"], dtype="str")))
    pd.testing.assert_series_equal(data["leg"], expected, check_names=False)


def test_a_setter_sets_its_columns_in_order_and_refuses_a_wrong_count() -> None:
    table = Table(COLUMNS, DEFAULTS)
    row = table.add("a", id="a", at_ms=5)
    set_mode_and_code = table.setter("mode", "code")
    set_mode_and_code(row, 3, 404)
    assert (table.get(row, "mode"), table.get(row, "code")) == (3, 404)
    with pytest.raises(ValueError):
        set_mode_and_code(row, 1)


def test_string_batches_are_joined_merge_at_a_time_never_again() -> None:
    """Every MERGE string batches become one array of MERGE batches (a joined array is not
    joined again: each string is copied once), and the column is their values in order."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columns, "BATCH", 4)
        patch.setattr(columns, "LAG", 0)
        patch.setattr(columns, "MERGE", 2)
        table = Table((("id", "str"),))
        for number in range(4 * 8):
            table.add(id=f"r{number}")
        assert [len(arrays[0]) for arrays in table.stored[0]] == [8, 8, 8, 8]
        assert list(table.columns()["id"]) == [f"r{number}" for number in range(32)]


def test_numeric_blocks_are_private_to_the_process() -> None:
    """A forked child that writes into a frame's numeric column does not change the
    parent's (the blocks are private maps, not mmap's default shared ones)."""
    table = Table((("at_ms", "int64"),))
    for number in range(3):
        table.add(at_ms=number)
    table._batch(3)
    block = table.stored[0][0][0]
    pid = os.fork()
    if pid == 0:  # the child
        block[0] = 99
        os._exit(0)
    os.waitpid(pid, 0)
    assert list(table.columns()["at_ms"]) == [0, 1, 2]


def test_an_open_row_once_batched_holds_no_python_values_and_reads_and_writes_its_arrays(
        ) -> None:
    """A row still open when its batch is made is no longer a list of values (a row parked
    to the end of a long log would keep them all): ``get`` reads what the arrays hold, as a
    Python row would give it, and ``set`` writes there (a changed string is patched)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columns, "BATCH", 2)
        patch.setattr(columns, "LAG", 0)
        table = Table(COLUMNS, DEFAULTS)
        table.add("open", id="open", status="parked", mode=2, at_ms=7, latency_s=None,
                  leg="burn")
        table.add(id="closed", at_ms=8, done_ms=9, latency_s=1.5, parked=True)
        row = table.index["open"]
        assert not isinstance(row, list)
        assert [table.get(row, name) for name, _ in COLUMNS] == [
            "open", "parked", 2, None, 7, None, None, 0, False, "burn"]
        table.set(row, status="settled", mode=None, code=404, done_ms=12, latency_s=0.25,
                  n=3, parked=True, leg="mint")
        assert [table.get(row, name) for name, _ in COLUMNS] == [
            "open", "settled", None, 404, 7, 12, 0.25, 3, True, "mint"]
        table.setter("mode", "code")(row, 1, 500)  # (side by side: a list row's slice)
        assert (table.get(row, "mode"), table.get(row, "code")) == (1, 500)
        table.close("open")
        data = table.columns()
    assert list(data["status"].fillna("-")) == ["settled", "-"]
    assert list(data["leg"].astype(object).fillna("-")) == ["mint", "-"]
    assert list(data["done_ms"]) == [12, 9] and list(data["parked"]) == [True, True]
    assert list(data["code"].astype(object).fillna(-1)) == [500, -1]


def test_timestamps_are_a_new_buffer_of_epoch_plus_ms_with_nat_where_missing() -> None:
    """``timestamps`` equals ``tz_localize``'s answer and leaves its source as it was, for a
    plain ``int64`` column (which ``to_numpy`` with ``na_value`` would hand back as is) and
    a nullable one."""
    epoch = 1_767_225_600_000
    for ms in (pd.Series([0, 5, 86_400_000], dtype="int64"),
               pd.Series([0, None, 86_400_000], dtype="Int64")):
        before = ms.copy()
        stamps = columns.timestamps(ms, epoch)
        expected = pd.Series(
            [pd.NaT if pd.isna(v) else pd.Timestamp(epoch + int(v), unit="ms", tz="UTC")
             for v in ms], dtype="datetime64[ms, UTC]")
        pd.testing.assert_series_equal(stamps, expected)
        pd.testing.assert_series_equal(ms, before)
        assert str(stamps.dtype) == "datetime64[ms, UTC]"
