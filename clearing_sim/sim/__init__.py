"""The SimPy world: ledgers, the RTGS adapter, issuer gateways, sagas and the event log.

``World`` (``sim.world``) builds and wires every component; each component depends only on
the narrow protocol of what it uses (``sim.seams``), so no component imports ``World``.
"""

from clearing_sim.sim.world import Environment, World, WorldConfig

__all__ = ["Environment", "World", "WorldConfig"]
