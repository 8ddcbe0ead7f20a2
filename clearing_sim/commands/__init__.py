"""What the command lines share: colour on a terminal only, a clean stop on SIGTERM, the
optional extras' refusal, and the demo run.

Public modules: ``terminal``, ``stopping``, ``extras``, ``demo``.

The doors (``clearing_sim.cli``, ``clearing_sim.http.cli``, ``clearing_sim.analysis.cli``)
import these; nothing here imports a door. Importing this package imports none of its
modules, so a command pays only for what it uses.
"""
