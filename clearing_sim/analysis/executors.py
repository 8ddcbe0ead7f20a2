"""Where a sweep's runs execute: this process, local worker processes, or a Dask cluster.

Public names: ``DaskExecutor``, ``Executor``, ``ProcessExecutor``, ``SerialExecutor``,
``executor_for``.

One interface: ``map_unordered(fn, tasks)`` yields ``fn(task)`` for every task as each one
finishes, in whatever order they finish; ``close()`` stops what is left (an interrupted sweep
cancels the runs not yet started). The caller orders the results, so the executor and the
number of workers never change a sweep's output. ``fn`` must be a module-level function and
tasks picklable.

- ``SerialExecutor``: in this process, one run after the other (``--workers 1``).
- ``ProcessExecutor(workers)``: a ``ProcessPoolExecutor``. Workers start from a fork server
  (where the platform has one) that has imported the run code once, so starting a worker is
  cheap and no thread of this process is forked.
- ``DaskExecutor(address)``: a ``distributed.Client`` on the scheduler at ``address`` (or a
  given client); the run code must be importable on the workers.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from multiprocessing.context import BaseContext
from typing import Any, Protocol, TypeVar

from clearing_sim.commands.extras import require

__all__ = ["DaskExecutor", "Executor", "ProcessExecutor", "SerialExecutor", "executor_for"]

T = TypeVar("T")
R = TypeVar("R")

#: Imported once by the fork server, before it forks workers.
_PRELOAD = ["clearing_sim.analysis.runs"]


class Executor(Protocol):
    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]: ...

    def close(self) -> None: ...


class SerialExecutor:
    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
        for task in tasks:
            yield fn(task)

    def close(self) -> None:
        pass


class ProcessExecutor:
    def __init__(self, workers: int) -> None:
        assert workers >= 1, workers
        context: BaseContext
        if "forkserver" in multiprocessing.get_all_start_methods():
            server = multiprocessing.get_context("forkserver")
            server.set_forkserver_preload(_PRELOAD)
            context = server
        else:
            context = multiprocessing.get_context("spawn")
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
        futures: list[Future[R]] = [self._pool.submit(fn, task) for task in tasks]
        for future in as_completed(futures):
            yield future.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    def __init__(self, address: Any, timeout: str = "10s") -> None:
        require("sweeps", "a sweep on a Dask cluster (--dask)")
        from distributed import Client

        self._own = not isinstance(address, Client)
        self._client = Client(address, timeout=timeout) if self._own else address  # type: ignore[no-untyped-call]

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
        from distributed import as_completed as dask_completed

        futures = self._client.map(fn, list(tasks), pure=False)
        try:
            for future in dask_completed(futures):  # type: ignore[no-untyped-call]
                result: R = future.result()
                future.release()
                yield result
        finally:
            self._client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        if self._own:
            self._client.close()


def executor_for(workers: int = 1, dask: Any = None) -> Executor:
    """Dask when ``dask`` (an address or a ``distributed.Client``) is given; otherwise local
    processes, or this process for one worker."""
    if dask is not None:
        return DaskExecutor(dask)
    return SerialExecutor() if workers <= 1 else ProcessExecutor(workers)
