"""The domain's refusal (spec, "Errors": structured ``code``; DESIGN: every problem named)."""

from __future__ import annotations

import attrs
import pytest

from clearing_sim.domain.errors import DomainError, InvalidRequest, NotAllowed, Problem


def test_hierarchy() -> None:
    assert issubclass(InvalidRequest, DomainError)
    assert issubclass(NotAllowed, DomainError)
    assert not issubclass(InvalidRequest, NotAllowed)
    assert issubclass(DomainError, Exception)


def test_a_refusal_carries_every_problem_in_order() -> None:
    first = Problem("commitPoint", "required", "commitPoint is required")
    second = Problem("ledger", "invalid_value", "ledger must be one of stellar, evm, solana")
    error = InvalidRequest(first, second)
    assert error.problems == (first, second)
    assert str(error) == "commitPoint is required; ledger must be one of stellar, evm, solana"


def test_one_builds_a_single_problem_of_the_subclass() -> None:
    error = NotAllowed.one(None, "already_settled", "cannot cancel")
    assert type(error) is NotAllowed
    assert error.problems == (Problem(None, "already_settled", "cannot cancel"),)


def test_a_refusal_names_at_least_one_problem() -> None:
    with pytest.raises(AssertionError):
        DomainError()


def test_problem_is_a_frozen_value() -> None:
    problem = Problem("x", "y", "z")
    assert problem == Problem("x", "y", "z")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        problem.code = "other"  # type: ignore[misc]
