"""clearing_sim: a deterministic discrete-event simulator of a stablecoin clearing service.

Layers (imports point down only): ``domain`` (values and pure rules) → ``sim`` (the SimPy
world) → ``service`` (the public API) → readers of a world (``webhooks``, ``testing``,
``stories.timeline``...) → ``serving`` and ``tls`` → the kits (``conformance``, then
``gateway``) → ``scenario`` → ``analysis`` and ``stories`` → ``http`` (the shim) → the doors
(``cli``, the pytest plugin, ``conformance.cli``). Below them all, importing nothing of the
package: ``commands`` (what the command lines share) and ``untrusted`` (bounded reads of
what comes from outside). ``tests/test_layers.py`` holds this order as data and fails on an
upward import or a circle of modules. Public modules for integrators: ``webhooks`` (sign,
verify, reference receivers) and ``testing`` (a served world for a test suite).
"""

__version__ = "0.1.0"
