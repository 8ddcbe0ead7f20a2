"""A run told on its time axis, read from the event log: one transaction's timeline
(``timeline``), the webhook attempts as sent and answered (``delivery_log``, paged through
the index ``delivery_index`` keeps as the log grows), a transaction's story as one JSON
document (``story``), the self-contained HTML pages of scenario runs (``html_report``), and
the console's static files that draw them (``assets``, the files in ``console/``).

Public modules: ``timeline``, ``delivery_log``, ``delivery_index``, ``story``,
``html_report``, ``assets``.

Below the doors: the shim serves the console and the stories (``clearing_sim.http``), the
command line writes timelines and report pages (``clearing_sim.cli``); this package imports
neither. Importing it imports none of its modules.
"""
