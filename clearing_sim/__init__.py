"""clearing_sim: a deterministic discrete-event simulator of a stablecoin clearing service.

Layers (imports point down only): ``domain`` (values and pure rules) → ``sim`` (the SimPy
world) → ``service`` (the public API) → readers of a world (``timeline``, ``delivery_log``,
``webhooks``...) → ``serving`` and ``tls`` → the kits (``conformance``, then ``gateway``) →
``scenario`` → ``analysis`` and ``story`` → ``http`` (the shim) → the doors (``cli``, the
pytest plugin, ``conformance.cli``). The loose top-level helpers (``extras``, ``stopping``,
``terminal``...) import nothing of the package. ``tests/test_layers.py`` holds this order as
data and fails on an upward import or a circle of modules.
"""

__version__ = "0.1.0"
