"""Reading a sweep's output folder: every file checked as it is read, one error for them all.

Public names: ``ResultsFileError``, ``ResultsFileMissing``, ``check_fields``,
``read_json_object``, ``read_plan``, ``read_table``.

A folder on disk can hold anything: a file cut short by a full disk, overwritten, edited by
hand, written by another tool. Every reader of a sweep's output folder (``load_results``, a
sweep resuming, ``read_run``, ``SweepResult.frames``) reads through this module, which turns
each way a file can be wrong (unreadable, not JSON or not Parquet, text that is not UTF-8,
the wrong shape, a field or a column missing or of another kind) into one error that names
the file, and the field where one is at fault::

    Exception
    └── ResultsFileError        "FOLDER/FILE: what is wrong" (the CLI: exit code 2)
        └── ResultsFileMissing  the file is not there (a frame a run did not keep)

Only what reading raises is caught: ``OSError``; ``ValueError`` (``parse_untrusted``'s for
JSON, Arrow's ``ArrowInvalid``); Arrow's other errors; and the ``KeyError`` and ``TypeError``
pandas raises for a Parquet file's damaged pandas metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pyarrow  # type: ignore[import-untyped]
from pyarrow import ArrowException

from clearing_sim.domain.jsontext import parse_untrusted

__all__ = ["ResultsFileError", "ResultsFileMissing", "check_fields", "read_json_object",
           "read_plan", "read_table"]


class ResultsFileError(Exception):
    """A file (or the folder) of a sweep's output cannot be used: ``path``, the ``field`` at
    fault if one is, and what is wrong."""

    def __init__(self, path: Path, message: str, field: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if field is None else f"{path}: {field}: {message}")
        self.path = path
        self.field = field


class ResultsFileMissing(ResultsFileError):
    """The file is not there."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: A JSON value's kind → what it is called, and the test of a value (``KIND[]``: an array of
#: values of that kind).
_JSON_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "string": ("a string", lambda v: isinstance(v, str)),
    "string or null": ("a string or null", lambda v: v is None or isinstance(v, str)),
    "integer": ("an integer", _is_int),
    "object": ("an object", lambda v: isinstance(v, dict)),
}
#: ``sweep.json``'s fields that its readers use (``SweepResult``, the report).
_PLAN_FIELDS = {"format": "integer", "sweep": "string", "description": "string",
                "version": "string", "sweepFile": "string", "workloadFile": "string",
                "sweepText": "string", "workloadText": "string", "seeds": "integer[]",
                "frames": "string[]", "params": "object[]", "command": "string",
                "out": "string or null"}


def _json_kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "null" if value is None else "true or false"
    names = {dict: "an object", list: "an array", str: "a string", int: "an integer",
             float: "a number"}
    return names.get(type(value), type(value).__name__)


