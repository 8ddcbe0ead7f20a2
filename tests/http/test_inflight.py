"""Real deliveries on the wire (``http/inflight.py``) and their learn instant
(``domain.delivery.real_outcome_learned_at_ms``): issue 31 §2."""

from __future__ import annotations

import pytest

from clearing_sim.domain.delivery import (
    ATTEMPTS_MAX,
    DELIVERY_TIMEOUT_MS,
    RETRY_DELAYS_MS,
    real_outcome_learned_at_ms,
)
from clearing_sim.http.inflight import InFlight, RealOutcome
from clearing_sim.sim.receivers import Arrival, WebhookRequest


@pytest.mark.parametrize("attempt", range(1, ATTEMPTS_MAX))
def test_an_outcome_is_learned_when_the_next_attempt_would_go_out(attempt: int) -> None:
    """Spec, Webhooks: the retry schedule (1 min, 5 min, 30 min, 2 h, 12 h, 24 h after the
    previous attempt): the world first needs attempt n's outcome when attempt n + 1 is due."""
    assert real_outcome_learned_at_ms(5_000, attempt, 5_080) == 5_000 + RETRY_DELAYS_MS[
        attempt - 1]


def test_the_last_attempt_is_learned_at_the_end_of_its_timeout() -> None:
    assert real_outcome_learned_at_ms(5_000, ATTEMPTS_MAX, 5_080) == 5_000 + DELIVERY_TIMEOUT_MS


def test_a_copy_arriving_after_that_instant_is_learned_a_timeout_after_it_arrives() -> None:
    """A simulated latency beyond the timeout: the learn instant is never at or before the
    arrival (the arrival's process waits for it)."""
    assert real_outcome_learned_at_ms(0, ATTEMPTS_MAX, 12_000) == 22_000
    assert real_outcome_learned_at_ms(0, 1, 60_000) == 70_000


def _arrival(n: int) -> Arrival:
    return Arrival(WebhookRequest("http://r.example/h", (), b"{}"), n, f"evt_{n}", "wh_1",
                   1, 0, 200, 0)


def test_missing_by_names_the_unanswered_requests_due_by_an_instant() -> None:
    flight = InFlight()
    early, late = flight.add(_arrival(0), 60_000), flight.add(_arrival(1), 120_000)
    assert [item.seq for item in flight.take_outbox()] == [0, 1]
    assert flight.missing_by(59_999) == []
    assert flight.missing_by(60_000) == [early]
    assert flight.missing_by(120_000) == [early, late]
    early.outcome = RealOutcome(503)
    assert flight.missing_by(120_000) == [late]  # its answer is in: the clock need not wait
    assert flight.learn(early) == RealOutcome(503)
    assert flight.take_learned() == [early] and flight.take_learned() == []
    assert flight.missing_by(200_000) == [late]


def test_replay_feeds_outcomes_by_order_of_sending_and_refuses_the_impossible() -> None:
    flight = InFlight()
    item = flight.add(_arrival(0), 60_000)
    flight.take_outbox()
    assert flight.feed(1, RealOutcome(200)) == ("an outcome for real delivery 1, which was "
                                                "never sent")
    assert flight.feed(0, RealOutcome(200)) is None and item.outcome == RealOutcome(200)
    flight.learn(item)
    assert flight.feed(0, RealOutcome(200)) == ("a second outcome for real delivery 0, "
                                                "already learned")


def test_requests_without_an_outcome_go_back_to_the_outbox_after_a_replay() -> None:
    flight = InFlight()
    answered, unanswered = flight.add(_arrival(0), 60_000), flight.add(_arrival(1), 60_000)
    flight.take_outbox()
    answered.outcome = RealOutcome(200)
    assert flight.requeue() == 1 and flight.outbox == [unanswered]
