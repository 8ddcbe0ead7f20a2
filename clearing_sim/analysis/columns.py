"""A growing table for the frame builder: a frame's rows as it reads a log, kept compact.

Public names: ``Table``, ``strings``, ``timestamps``.

A long log gives millions of rows, so a table holds Python objects only for its newest rows
(most of them still changing): once ``LAG + BATCH`` rows wait, the oldest ``BATCH`` become,
column by column, arrays of their machine type (numbers, flags and masks in numpy blocks,
strings in Arrow as UTF-8 bytes with offsets, ``category`` columns as integer codes). The
batches are in the order the rows were added, so ``columns()`` only joins each column's
batches: a ``str`` column is the Series of its Arrow arrays as they are (no copy), a numeric
one its block (a view) or its blocks joined. A row batched while still open drops its Python
values: its key then addresses its place in the arrays, which ``get`` and ``set`` read and
write (a changed string is patched into the finished Series), so rows open to the end
(transactions parked for good) cost a few bytes. A column's arrays are released once its
Series exists. The Series are those a list of the final Python values gives for the column's
dtype (``frames.SCHEMAS``); a ``category`` column's categories are its values, sorted, as
``str``. Nothing is allocated in Arrow's default pool (``strings``).
"""

from __future__ import annotations

import bisect
import ctypes
import ctypes.util
import mmap
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]

__all__ = ["Table", "strings", "timestamps"]

#: Rows turned into arrays at a time, the oldest first.
BATCH = 512
#: The newest rows that stay Python objects (most are still changing).
LAG = 256
#: Rows per block of a numeric column (a multiple of BATCH): blocks are anonymous memory maps,
#: whose pages take memory only once written, so a block is allocated whole and filled.
BLOCK = 1 << 18
#: Batches of a string column joined into one Arrow array at a time (fewer, larger buffers).
MERGE = 32
#: Where the Arrow batches live: the C allocator, trimmed after each batch and as the frame's
#: columns are made (with Arrow's default pool, mimalloc, or without the trims, a
#: 200 000-transaction log's frame peaked at 221-255 MiB of RSS instead of about 200).
_POOL = pa.system_memory_pool()
_NUMPY = {"Int8": np.int8, "Int16": np.int16, "Int64": np.int64, "category": np.int32}

Row = list[Any]  # the values in column order, then the row's key and number
Arrays = tuple[Any, ...]  # a column's arrays: its values (and a nullable column's mask)


class _Codes(dict[Any, int]):
    """A ``category`` column's codes: value → code, in the order first seen (None: -1)."""

    def __init__(self) -> None:
        super().__init__({None: -1})

    def __missing__(self, value: Any) -> int:
        code = self[value] = len(self) - 1
        return code


class _Batched:
    """An open row already batched: its values are read from and written to the column
    arrays, so a row that stays open to the end of a long log (a transaction parked for good)
    holds no Python values (a list of them cost about a kilobyte a row)."""

    __slots__ = ("number", "table")

    def __init__(self, table: Table, number: int) -> None:
        self.table, self.number = table, number

    def __getitem__(self, at: int) -> Any:
        return self.number if at == -1 else self.table.read(self.number, at)

    def __setitem__(self, at: int, value: Any) -> None:
        self.table.write(self.number, at, value)


OpenRow = Row | _Batched  # an open row: its Python values, or its place in the arrays


