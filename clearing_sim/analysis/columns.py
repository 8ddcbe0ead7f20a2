"""Compact growing columns for the frame builder: a frame's rows, kept as it reads a log.

Public names: ``Column``, ``Flags``, ``Numbers``, ``Texts``, ``Words``, ``column_for``.

A long log gives millions of rows, so a column holds no Python object per row: numbers sit in
an ``array`` of their machine type (a missing value is the type's smallest value, or NaN),
flags in a ``bytearray``, a repeated string (a status, an issuer's name) as a small code into
the column's distinct values (``Words``), and a string of its own per row (an id, an amount)
as UTF-8 bytes with offsets, as Arrow keeps strings (``Texts``). ``series(dtype)`` turns a
column into the pandas Series of its documented dtype (``frames.SCHEMAS``), the same values
a Series built from a list of Python objects holds, and empties the column as it goes.
"""

from __future__ import annotations

from array import array
from typing import Any, Protocol

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]

__all__ = ["Column", "Flags", "Numbers", "Texts", "Words", "column_for"]

#: pandas dtype → (array typecode, numpy dtype) of the integer columns.
_INTEGERS: dict[str, tuple[str, type[np.generic]]] = {
    "int8": ("b", np.int8), "int16": ("h", np.int16), "int64": ("q", np.int64)}


class Column(Protocol):
    """One column of a growing table: rows are appended, read and changed by number."""

    def append(self, value: Any) -> None: ...

    def __getitem__(self, row: int) -> Any: ...

    def __setitem__(self, row: int, value: Any) -> None: ...

    def series(self, dtype: str) -> pd.Series: ...


class Numbers:
    """Integers (nullable or not) or floats in an ``array``; ``None`` is kept as a sentinel:
    the type's smallest integer (never a count, a time or a status), or NaN."""

    values: array[Any]
    missing: float
    numpy: type[np.generic]

    def __init__(self, dtype: str) -> None:
        if dtype == "float64":
            self.values, self.missing, self.numpy = array("d"), float("nan"), np.float64
        else:
            typecode, self.numpy = _INTEGERS[dtype.lower()]
            self.values = array(typecode)
            self.missing = -(1 << (8 * self.values.itemsize - 1))

    def append(self, value: Any) -> None:
        self.values.append(self.missing if value is None else value)

    def __getitem__(self, row: int) -> Any:
        value = self.values[row]
        return None if value == self.missing or value != value else value

    def __setitem__(self, row: int, value: Any) -> None:
        self.values[row] = self.missing if value is None else value

    def series(self, dtype: str) -> pd.Series:
        values = np.frombuffer(self.values, dtype=self.numpy).copy()
        self.values = array(self.values.typecode)
        if dtype[0].isupper():  # nullable: Int8, Int16, Int64
            mask = values == self.missing
            values[mask] = 0
            return pd.Series(pd.arrays.IntegerArray(values, mask), copy=False)
        return pd.Series(values, dtype=dtype, copy=False)


class Flags:
    """Booleans, one byte each."""

    def __init__(self) -> None:
        self.values = bytearray()

    def append(self, value: Any) -> None:
        self.values.append(1 if value else 0)

    def __getitem__(self, row: int) -> bool:
        return bool(self.values[row])

    def __setitem__(self, row: int, value: Any) -> None:
        self.values[row] = 1 if value else 0

    def series(self, dtype: str) -> pd.Series:
        values = np.frombuffer(self.values, dtype=np.uint8).astype(bool)
        self.values = bytearray()
        return pd.Series(values, dtype=dtype, copy=False)


class Words:
    """Strings from a small vocabulary (statuses, names, codes): one code per row into the
    column's distinct values, in the order first seen; -1 is a missing value."""

    def __init__(self) -> None:
        self.codes = array("i")
        self.words: list[str] = []
        self.known: dict[str, int] = {}

    def _code(self, value: Any) -> int:
        if value is None:
            return -1
        code = self.known.get(value)
        if code is None:
            code = self.known[value] = len(self.words)
            self.words.append(value)
        return code

    def append(self, value: Any) -> None:
        self.codes.append(self._code(value))

    def __getitem__(self, row: int) -> str | None:
        code = self.codes[row]
        return None if code < 0 else self.words[code]

    def __setitem__(self, row: int, value: Any) -> None:
        self.codes[row] = self._code(value)

    def series(self, dtype: str) -> pd.Series:
        codes = np.frombuffer(self.codes, dtype=np.int32)
        indices = pa.array(codes, mask=codes < 0)
        strings = pa.array(self.words, type=pa.large_string()).take(indices)
        self.codes, self.words, self.known = array("i"), [], {}
        return pd.Series(strings, dtype=dtype)


class Texts:
    """Strings of their own (ids, amounts): UTF-8 bytes one after another with each row's end
    offset, as Arrow keeps them. A row is changed in place when it is the last one (a value
    set by the record that follows its row's first); an earlier row's change is remembered
    beside and applied when the Series is made."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.ends = array("q", [0])
        self.valid = bytearray()
        self.changed: dict[int, str | None] = {}

    def append(self, value: Any) -> None:
        if value is not None:
            self.data += value.encode()
        self.ends.append(len(self.data))
        self.valid.append(value is not None)

    def __getitem__(self, row: int) -> str | None:
        if row in self.changed:
            return self.changed[row]
        if not self.valid[row]:
            return None
        return self.data[self.ends[row]:self.ends[row + 1]].decode()

    def __setitem__(self, row: int, value: Any) -> None:
        if row == len(self.valid) - 1:
            del self.data[self.ends[row]:]
            del self.ends[-1], self.valid[-1]
            self.append(value)
        else:
            self.changed[row] = value

    def series(self, dtype: str) -> pd.Series:
        valid = np.frombuffer(self.valid, dtype=np.uint8).astype(bool)
        nulls = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
        strings = pa.LargeStringArray.from_buffers(
            len(valid), pa.py_buffer(self.ends), pa.py_buffer(bytes(self.data)), nulls)
        self.data, self.ends, self.valid = bytearray(), array("q", [0]), bytearray()
        column = pd.Series(strings, dtype=dtype)
        if self.changed:
            rows = sorted(self.changed)
            column.iloc[rows] = [self.changed[row] for row in rows]
            self.changed = {}
        return column


def column_for(dtype: str, distinct: bool = False) -> Column:
    """The column that holds values of a ``SCHEMAS`` dtype; ``distinct``: a ``str`` column
    whose rows mostly hold values of their own."""
    if dtype == "str":
        return Texts() if distinct else Words()
    if dtype == "bool":
        return Flags()
    return Numbers(dtype)
