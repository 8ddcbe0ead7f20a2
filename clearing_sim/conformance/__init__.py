"""Conformance kits: run a battery of checks against a member's real endpoint over HTTP.

- ``report``: the reporting every kit shares (checks, verdicts, evidence; text, JSON, JUnit
  XML, HTML; exit codes). It knows nothing of receivers or issuers.
- ``cli``: the ``clearing-sim conformance`` group (each kit adds its command: ``receiver``
  here, ``issuer`` from ``gateway.cli``) and ``clearing-sim receiver serve``. It is a door,
  above every kit and the HTTP shim (``tests/test_layers.py`` lists it with the doors).
- The receiver kit: ``forge`` (valid and forged deliveries), ``receiver_stage`` (real
  transactions in a served world, the receiver's fetches seen and timed, one fetch failed on
  purpose), ``receiver_kit`` (the battery), ``receiver_rules`` (its checks' titles and
  rules), ``receiver_battery`` (its I/O and the wait for the receiver), ``receiver_evidence``
  (what counts as a fetch for a delivery, a change of view after a fetch),
  ``receiver_judge`` (the verdicts that wait for the receiver), ``receiver_run`` (serve the
  shim it is handed, then the battery), ``receiver_server`` (the reference and naive receivers as
  HTTP servers), ``receiver_variants`` (the ack-first receiver and the defective ones).
  Docs: docs/conformance.md.

This package sits below ``gateway`` (whose issuer kit writes this package's ``report``),
``scenario`` and ``http``: the receiver kit never imports the shim that serves it, it is
handed one (``receiver_stage.ServedWorld`` and ``SteppedClock``, ``receiver_run.ShimFactory``;
``http.kit_shim`` and ``http.receiver_conformance`` hand theirs in). The kits read the wall
clock (a real endpoint answers in real time; a signature's ``t`` is wall time), which
``domain``, ``sim`` and ``service`` never do.
"""
