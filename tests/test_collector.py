"""``commands.collector`` (issue 30 §3): the collector set for many short-lived worlds while a
command runs, and given back as it was when the command ends, so a suite that invokes the
command in-process keeps its own collector."""

from __future__ import annotations

import gc

from click.testing import CliRunner

from clearing_sim.cli import main
from clearing_sim.commands.collector import YOUNG_THRESHOLD, for_many_short_worlds


def test_inside_the_young_threshold_is_raised_and_what_exists_is_frozen() -> None:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with for_many_short_worlds() as settled:
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        frozen = gc.get_freeze_count()
        assert frozen > 0
        made = [[] for _ in range(1000)]  # noqa: F841 - objects made after the first freeze
        settled()
        assert gc.get_freeze_count() >= frozen + 1000
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_command_run_in_process_gives_the_collector_back_as_it_was() -> None:
    """A leftover freeze would keep a suite's garbage cycles (an abandoned TLS connection that
    ``GuardedServer.failed_handshakes`` finds when it is collected) out of every collection."""
    before = gc.get_threshold()
    for args in (["run", "scenarios/silence-parks-exactly-at-sla.yaml"],
                 ["validate", "scenarios/"],
                 ["timeline", "scenarios/webhook-retry-schedule.yaml", "--transaction", "tx"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0, args
