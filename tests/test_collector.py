"""``commands.collector`` (issue 30 §3): no collections while a command imports the engine,
then what the imports made is frozen out of later ones; all given back when the command ends,
so a suite that invokes the command in-process keeps its own collector."""

from __future__ import annotations

import gc

from click.testing import CliRunner

from clearing_sim.cli import main
from clearing_sim.commands.collector import imports_frozen


def test_off_while_importing_then_on_with_the_imports_frozen() -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with imports_frozen() as imported:
        assert not gc.isenabled()
        made = [[] for _ in range(1000)]  # what an import makes
        imported()
        assert gc.isenabled() and gc.get_freeze_count() >= len(made)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_command_run_in_process_gives_the_collector_back_as_it_was() -> None:
    """A leftover freeze would keep a suite's garbage cycles (an abandoned TLS connection that
    ``GuardedServer.failed_handshakes`` finds when it is collected) out of every collection."""
    before = gc.get_threshold()
    for args in (["run", "scenarios/silence-parks-exactly-at-sla.yaml"],
                 ["validate", "scenarios/"],
                 ["timeline", "scenarios/webhook-retry-schedule.yaml", "--transaction", "tx"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert gc.isenabled() and gc.get_threshold() == before, args
        assert gc.get_freeze_count() == 0, args