def _existing_file(path: Path) -> None:
    if not path.exists():
        raise ResultsFileMissing(path, "no such file")
    if not path.is_file():
        raise ResultsFileError(path, "expected a file, found a folder")


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in the file at ``path``."""
    _existing_file(path)
    try:
        data = parse_untrusted(path.read_bytes())
    except OSError as error:
        raise ResultsFileError(path, f"cannot be read: {error.strerror or error}") from None
    except ValueError as error:  # JSONRefused: not UTF-8, not JSON, nested too deeply
        raise ResultsFileError(path, str(error)) from None
    if not isinstance(data, dict):
        raise ResultsFileError(path, f"expected a JSON object, found {_json_kind(data)}")
    return data


def check_fields(path: Path, data: dict[str, Any], fields: dict[str, str],
                 where: str = "") -> None:
    """``ResultsFileError`` at the first of ``fields`` (name → kind: ``string``, ``integer``,
    ``object``, ``string or null``, ``KIND[]`` for an array) that ``data`` (at ``where`` in
    the file) lacks or holds another kind in."""
    for name, kind in fields.items():
        element = kind.removesuffix("[]")
        if name not in data:
            what = _JSON_KINDS[kind][0] if element == kind else "an array"
            raise ResultsFileError(path, f"missing; expected {what}", f"{where}{name}")
        value = data[name]
        if element == kind:
            _check_value(path, value, kind, f"{where}{name}")
        elif not isinstance(value, list):
            raise ResultsFileError(path, f"expected an array, found {_json_kind(value)}",
                                   f"{where}{name}")
        else:
            for i, item in enumerate(value):
                _check_value(path, item, element, f"{where}{name}[{i}]")


def _check_value(path: Path, value: Any, kind: str, field: str) -> None:
    what, test = _JSON_KINDS[kind]
    if not test(value):
        raise ResultsFileError(path, f"expected {what}, found {_json_kind(value)}", field)


def read_plan(folder: Path) -> dict[str, Any]:
    """``sweep.json`` of a sweep's output folder: the plan of the sweep last started there,
    with every field its readers use, each parameter set with its ``param_id``."""
    path = folder / "sweep.json"
    plan = read_json_object(path)
    check_fields(path, plan, _PLAN_FIELDS)
    for i, params in enumerate(plan["params"]):
        check_fields(path, params, {"param_id": "string"}, f"params[{i}].")
    return plan


def _text(dtype: Any) -> bool:
    return bool(pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype))


def _of_kind(found: Any, dtype: str) -> bool:
    """Whether a column read back as ``found`` is of the kind of ``dtype`` (as the package
    writes it: ``str``, ``category``, ``Int8``, ``datetime64[ms, UTC]``, …): text, integers,
    numbers, booleans or times, whatever their width."""
    if dtype == "str":
        return _text(found)
    if dtype == "category":
        return isinstance(found, pd.CategoricalDtype) or _text(found)
    types, wanted = pd.api.types, pd.api.types.pandas_dtype(dtype)
    for kind in (types.is_bool_dtype, types.is_integer_dtype, types.is_datetime64_any_dtype):
        if kind(wanted):
            return bool(kind(found))
    return bool(types.is_numeric_dtype(found) and not types.is_bool_dtype(found))


def _invalid_text(frame: pd.DataFrame) -> tuple[str, str] | None:
    """The first text column (or categories) whose bytes are not UTF-8, and why: Arrow
    decodes a Parquet file's strings only when a value is used, so a damaged one would
    otherwise raise ``UnicodeDecodeError`` wherever that happens."""
    for name in frame.columns:
        values = frame[name].array
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.categories.array
        if hasattr(values, "__arrow_array__") and pd.api.types.is_string_dtype(values.dtype):
            try:
                pyarrow.array(values).validate(full=True)
            except ArrowException as error:
                return str(name), str(error)
    return None


def read_table(path: Path, columns: Iterable[tuple[str, str]]) -> pd.DataFrame:
    """The Parquet file at ``path`` as a frame with every one of ``columns`` (name, dtype as
    the package writes it), each of its dtype's kind (an integer column of integers, …)."""
    _existing_file(path)
    try:
        frame = pd.read_parquet(path)
    except (ArrowException, OSError, ValueError, KeyError, TypeError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        reason = reason.removeprefix(f"Could not open Parquet input source '{path}': ")
        raise ResultsFileError(path, f"expected a Parquet table: {reason[:200]}") from None
    if not frame.columns.is_unique:
        twice = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
        raise ResultsFileError(path, f"expected each column once; {', '.join(twice)} is "
                               "there more than once")
    undecodable = _invalid_text(frame)
    if undecodable is not None:
        raise ResultsFileError(path, f"expected UTF-8 text: {undecodable[1]}", undecodable[0])
    for name, dtype in columns:
        if name not in frame.columns:
            raise ResultsFileError(path, "missing column", name)
        if not _of_kind(frame[name].dtype, dtype):
            raise ResultsFileError(path, f"expected a column of {dtype}, found "
                                   f"{frame[name].dtype}", name)
    return frame
