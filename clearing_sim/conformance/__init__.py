"""Conformance kits: run a battery of checks against a member's real endpoint over HTTP.

``report`` is the shared reporting (checks, verdicts, evidence, text/JSON/JUnit/HTML, exit
codes) that every kit uses. This package is an adapter, beside ``http`` and ``scenario``: the
kits measure wall time (a real endpoint answers in real time), which ``domain``, ``sim`` and
``service`` never do.
"""
