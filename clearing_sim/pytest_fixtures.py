"""Deprecated: moved to ``clearing_sim.testing.fixtures`` (issue 32); this name stays for
one release (CHANGELOG.md).

Public names: those of ``clearing_sim.testing.fixtures``.
"""

from __future__ import annotations

import warnings

from clearing_sim.testing.fixtures import *  # noqa: F403
from clearing_sim.testing.fixtures import __all__  # noqa: F401

warnings.warn("clearing_sim.pytest_fixtures moved to clearing_sim.testing.fixtures; the old "
              "name goes in the next release", DeprecationWarning, stacklevel=2)
