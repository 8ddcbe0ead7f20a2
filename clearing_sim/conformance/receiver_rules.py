"""The receiver kit's checks: their ids in order, titles and the spec rules they rest on.

Public names: ``CHECKS``, ``TITLES``, ``check``, ``pass_if``.

``check(check_id, verdict, started, reason, notes, exchanges)`` builds the report's ``Check``
with the title and rule of ``TITLES``: a failure's reason names the field or header at
fault, the rule is printed beside it (``report.text_lines``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from clearing_sim.conformance.report import Check, Evidence, Exchange, Verdict

__all__ = ["CHECKS", "TITLES", "check", "pass_if"]

_G1 = "Events, guarantee 1: at least once; deduplicate on Service-Webhook-Id, not on type " \
      "plus transactionId (a transaction can re-enter in_flight)"
_G2 = "Events, guarantee 2: arrival order is not ordering; drive state from the resource"
_G3 = "Events, guarantee 3: fetch GET /api/v1/transactions/{id} after each delivery before " \
      "changing state"
_SIG = "Events, Signature: HMAC-SHA256 over <t>.<raw request body>, compared in constant time"
_WINDOW = "Events, Signature: reject when |now - t| exceeds 300 seconds (replay window)"
_G4 = "Events, guarantee 4: a non-2xx answer is retried"
TITLES: dict[str, tuple[str, str]] = {
    "valid-delivery": ("a validly signed delivery is answered 2xx within 10 s",
                       f"Events, Delivery; {_G4}"),
    "raw-body-signature": ("a delivery whose bytes do not survive a JSON round trip (raw "
                           "UTF-8, & < >) is verified over its raw bytes", _SIG),
    "signature-wrong": ("a wrong v1 is refused", _SIG),
    "secret-wrong": ("a signature made with another secret is refused", _SIG),
    "body-tampered": ("a body changed after signing is refused", _SIG),
    "signature-missing": ("a delivery without Service-Signature is refused", _SIG),
    "signature-malformed": ("malformed Service-Signature values are refused", _SIG),
    "timestamp-stale": ("a t more than 300 s old is refused", _WINDOW),
    "timestamp-future": ("a t more than 300 s ahead is refused", _WINDOW),
    "duplicate-acknowledged": ("a duplicate of a delivered event is answered 2xx", _G1),
    "refusal-not-remembered": ("refused attempts carrying a real event id (stale t, wrong v1) "
                               "do not make its valid delivery a duplicate",
                               f"{_SIG}; {_G1}: a refused delivery was not processed"),
    "fetch-failure-retried": ("an event whose fetch failed (503 once) is still processed",
                              f"{_G3}; {_G4}: a 503 is retried"),
    "reentry-not-duplicate": ("a transaction re-entering in_flight after an operator fix is "
                              "not taken for a duplicate", _G1),
    "reordered-pair": ("a reordered pair (settled, then the older in_flight) ends settled",
                       _G2),
    "fetch-after-delivery": ("each new event is followed by a GET of its transaction "
                             "(within the time limit)", _G3),
    "state-after-fetch": ("the receiver's view changes only after a GET of the transaction "
                          "(probe)", _G3),
    "view-matches-service": ("the receiver's view equals the service's after duplicates, a "
                             "loss and reordering (probe)", f"{_G2}; {_G3}"),
}
CHECKS = tuple(TITLES)


def pass_if(ok: bool) -> Verdict:
    return Verdict.PASS if ok else Verdict.FAIL


def check(check_id: str, verdict: Verdict, started: float, reason: str = "",
          notes: Iterable[str] = (), exchanges: Iterable[Exchange] = ()) -> Check:
    """``started``: ``time.perf_counter()`` when the check began."""
    title, rule = TITLES[check_id]
    return Check(check_id, title, rule, verdict, Evidence(tuple(exchanges), tuple(notes)),
                 reason, (time.perf_counter() - started) * 1000)