class Table:
    """Rows addressed by a key while open; columns ``columns`` with their pandas dtypes."""

    def __init__(self, columns: Sequence[tuple[str, str]],
                 defaults: dict[str, Any] | None = None) -> None:
        self.dtypes = dict(columns)
        self.position = {name: at for at, name in enumerate(self.dtypes)}
        self.names = list(self.dtypes)
        self.blank: Row = [(defaults or {}).get(name) for name in self.dtypes]
        self.index: dict[Hashable, OpenRow] = {}
        self.pending: list[Row] = []  # the rows not yet batched, in the order added
        self.batched = 0  # rows batched (numbers 0 to batched - 1)
        #: per column: its blocks (numbers), or its Arrow arrays (strings)
        self.stored: list[list[Arrays]] = [[] for _ in self.dtypes]
        self.starts: list[int] = []  # the first row of each string array
        self.unjoined = 0  # string arrays at the end not yet joined (one batch each)
        self.codes = [_Codes() for _ in self.dtypes]
        self.patches: dict[tuple[int, int], Any] = {}  # (row, column) → string changed late
        self.size = 0

    def add(self, key: Hashable = None, **values: Any) -> Row:
        """A new row; with a ``key`` it stays open (``index[key]``) until ``close(key)``."""
        row = [*self.blank, key, self.size]
        self.size += 1
        position = self.position
        for name, value in values.items():
            row[position[name]] = value
        self.pending.append(row)
        if key is not None:
            self.index[key] = row
        if len(self.pending) >= LAG + BATCH:
            self._batch(BATCH)
        return row

    def set(self, row: OpenRow, **values: Any) -> None:
        position = self.position
        for name, value in values.items():
            row[position[name]] = value

    def setter(self, *names: str) -> Callable[..., None]:
        """A function ``(row, *values)`` that sets the columns ``names``, in that order: what
        ``set`` does, without a mapping of names built and read on every call."""
        positions = tuple(self.position[name] for name in names)
        first, end = positions[0], positions[0] + len(positions)

        def set_values(row: OpenRow, *values: Any) -> None:
            for at, value in zip(positions, values, strict=True):
                row[at] = value

        def set_span(row: OpenRow, *values: Any) -> None:
            if type(row) is list and len(values) == end - first:
                row[first:end] = values
            else:
                set_values(row, *values)
        #: (columns side by side, in order: a list row takes them as one slice)
        return set_span if positions == tuple(range(first, end)) else set_values

    def get(self, row: OpenRow, name: str) -> Any:
        return row[self.position[name]]

    def close(self, key: Hashable) -> None:
        """The row of ``key`` can no longer change."""
        del self.index[key]

    def _batch(self, count: int) -> None:
        rows, self.pending = self.pending[:count], self.pending[count:]
        block, offset = divmod(self.batched, BLOCK)
        self.starts.append(self.batched)
        self.unjoined += 1
        joining = self.unjoined == MERGE
        for at, (values, dtype) in enumerate(zip(zip(*rows, strict=True),
                                                 self.dtypes.values(), strict=False)):
            arrays, stored = _convert(values, dtype, self.codes[at]), self.stored[at]
            if dtype == "category" and stored and arrays[0].itemsize > stored[0][0].itemsize:
                stored[:] = [(_widened(b[0], arrays[0].dtype),) for b in stored]
            if dtype == "str":
                stored.append(arrays)
                if joining:
                    stored[-MERGE:] = [(pa.concat_arrays([a[0] for a in stored[-MERGE:]],
                                                         memory_pool=_POOL),)]
            else:
                if offset == 0:
                    stored.append(tuple(_empty(array.dtype) for array in arrays))
                for target, array in zip(stored[block], arrays, strict=True):
                    target[offset:offset + len(array)] = array
        if joining:
            self.starts[-MERGE:] = [self.starts[-MERGE]]
            self.unjoined = 0
        self.batched += len(rows)
        index = self.index
        for row in rows:  # the open ones: their values now live in the arrays
            if row[-2] is not None and index.get(row[-2]) is row:
                index[row[-2]] = _Batched(self, row[-1])
        del rows
        _release()

    def read(self, number: int, at: int) -> Any:
        """The value of batched row ``number`` in column ``at``, as a Python row holds it."""
        dtype = self.dtypes[self.names[at]]
        if dtype == "str":
            if (number, at) in self.patches:
                return self.patches[number, at]
            start = bisect.bisect_right(self.starts, number) - 1
            return self.stored[at][start][0][number - self.starts[start]].as_py()
        block, at_row = divmod(number, BLOCK)
        arrays = self.stored[at][block]
        if dtype == "category":
            code = int(arrays[0][at_row])
            return None if code < 0 else list(self.codes[at])[code + 1]  # (in code order)
        if dtype[0].isupper():
            return None if arrays[1][at_row] else int(arrays[0][at_row])
        value = arrays[0][at_row].item()
        return None if value != value else value  # (NaN: the missing float)

    def write(self, number: int, at: int, value: Any) -> None:
        """``value`` written over batched row ``number``'s in column ``at`` (a string that
        differs is patched in at the end, Arrow arrays being immutable)."""
        dtype = self.dtypes[self.names[at]]
        if dtype == "str":
            if self.read(number, at) != value:
                self.patches[number, at] = value
            return
        block, at_row = divmod(number, BLOCK)
        arrays = self.stored[at][block]
        if dtype == "category":
            code = self.codes[at][value]
            wider = np.min_scalar_type(-len(self.codes[at]))
            if wider.itemsize > arrays[0].itemsize:
                self.stored[at][:] = [(_widened(b[0], wider),) for b in self.stored[at]]
                arrays = self.stored[at][block]
            arrays[0][at_row] = code
        elif dtype[0].isupper():
            arrays[0][at_row], arrays[1][at_row] = (0, True) if value is None else (value, False)
        else:
            arrays[0][at_row] = np.nan if value is None else value

    def columns(self) -> dict[str, pd.Series]:
        """Every column as a Series of its dtype, the rows in the order they were added."""
        self.index.clear()
        while self.pending:
            self._batch(min(BATCH, len(self.pending)))
        data: dict[str, pd.Series] = {}
        for at, (name, dtype) in enumerate(self.dtypes.items()):
            stored, self.stored[at] = self.stored[at], []
            data[name] = _series(stored, dtype, self.codes[at], self.size)
            del stored
            patches = [(number, value) for (number, column), value in self.patches.items()
                       if column == at]
            if patches:
                numbers, values = zip(*patches, strict=True)
                data[name].iloc[list(numbers)] = pd.Series(values, dtype=dtype).to_numpy()
            _release()
        self.patches.clear()
        return data


