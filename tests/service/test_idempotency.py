"""Idempotency entries past their use are dropped (issue 30 §1): a served world keeps a day
of them, not its whole history; an entry still in its 24 hours replays as before."""

from __future__ import annotations

from clearing_sim.service.idempotency import RETENTION_MS, IdempotencyStore
from clearing_sim.service.messages import Request, Response


def _request(n: int) -> Request:
    return Request("POST", "/api/v1/transactions", body=f'{{"n": {n}}}'.encode())


def _answer(n: int) -> Response:
    return Response(201, (("Content-Type", "application/json"),), f'{{"id": {n}}}'.encode())


def test_an_entry_past_its_24_hours_is_dropped_at_the_next_store() -> None:
    store = IdempotencyStore()
    store.store("m", "a", _request(1), _answer(1), 0)
    store.store("m", "b", _request(2), _answer(2), RETENTION_MS - 1)
    assert len(store) == 2  # a is 1 ms short of its day: kept
    assert store.replay("m", "a", _request(1), RETENTION_MS - 1) == _answer(1)
    store.store("m", "c", _request(3), _answer(3), RETENTION_MS)
    assert len(store) == 2  # a has had its day (never replayed again): gone
    assert store.replay("m", "a", _request(1), RETENTION_MS) is None
    assert store.replay("m", "b", _request(2), RETENTION_MS) == _answer(2)


def test_a_key_used_again_after_its_day_is_kept_a_new_day() -> None:
    """A reused key moves to the end: it is not dropped with the day-old entries before it."""
    store = IdempotencyStore()
    store.store("m", "a", _request(1), _answer(1), 0)
    store.store("m", "b", _request(2), _answer(2), 10)
    store.store("m", "a", _request(4), _answer(4), RETENTION_MS + 5)  # a expired, reused
    assert len(store) == 2  # b (stored at 10) still has 5 ms
    store.store("m", "c", _request(3), _answer(3), RETENTION_MS + 10)
    assert len(store) == 2  # b gone; the new a stays
    assert store.replay("m", "a", _request(4), RETENTION_MS + 10) == _answer(4)
