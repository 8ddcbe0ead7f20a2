"""Outgoing webhook rules as data: the event body, the retry schedule, success, the disable rule.

Public names: ``ATTEMPTS_MAX``, ``DELIVERY_TIMEOUT_MS``, ``DISABLE_AFTER_MS``,
``RETRY_DELAYS_MS``, ``RETRY_OFFSETS_MS``, ``WebhookEvent``, ``disable_due``, ``is_success``,
``real_outcome_learned_at_ms``.

Spec, Events: a delivery is an HTTPS POST of a small JSON body (``id``, ``type``,
``createdAt``, ``data``) signed with the subscription's secret. A non-2xx answer is retried
immediately, then 1 min, 5 min, 30 min, 2 h, 12 h and 24 h after the previous failed attempt:
seven attempts, the last 138 960 s (38 h 36 min) after the first; then the delivery is failed.
Success is a 2xx answer received within ``DELIVERY_TIMEOUT_MS`` of sending (docs/semantics.md,
"The webhook channel"). A subscription whose deliveries have all failed for 72 hours is
disabled: ``disable_due`` is that rule on the times the service learns each outcome.
"""

from __future__ import annotations

from itertools import accumulate

from attrs import frozen

from clearing_sim.domain.jsontext import ordered_encoder
from clearing_sim.domain.lifecycle import EventType

__all__ = ["ATTEMPTS_MAX", "DELIVERY_TIMEOUT_MS", "DISABLE_AFTER_MS", "RETRY_DELAYS_MS",
           "RETRY_OFFSETS_MS", "WebhookEvent", "disable_due", "is_success",
           "real_outcome_learned_at_ms"]

#: The wait before attempts 2 … 7, each counted from the start of the previous attempt.
RETRY_DELAYS_MS: tuple[int, ...] = (60_000, 300_000, 1_800_000, 7_200_000, 43_200_000,
                                    86_400_000)
ATTEMPTS_MAX = 1 + len(RETRY_DELAYS_MS)
#: Attempt n starts ``RETRY_OFFSETS_MS[n - 1]`` after attempt 1: 0, 60, 360, 2160, 9360,
#: 52560 and 138960 seconds.
RETRY_OFFSETS_MS: tuple[int, ...] = (0, *accumulate(RETRY_DELAYS_MS))
#: A response later than this (or none) is a failed attempt; 10 s, well under the 60-s retry.
DELIVERY_TIMEOUT_MS = 10_000
#: "72 hours of continuous failure" (Limits, Webhook auto-disable).
DISABLE_AFTER_MS = 72 * 3_600_000
#: The body's encoding: ``json.dumps(payload, ensure_ascii=False, separators=(",", ":"))``,
#: UTF-8 (its values are strings and booleans: msgspec's bytes are the same)
_body_json = ordered_encoder()


@frozen
class WebhookEvent:
    """One public lifecycle change, as every subscriber receives it (one ``evt_`` id)."""

    id: str
    type: EventType
    created_at_ms: int
    created_at: str  # ISO 8601 UTC, rendered from the world's epoch
    transaction_id: str
    payment_reference: str
    lifecycle_status: str
    terminal: bool
    parked: bool

    def body(self) -> bytes:
        """The raw request body: compact JSON, the spec's field order, UTF-8."""
        payload = {
            "id": self.id,
            "type": self.type.value,
            "createdAt": self.created_at,
            "data": {
                "transactionId": self.transaction_id,
                "paymentReference": self.payment_reference,
                "lifecycleStatus": self.lifecycle_status,
                "terminal": self.terminal,
                "parked": self.parked,
            },
        }
        return _body_json(payload)


def is_success(status: int | None) -> bool:
    """A 2xx status; ``None`` (no answer in time) is a failure."""
    return status is not None and 200 <= status < 300


def disable_due(failing_since_ms: int | None, failed_at_ms: int) -> bool:
    """Whether a failure learned at ``failed_at_ms`` disables the subscription.

    The streak starts at the first failure learned after the last success (or after the
    subscription's creation); the first failure learned 72 hours or more after that start
    disables it. Attempts must span the 72 hours: a failure alone, or one event's 38.6-hour
    schedule alone, never disables."""
    return failing_since_ms is not None and failed_at_ms - failing_since_ms >= DISABLE_AFTER_MS


def real_outcome_learned_at_ms(sent_at_ms: int, attempt: int, arrived_at_ms: int) -> int:
    """When the service learns the outcome of an attempt a real receiver answers (served
    with ``--deliver-webhooks``; docs/semantics.md, "Real deliveries"): the instant the world
    first needs it, whatever the wall time of the answer. That is the instant the next
    attempt would go out (``RETRY_DELAYS_MS`` after this one was sent), and for the last
    attempt the end of its ``DELIVERY_TIMEOUT_MS``. A copy that arrives at or after that
    instant (a simulated latency beyond the timeout) is learned a timeout after it arrives."""
    wait_ms = RETRY_DELAYS_MS[attempt - 1] if attempt < ATTEMPTS_MAX else DELIVERY_TIMEOUT_MS
    learned_at_ms = sent_at_ms + wait_ms
    return learned_at_ms if learned_at_ms > arrived_at_ms else arrived_at_ms + DELIVERY_TIMEOUT_MS