def _empty(dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """A block of ``dtype``: an anonymous memory map, whose pages cost only once written;
    private (``mmap``'s default is shared: a process forked later would share the frame's
    columns with its parent, each seeing the other's writes)."""
    size = BLOCK * dtype.itemsize
    if _PRIVATE is None:  # (Windows: an anonymous map is private)
        return np.frombuffer(mmap.mmap(-1, size), dtype=dtype)
    return np.frombuffer(mmap.mmap(-1, size, flags=_PRIVATE), dtype=dtype)


_PRIVATE: int | None = (mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                        if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS")
                        else None)


def _widened(block: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """A block of category codes as a new block of a wider type (more categories came)."""
    wider = _empty(dtype)
    wider[:] = block
    return wider


def _convert(values: Sequence[Any], dtype: str, codes: _Codes) -> Arrays:
    """One column's values (None: missing) as the arrays of ``dtype`` that hold them."""
    if dtype == "str":
        return (pa.array(values, type=pa.large_string(), memory_pool=_POOL),)
    if dtype == "category":
        found = np.fromiter(map(codes.__getitem__, values), np.int32, len(values))
        return (found.astype(np.min_scalar_type(-len(codes))),)
    if dtype[0].isupper():  # nullable: Int8, Int16, Int64
        objects = np.array(values, dtype=object)
        mask: np.ndarray[Any, Any] = np.fromiter((v is None for v in values), bool, len(values))
        objects[mask] = 0
        return objects.astype(_NUMPY[dtype]), mask
    return (np.array(values, dtype=dtype),)  # float64 holds None as NaN


def _joined(blocks: list[Arrays], dtype: str, size: int, part: int = 0) -> np.ndarray[Any, Any]:
    """Part ``part`` of a column's blocks as one array of ``size`` rows (one block: a view)."""
    if not blocks:
        return np.empty(0, dtype=_NUMPY.get(dtype, dtype))
    if len(blocks) == 1:
        view: np.ndarray[Any, Any] = blocks[0][part][:size]
        return view
    return np.concatenate([block[part][:size - at * BLOCK] for at, block in enumerate(blocks)])


def strings(values: pa.ChunkedArray | Sequence[str | None]) -> pd.Series:
    """A ``str`` Series of these values, its Arrow buffers in ``_POOL`` (nothing allocated in
    Arrow's default pool, whose first use costs the process about 4 MiB)."""
    if not isinstance(values, pa.ChunkedArray):
        values = pa.array(values, type=pa.large_string(), memory_pool=_POOL)
    return pd.Series(values, dtype="str", copy=False)


def timestamps(ms: pd.Series, epoch_ms: int) -> pd.Series:
    """``datetime64[ms, UTC]`` of ``epoch_ms`` + ``ms`` (NaT where ``ms`` is missing) in one
    new buffer: the milliseconds copied once, shifted and masked in place, then wrapped as they
    are. (``tz_localize`` copies them again: built at the end, when the rest of the frame is
    whole, that second copy was the peak of the whole build.)"""
    stamps = (ms.to_numpy(dtype="int64", copy=True) if isinstance(ms.dtype, np.dtype)
              else ms.to_numpy(dtype="int64", na_value=0, copy=True))  # (int64 | Int64)
    stamps += epoch_ms
    values = stamps.view("datetime64[ms]")
    values[ms.isna().to_numpy()] = np.datetime64("NaT")
    return pd.Series(_utc(values), copy=False)


def _utc(values: np.ndarray[Any, Any]) -> Any:
    """UTC instants (``datetime64[ms]``) as a ``datetime64[ms, UTC]`` array on the same buffer
    (pandas' constructor without the copy; where pandas lacks it, ``tz_localize``'s copy)."""
    wrap = getattr(pd.arrays.DatetimeArray, "_simple_new", None)
    if wrap is None:
        return pd.Series(values, copy=False).dt.tz_localize("UTC").array
    return wrap(values, dtype=pd.DatetimeTZDtype(unit="ms", tz="UTC"))


def _series(stored: list[Arrays], dtype: str, codes: _Codes, size: int) -> pd.Series:
    """The Series of ``dtype`` that holds a column's stored arrays."""
    if dtype == "str":
        return strings(pa.chunked_array([arrays[0] for arrays in stored],
                                         type=pa.large_string()))
    if dtype == "category":
        categories = sorted(value for value in codes if value is not None)
        recode = np.full(len(codes), -1, dtype=np.int32)  # first seen → sorted; -1 stays -1
        for new, value in enumerate(categories):
            recode[codes[value]] = new
        return pd.Series(pd.Categorical.from_codes(
            recode[_joined(stored, dtype, size)],
            dtype=pd.CategoricalDtype(pd.Index(strings(categories)))), copy=False)
    if dtype[0].isupper():
        return pd.Series(pd.arrays.IntegerArray(
            _joined(stored, dtype, size), _joined(stored, "bool", size, 1)), copy=False)
    return pd.Series(_joined(stored, dtype, size), dtype=dtype, copy=False)


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
