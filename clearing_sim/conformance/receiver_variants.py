"""Variants of the reference receiver: one that acknowledges first and processes afterwards
(it follows the spec), and one per defect that loses events in production (it does not).

Public names: ``DEFECTS``, ``AckFirstReceiver``, ``DefectInfo``, ``ReceiverDefect``,
``defective``.

``clearing-sim receiver serve --ack-first`` serves ``AckFirstReceiver``; ``--defect NAME``
serves ``defective(NAME, ...)`` (``--defect list`` prints ``DEFECTS``). Each defect breaks
one rule of the spec's Events section and passed the receiver kit before issue 26; the kit
fails each now, on the check named in its row, and passes ``AckFirstReceiver``
(tests/conformance/test_receiver_variants.py holds each to its row; docs/conformance.md has
the table):

- ``verifies-reserialised-json``: verifies the HMAC over ``json.dumps(json.loads(body),
  separators=(",", ":"))`` (Python's default ``ensure_ascii``) instead of the raw bytes.
  The service's bodies are UTF-8 with non-ASCII sent raw, so every event whose
  ``paymentReference`` holds a non-ASCII character is refused, retried for about 38 hours,
  then failed.
- ``records-id-before-verifying``: remembers ``Service-Webhook-Id`` before it checks the
  signature. One refused attempt carrying a real id (a clock skew, a forgery) makes the
  valid retry a duplicate: acknowledged, never fetched.
- ``records-id-before-fetch``: remembers the id before its fetch succeeds. The API answers
  503 once; the service's retry is taken for a duplicate; the view is never updated.
"""

from __future__ import annotations

import contextlib
import enum
import json
import queue
import threading
import time

from attrs import frozen

from clearing_sim.domain.jsontext import parse_untrusted
from clearing_sim.webhooks import (
    Clock,
    Headers,
    ReferenceReceiver,
    TransactionSource,
    header,
    transaction_id,
)

__all__ = ["DEFECTS", "AckFirstReceiver", "DefectInfo", "ReceiverDefect", "defective"]

#: Waits before each retry of a failed fetch, after acknowledging: about 3 s in all.
FETCH_RETRY_DELAYS_S = (0.1, 0.2, 0.4, 0.8, 1.6)


class AckFirstReceiver(ReferenceReceiver):
    """Verifies and deduplicates as the reference receiver does, answers 200 at once, and
    fetches the transaction afterwards on a worker thread (``delay_s`` after the answer),
    changing its view only from what it fetched. Guarantee 3 asks for the fetch "before
    changing its own state", not before the answer; once it has answered 2xx the service
    will not redeliver, so a failed fetch is its own to retry (``FETCH_RETRY_DELAYS_S``)."""

    def __init__(self, api: TransactionSource, api_key: str, signing_secret: str,
                 clock: Clock, delay_s: float = 0.05) -> None:
        super().__init__(api, api_key, signing_secret, clock)
        self.delay_s = delay_s
        self._jobs: queue.Queue[str | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work, daemon=True,
                                        name="ack-first-receiver")
        self._worker.start()

    def process(self, webhook_id: str, transaction_id: str) -> int:
        self.seen.add(webhook_id)
        self.accepted += 1
        self._jobs.put(transaction_id)
        return 200

    def _work(self) -> None:
        while (tx_id := self._jobs.get()) is not None:
            time.sleep(self.delay_s)
            for delay_s in (0.0, *FETCH_RETRY_DELAYS_S):
                time.sleep(delay_s)
                view = self.fetch(tx_id)
                if view is not None:
                    self.views[tx_id] = view
                    break

    def close(self) -> None:
        """Stop the worker once the jobs queued so far are done."""
        self._jobs.put(None)


class ReceiverDefect(enum.StrEnum):
    VERIFIES_RESERIALISED_JSON = "verifies-reserialised-json"
    RECORDS_ID_BEFORE_VERIFYING = "records-id-before-verifying"
    RECORDS_ID_BEFORE_FETCH = "records-id-before-fetch"


@frozen
class DefectInfo:
    does: str
    breaks: str  # the spec's rule
    caught_by: str  # the kit's check named after it


DEFECTS: dict[ReceiverDefect, DefectInfo] = {
    ReceiverDefect.VERIFIES_RESERIALISED_JSON: DefectInfo(
        "verifies the HMAC over the body re-serialised by json.dumps, not the raw bytes",
        "Events, Signature: HMAC-SHA256 over <t>.<raw request body>", "raw-body-signature"),
    ReceiverDefect.RECORDS_ID_BEFORE_VERIFYING: DefectInfo(
        "remembers Service-Webhook-Id before it verifies the signature",
        "Events, Signature and guarantee 1: a refused delivery is not processed, so its "
        "retry is not a duplicate", "refusal-not-remembered"),
    ReceiverDefect.RECORDS_ID_BEFORE_FETCH: DefectInfo(
        "remembers Service-Webhook-Id before its fetch of the transaction succeeds",
        "Events, guarantee 3: fetch the transaction before changing state (the id is state)",
        "fetch-failure-retried"),
}


class _Reserialising(ReferenceReceiver):
    def _verified(self, headers: Headers, body: bytes) -> bool:
        with contextlib.suppress(ValueError):  # the defect: it verifies what it rebuilt
            body = json.dumps(parse_untrusted(body), separators=(",", ":")).encode()
        return super()._verified(headers, body)


class _IdBeforeVerifying(ReferenceReceiver):
    def handle(self, headers: Headers, body: bytes) -> int:
        webhook_id = header(headers, "Service-Webhook-Id")
        if webhook_id is None:
            return 400
        if webhook_id in self.seen:
            self.duplicates += 1
            return 200
        self.seen.add(webhook_id)  # the defect: remembered before it is verified
        if not self._verified(headers, body):
            return 401
        tx_id = transaction_id(body)
        if tx_id is None:
            return 400
        status = self.process(webhook_id, tx_id)
        if status != 200:  # careful about a failed fetch, at least: its retry is processed
            self.seen.discard(webhook_id)
        return status


class _IdBeforeFetch(ReferenceReceiver):
    def process(self, webhook_id: str, transaction_id: str) -> int:
        self.seen.add(webhook_id)  # the defect: remembered before its fetch succeeded
        return super().process(webhook_id, transaction_id)


_CLASSES: dict[ReceiverDefect, type[ReferenceReceiver]] = {
    ReceiverDefect.VERIFIES_RESERIALISED_JSON: _Reserialising,
    ReceiverDefect.RECORDS_ID_BEFORE_VERIFYING: _IdBeforeVerifying,
    ReceiverDefect.RECORDS_ID_BEFORE_FETCH: _IdBeforeFetch,
}


def defective(defect: ReceiverDefect, api: TransactionSource, api_key: str,
              signing_secret: str, clock: Clock) -> ReferenceReceiver:
    """The reference receiver with ``defect``: otherwise exactly the reference one."""
    return _CLASSES[defect](api, api_key, signing_secret, clock)
