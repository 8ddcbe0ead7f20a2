"""The SimPy world: ledgers, the RTGS adapter, issuer gateways, sagas and the event log."""

from clearing_sim.sim.world import Environment, World, WorldConfig

__all__ = ["Environment", "World", "WorldConfig"]
