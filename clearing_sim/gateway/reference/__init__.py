"""The reference issuer gateway: the issuer side of the contract as a real HTTP server.

Public names: ``DEFECTS``, ``Defect``, ``GatewaySettings``, ``ReferenceIssuer``, ``create_app``.
"""

from clearing_sim.gateway.reference.app import create_app
from clearing_sim.gateway.reference.defects import DEFECTS, Defect
from clearing_sim.gateway.reference.state import GatewaySettings, ReferenceIssuer

__all__ = ["DEFECTS", "Defect", "GatewaySettings", "ReferenceIssuer", "create_app"]
