"""A real ``clearing-sim serve`` process on a free loopback port, started and stopped by a
test: ``clearing_sim.testing.served_world`` (the fixture users get), with the names the HTTP
tests read (``base``, the banner, its participants' keys, the output once stopped)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from clearing_sim.testing import ServedWorld, served_world
from tests.http.conftest import ETHER_POUND_YAML, SETTLED_HOOK_YAML

TOKEN = "served-token-1"

#: A world file: Northbank and Ether Pound (Mode 2, GBPE on evm), one subscription.
WORLD = """\
world: {seed: 5}
members:
  northbank: {name: Northbank, wallets: {GBPE: "1000.00"}}
""" + ETHER_POUND_YAML + SETTLED_HOOK_YAML


class Served:
    """What the HTTP tests read of a served world (``served_world``'s, under the old names)."""

    def __init__(self, world: ServedWorld) -> None:
        self.world = world
        self.process = world.process
        self.base = world.base_url

    @property
    def banner(self) -> list[str]:
        return self.world.stdout.splitlines()

    def api_key(self, key: str) -> str:
        return self.world.api_keys[key]

    def participant_id(self, key: str) -> str:
        return self.world.participant_ids[key]

    @property
    def operator(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKEN}"}

    @property
    def output(self) -> str:
        """Standard output (all of it once the server has stopped)."""
        return self.world.stdout

    @property
    def errors(self) -> str:
        return self.world.stderr


@contextmanager
def served(tmp_path: Path, *args: str, world: str = WORLD) -> Iterator[Served]:
    """Serve ``world`` until the block ends, then Ctrl-C the server and wait for it."""
    path = tmp_path / "world.yaml"
    path.write_text(world, encoding="utf-8")
    with served_world(path, operator_token=TOKEN, args=args) as server:
        yield Served(server)
