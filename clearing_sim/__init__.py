"""clearing_sim: a deterministic discrete-event simulator of a stablecoin clearing service.

Layers (imports point down only): ``domain`` (values and pure rules) → ``sim`` (the SimPy
world) → ``service`` (the public API) → the doors (CLI, HTTP shim, scenario files).
"""

__version__ = "0.1.0"
