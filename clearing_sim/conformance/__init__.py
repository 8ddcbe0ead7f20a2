"""Conformance kits: run a battery of checks against a member's real endpoint over HTTP.

- ``report``: the reporting every kit shares (checks, verdicts, evidence; text, JSON, JUnit
  XML, HTML; exit codes). It knows nothing of receivers or issuers.
- ``cli``: the ``clearing-sim conformance`` group (each kit adds its command) and
  ``clearing-sim receiver serve``.
- The receiver kit: ``forge`` (valid and forged deliveries), ``receiver_stage`` (real
  transactions in a served world, the receiver's fetches seen and timed, one fetch failed on
  purpose), ``receiver_kit`` (the battery), ``receiver_rules`` (its checks' titles and
  rules), ``receiver_battery`` (its I/O and the wait for the receiver), ``receiver_evidence``
  (what counts as a fetch for a delivery, a change of view after a fetch),
  ``receiver_judge`` (the verdicts that wait for the receiver), ``receiver_run`` (the kit's
  own shim, then the battery), ``receiver_server`` (the reference and naive receivers as
  HTTP servers), ``receiver_variants`` (the ack-first receiver and the defective ones).
  Docs: docs/conformance.md.

This package is an adapter, beside ``http`` and ``scenario``: the kits read the wall clock (a
real endpoint answers in real time; a signature's ``t`` is wall time), which ``domain``,
``sim`` and ``service`` never do.
"""
