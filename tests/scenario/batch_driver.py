"""A ``Batch`` run in a fresh process, for ``tests/scenario/test_batch.py``; prints JSON.

A test process may hold other threads (a served world's, an executor's), and there ``Batch``
rightly plays in the process itself (``commands.forks.can_fork``). Run here, in a process of
one thread, it forks: the tests see the workers' process ids and assert that they did.

    python tests/scenario/batch_driver.py '{"paths": [...], "play": "slow_first", "jobs": 3}'
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from clearing_sim.scenario.batch import Batch
from clearing_sim.scenario.model import Scenario


def slow_first(scenario: Scenario, count: int) -> list[Any]:
    if scenario.name == "s00":
        time.sleep(0.3)  # the first file finishes last
    return [scenario.name, count, os.getpid()]


def never(scenario: Scenario, count: int) -> None:
    raise AssertionError("a batch with a bad file must play nothing")


def fails(scenario: Scenario, count: int) -> None:
    raise OSError(28, "No space left on device", f"/full/{scenario.name}.jsonl")


PLAYS = {"slow_first": slow_first, "never": never, "fails": fails}


def main() -> None:
    request = json.loads(sys.argv[1])
    answer: dict[str, Any] = {"parent": os.getpid()}
    with Batch(request["paths"], PLAYS[request["play"]], keyword=request.get("keyword"),
               jobs=request["jobs"]) as batch:
        errors = batch.load()
        answer["errors"] = [[type(error).__name__, error.path] for error in errors]
        if not errors:
            try:
                answer["answers"] = list(batch.results())
            except OSError as error:
                answer["raised"] = [type(error).__name__, error.filename,
                                    type(error.__cause__).__name__]
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
