"""The domain's refusal: a request or value that breaks a rule, with every problem named.

Public names: ``Problem``, ``DomainError``, ``InvalidRequest``, ``NotAllowed``.

    DomainError                 a refusal of the domain rules; changes nothing
    ├── InvalidRequest          the input is malformed or breaks a validation rule (→ 400)
    └── NotAllowed              the input is valid but the state forbids it (→ 409)

The API layer maps these to its envelopes and status codes in exactly one place. A business
outcome (an issuer rejection, a parked transaction) is not an error: it is data in the log.
"""

from __future__ import annotations

from attrs import frozen

__all__ = ["DomainError", "InvalidRequest", "NotAllowed", "Problem"]


@frozen
class Problem:
    """One thing wrong: the field path (``param``), a stable ``code`` and a human message."""

    param: str | None
    code: str
    message: str


class DomainError(Exception):
    """A refusal carrying one or more problems, first the one that decides the answer."""

    def __init__(self, *problems: Problem) -> None:
        assert problems, "a refusal names at least one problem"
        super().__init__("; ".join(p.message for p in problems))
        self.problems: tuple[Problem, ...] = problems

    @classmethod
    def one(cls, param: str | None, code: str, message: str) -> DomainError:
        return cls(Problem(param, code, message))


class InvalidRequest(DomainError):
    """Malformed or rule-breaking input."""


class NotAllowed(DomainError):
    """Valid input the current state does not allow (cancel after settlement, …)."""
