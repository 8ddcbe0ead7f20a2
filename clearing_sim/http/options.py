"""What ``clearing-sim serve`` was asked for, as one value.

Public names: ``ClockMode``, ``ServeOptions``.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from attrs import field, frozen, validators

from clearing_sim.sim.world import Environment

__all__ = ["ClockMode", "ServeOptions"]


class ClockMode(StrEnum):
    MANUAL = "manual"  # virtual time moves only on POST /sim/v1/clock/advance
    REALTIME = "realtime"  # virtual time follows the wall clock times ``speed``


@frozen
class ServeOptions:
    """The served simulation's settings (the command line's options, checked)."""

    operator_token: str = field(validator=validators.min_len(1))
    seed: int | None = None  # None: the world file's seed, or 0
    environment: Environment | None = None  # None: the world file's, or sandbox
    clock: ClockMode = ClockMode.MANUAL
    speed: float = field(default=1.0, validator=validators.gt(0.0))
    deliver_webhooks: bool = False
    allow_private_webhook_urls: bool = False
    #: a PEM CA bundle https webhook receivers may chain to, besides the system's roots
    webhook_ca: Path | None = None
    #: key material from the seed alone, not sealed with the operator token: only for a
    #: short-lived loopback shim whose keys are published anyway (the receiver kit's)
    seed_only_keys: bool = False
    #: keep the world's history (log records, finished transactions) in an SQLite file
    #: (``clearing_sim.http.history``) instead of memory: ``clearing-sim serve`` does
    history_on_disk: bool = False
    #: where the history files are made (None: the system's temporary directory)
    history_dir: Path | None = None
