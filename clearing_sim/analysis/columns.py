"""A growing table for the frame builder: a frame's rows as it reads a log, kept compact.

Public names: ``Table``.

A long log gives millions of rows, so a table holds Python objects only for the rows that can
still change (an open transaction: ``index``) and for a batch of finished ones: every
``BATCH`` rows, the finished rows are turned, column by column, into Arrow arrays of their
machine type (numbers, flags, strings as UTF-8 bytes with offsets), in C. ``columns()`` puts
the batches back in the order the rows were added and makes each column the pandas Series
of its documented dtype (``frames.SCHEMAS``): the same values a Series built from a list of
Python objects holds. A column's Arrow arrays are released once its Series exists.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

__all__ = ["Table"]

#: Rows turned into Arrow arrays at a time (those finished among them).
BATCH = 8192
#: Where the batches live: the C allocator, trimmed after each batch and as the frame's
#: columns are made (with Arrow's default pool, mimalloc, or without the trims, a
#: 200 000-transaction log's frame peaked at 221-255 MiB of RSS instead of about 200).
_POOL = pa.system_memory_pool()
#: pandas dtype → the Arrow type its values are batched as.
_ARROW = {"str": pa.large_string(), "bool": pa.bool_(), "float64": pa.float64(),
          "int8": pa.int8(), "Int8": pa.int8(), "int16": pa.int16(), "Int16": pa.int16(),
          "int64": pa.int64(), "Int64": pa.int64()}

Row = list[Any]  # the values in column order, then the row's number


class Table:
    """Rows addressed by a key while open; columns ``columns`` with their pandas dtypes."""

    def __init__(self, columns: Sequence[tuple[str, str]],
                 defaults: dict[str, Any] | None = None) -> None:
        self.dtypes = dict(columns)
        self.position = {name: at for at, name in enumerate(self.dtypes)}
        self.blank: Row = [(defaults or {}).get(name) for name in self.dtypes]
        self.index: dict[Hashable, Row] = {}
        self.pending: list[Row] = []  # rows not yet batched, open ones among them
        self.batches: list[list[pa.Array]] = []  # per batch: one array per column, then numbers
        self.size = 0

    def add(self, key: Hashable = None, **values: Any) -> Row:
        """A new row; with a ``key`` it stays open (``index[key]``) until ``close(key)``."""
        row = [*self.blank, self.size]
        self.size += 1
        self.set(row, **values)
        self.pending.append(row)
        if key is not None:
            self.index[key] = row
        if len(self.pending) >= BATCH and len(self.pending) >= 2 * len(self.index):
            self._batch()
        return row

    def set(self, row: Row, **values: Any) -> None:
        for name, value in values.items():
            row[self.position[name]] = value

    def get(self, row: Row, name: str) -> Any:
        return row[self.position[name]]

    def close(self, key: Hashable) -> None:
        """The row of ``key`` can no longer change."""
        del self.index[key]

    def rows(self) -> list[Row]:
        """The rows not yet batched (all the open ones among them)."""
        return self.pending

    def _batch(self, everything: bool = False) -> None:
        open_rows = {id(row) for row in self.index.values()} if not everything else set()
        done = [row for row in self.pending if id(row) not in open_rows]
        self.pending = [row for row in self.pending if id(row) in open_rows]
        if not done:
            return
        values = list(zip(*done, strict=True))
        del done
        arrays = [pa.array(column, type=_ARROW[dtype], memory_pool=_POOL)
                  for column, dtype in zip(values, self.dtypes.values(), strict=False)]
        arrays.append(pa.array(values[-1], type=pa.int64(), memory_pool=_POOL))
        self.batches.append(arrays)
        _release()

    def columns(self) -> dict[str, pd.Series]:
        """Every column as a Series of its dtype, the rows in the order they were added."""
        self._batch(everything=True)
        self.index.clear()
        numbers = pa.chunked_array([batch[-1] for batch in self.batches], type=pa.int64())
        order = pa.array(np.argsort(numbers.to_numpy(), kind="stable"))
        data: dict[str, pd.Series] = {}
        for at, (name, dtype) in enumerate(self.dtypes.items()):
            chunks = [batch[at] for batch in self.batches]
            for batch in self.batches:
                batch[at] = None
            values = pc.take(pa.chunked_array(chunks, type=_ARROW[dtype]), order,
                             memory_pool=_POOL)
            del chunks
            data[name] = _series(values, dtype)
            _release()
        self.batches.clear()
        return data


def _c_trim() -> Callable[[], object]:
    """The C library's ``malloc_trim(0)`` where there is one (glibc), else nothing to do."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return lambda: None
    return lambda: trim(0)


_TRIM = _c_trim()


def _release() -> None:
    """Give what was freed back to the system: freed batches would otherwise stay in the
    process beside the new columns (Arrow's ``release_unused`` does not trim the C heap)."""
    _TRIM()
    pa.default_memory_pool().release_unused()


def _series(values: pa.ChunkedArray, dtype: str) -> pd.Series:
    """The Series of ``dtype`` that holds ``values`` (nulls: NaN or ``<NA>``)."""
    if dtype == "str":
        return pd.Series(values, dtype=dtype)
    if dtype[0].isupper():  # nullable: Int8, Int16, Int64
        mask = pc.is_null(values, memory_pool=_POOL).to_numpy(zero_copy_only=False)
        numbers = pc.fill_null(values, 0).to_numpy()
        return pd.Series(pd.arrays.IntegerArray(numbers, mask), copy=False)
    return pd.Series(values.to_numpy(zero_copy_only=False), dtype=dtype, copy=False)
