"""Webhook deliveries as the receiver kit sends them: one valid, and each way to be invalid.

Public names: ``SKEW_S``, ``WRONG_SECRET``, ``Delivery``, ``forged``, ``fresh``, ``valid``.

A ``Delivery`` is the raw body and the headers of one POST (``Content-Type``,
``Service-Webhook-Id`` = the event id, ``Service-Signature``), built from a
``WebhookEvent`` exactly as the service's channel builds them (spec, Events: Delivery,
Headers, Signature). ``valid`` signs at ``t``; ``forged(kind, ...)`` gives the deliveries of
one refusal check, each under a fresh event id (``fresh``) so that a receiver that looks its
id up before verifying is not excused by its dedup (``real_id=True``: under the event's own
id, for the check that such a receiver fails):

- ``signature-wrong``: ``v1`` of the right length and alphabet, not the HMAC;
- ``secret-wrong``: signed with ``WRONG_SECRET``;
- ``body-tampered``: signed, then the body's ``lifecycleStatus`` changed;
- ``signature-missing``: no ``Service-Signature``;
- ``signature-malformed``: no ``t``, no ``v1``, a ``t`` that is not a number, a short
  ``v1``, no ``=`` at all;
- ``timestamp-stale`` / ``timestamp-future``: correctly signed with ``t`` = now ∓
  (300 + ``SKEW_S``) seconds: outside the replay window even for a receiver whose clock is
  ``SKEW_S`` off ours (docs/semantics.md).
"""

from __future__ import annotations

import uuid

from attrs import evolve, frozen

from clearing_sim.domain.delivery import WebhookEvent
from clearing_sim.domain.signing import REPLAY_WINDOW_S, sign, signature_header

__all__ = ["FORGED_KINDS", "SKEW_S", "WRONG_SECRET", "Delivery", "forged", "fresh", "valid"]

SKEW_S = 60
WRONG_SECRET = "whsec_conformance_kit_wrong_secret_0000"
USER_AGENT = "clearing-sim-conformance/1"
FORGED_KINDS = ("signature-wrong", "secret-wrong", "body-tampered", "signature-missing",
                "signature-malformed", "timestamp-stale", "timestamp-future")

_MALFORMED = ("v1={v1}", "t={t}", "t=now,v1={v1}", "t={t},v1={half}", "{t}{v1}")


@frozen
class Delivery:
    event_id: str
    body: bytes
    headers: tuple[tuple[str, str], ...]

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


def fresh(event: WebhookEvent) -> WebhookEvent:
    """The same change under a new ``evt_`` id (a new event, as far as dedup goes)."""
    return evolve(event, id=f"evt_{uuid.uuid4().hex}")


def _delivery(event_id: str, body: bytes, signature: str | None) -> Delivery:
    headers = [("Content-Type", "application/json"), ("User-Agent", USER_AGENT),
               ("Service-Webhook-Id", event_id)]
    if signature is not None:
        headers.append(("Service-Signature", signature))
    return Delivery(event_id, body, tuple(headers))


def valid(event: WebhookEvent, secret: str, t: int) -> Delivery:
    body = event.body()
    return _delivery(event.id, body, signature_header(secret, t, body))


def _tampered(body: bytes) -> bytes:
    for old, new in ((b'"lifecycleStatus":"in-flight"', b'"lifecycleStatus":"settled"'),
                     (b'"lifecycleStatus":"', b'"lifecycleStatus":"x')):
        if old in body:
            return body.replace(old, new, 1)
    return body + b" "


def forged(kind: str, event: WebhookEvent, secret: str, t: int, *,
           real_id: bool = False) -> list[Delivery]:
    """The deliveries of one refusal check (``FORGED_KINDS``), each under a fresh id, or
    under the event's own id with ``real_id`` (a refused attempt of a real event: a clock
    skew, a forgery, which must not make the event's valid delivery a duplicate)."""
    event = event if real_id else fresh(event)
    body = event.body()
    v1 = sign(secret, t, body)
    if kind == "signature-wrong":
        wrong = format(int(v1, 16) ^ 1, "064x")
        return [_delivery(event.id, body, f"t={t},v1={wrong}")]
    if kind == "secret-wrong":
        return [_delivery(event.id, body, signature_header(WRONG_SECRET, t, body))]
    if kind == "body-tampered":
        return [_delivery(event.id, _tampered(body), f"t={t},v1={v1}")]
    if kind == "signature-missing":
        return [_delivery(event.id, body, None)]
    if kind == "signature-malformed":
        out = []
        for template in _MALFORMED:
            each = fresh(event)
            each_body = each.body()
            each_v1 = sign(secret, t, each_body)
            out.append(_delivery(each.id, each_body,
                                 template.format(t=t, v1=each_v1, half=each_v1[:32])))
        return out
    offset = REPLAY_WINDOW_S + SKEW_S
    if kind in ("timestamp-stale", "timestamp-future"):
        at = t - offset if kind == "timestamp-stale" else t + offset
        return [_delivery(event.id, body, signature_header(secret, at, body))]
    raise ValueError(f"no such forgery {kind!r}; one of {', '.join(FORGED_KINDS)}")
