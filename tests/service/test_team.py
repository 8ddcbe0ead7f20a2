"""Team invitations (spec, "Team", "Team invitation", Authentication 2–3, Errors 409)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.service.body import Fields
from clearing_sim.service.team import INVITATION_TTL_MS, TeamBook, check_email
from tests.service.conftest import Service

INVITE = "/api/v1/team/invitations"
LONG_254 = "a@" + ".".join(["b" * 60] * 4) + "." + "e" * 8
assert len(LONG_254) == 254
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def _invite(svc: Service, email: str, token: str | None = None) -> Any:
    return svc.call("POST", INVITE, token or svc.member.admin, {"email": email})


def _code(response: Any) -> tuple[int, str, str | None]:
    error = response.json()["errors"][0]
    return response.status, error["code"], error.get("param")


def _refused_and_unchanged(svc: Service, response: Any, status: int, code: str,
                           before: tuple[int, int]) -> None:
    """The refusal, and nothing but the ``api.request`` record added."""
    assert _code(response)[:2] == (status, code)
    log_length, invitations = before
    assert [r.kind for r in list(svc.world.log)[log_length:]] == ["api.request"]
    assert len(svc.api.store(TeamBook).invitations) == invitations


def _state(svc: Service) -> tuple[int, int]:
    return len(svc.world.log), len(svc.api.store(TeamBook).invitations)


def test_an_invitation_is_201_with_every_field(svc: Service) -> None:
    """Team invitation: invitationId (inv_ + UUID), email, participantId (the caller's), role
    member, status pending, createdAt, expiresAt (7 days later)."""
    svc.world.advance(1_234)
    response = _invite(svc, "Ada.Lovelace@Northbank.example")
    assert response.status == 201
    data = response.json()["data"]
    assert list(data) == ["invitationId", "email", "participantId", "role", "status",
                          "createdAt", "expiresAt"]
    assert re.fullmatch(f"inv_{UUID}", data["invitationId"])
    assert data["email"] == "Ada.Lovelace@Northbank.example"
    assert data["participantId"] == svc.member.participant.id
    assert (data["role"], data["status"]) == ("member", "pending")
    assert data["createdAt"] == "2026-01-01T00:00:01.234Z"
    assert data["expiresAt"] == "2026-01-08T00:00:01.234Z"
    record = svc.world.log.select("team.invited")[-1]
    assert record["invitationId"] == data["invitationId"]


def test_invitations_go_into_the_callers_own_participant(svc: Service) -> None:
    """Team: the participant and role are set by the service (Authentication 3)."""
    data = _invite(svc, "x@issuer.example", svc.issuers[2].admin).json()["data"]
    assert data["participantId"] == svc.issuers[2].participant.id


def test_an_api_key_cannot_invite(svc: Service) -> None:
    """Needs manageOwnTeam (tenant admin JWT): a machine key gets 403."""
    before = _state(svc)
    _refused_and_unchanged(svc, _invite(svc, "a@b.example", svc.member.key), 403,
                           "missing_capability", before)


def test_inviting_needs_authentication(svc: Service) -> None:
    response = svc.call("POST", INVITE, None, {"email": "a@b.example"})
    assert _code(response)[:2] == (401, "authentication_required")


@pytest.mark.parametrize(("body", "param", "code"), [
    ({}, "email", "required"),
    ({"email": 42}, "email", "invalid_type"),
    ({"email": "a@b.example", "role": "admin"}, "role", "unknown_field"),
    ({"email": "a@b.example", "participantId": "x"}, "participantId", "unknown_field"),
])
def test_email_is_the_only_field_and_it_is_required(svc: Service, body: dict[str, Any],
                                                   param: str, code: str) -> None:
    """Team: body `email` (the only accepted field)."""
    before = _state(svc)
    response = svc.call("POST", INVITE, svc.member.admin, body)
    assert _code(response) == (400, code, param)
    _refused_and_unchanged(svc, response, 400, code, before)


@pytest.mark.parametrize("email", [
    "", " ", "plainaddress", "a@@b.example", "a@b@c.example", "@b.example", "a@", "a@localhost",
    "a@b.", "a@.example", "a@b..example", "a b@c.example", "a@b c.example", ".a@b.example",
    "a.@b.example", "a..b@c.example", "a@-b.example", "a@b-.example", "a@b_c.example",
    "a@b.example ", "x" * 65 + "@b.example", "a@" + "b" * 64 + ".example",
    LONG_254[:-1] + "ee",  # 255 characters
])
def test_a_malformed_email_is_400_invalid_email(svc: Service, email: str) -> None:
    """Team: `email` is an email (≤ 254 characters, one @, a dotted domain)."""
    before = _state(svc)
    response = _invite(svc, email)
    assert _code(response) == (400, "invalid_email", "email")
    _refused_and_unchanged(svc, response, 400, "invalid_email", before)


@pytest.mark.parametrize("email", [
    "a@b.co", "first.last+tag@sub.example.co.uk", "o'brien@example.ie", "x_y-z@a1-b2.example",
    "UPPER@EXAMPLE.COM", LONG_254,
])
def test_a_well_formed_email_is_accepted(svc: Service, email: str) -> None:
    assert _invite(svc, email).status == 201


@settings(max_examples=50, deadline=None)
@given(email=st.emails().filter(lambda e: len(e) <= 254))
def test_every_address_hypothesis_calls_an_email_is_accepted(email: str) -> None:
    f = Fields({"email": email})
    assert check_email(f, "email") == email
    assert f.problems == []


def test_an_active_member_cannot_be_invited(svc: Service) -> None:
    """409 when the email already belongs to an active member (compared case-insensitively)."""
    svc.api.store(TeamBook).add_member(svc.member.participant.id, "ada@northbank.example", "Ada")
    before = _state(svc)
    response = _invite(svc, "ADA@Northbank.Example")
    assert _code(response) == (409, "already_member", "email")
    _refused_and_unchanged(svc, response, 409, "already_member", before)
    assert _invite(svc, "ada@northbank.example", svc.other.admin).status == 201  # another team


def test_a_pending_invitation_blocks_a_second_until_it_expires(svc: Service) -> None:
    """409 when the email has a pending invitation; after its 7 days a new one is allowed."""
    first = _invite(svc, "bob@example.com").json()["data"]
    svc.world.advance(INVITATION_TTL_MS - 1)
    admin = svc.api.credentials.issue_session(svc.member.participant.id)  # 8 h sessions
    before = _state(svc)
    response = _invite(svc, "Bob@Example.com", admin)
    assert _code(response) == (409, "invitation_pending", "email")
    _refused_and_unchanged(svc, response, 409, "invitation_pending", before)
    svc.world.advance(1)
    second = _invite(svc, "Bob@Example.com", admin)
    assert second.status == 201
    assert second.json()["data"]["invitationId"] != first["invitationId"]
    assert second.json()["data"]["email"] == "Bob@Example.com"


def test_a_pending_invitation_elsewhere_does_not_block(svc: Service) -> None:
    assert _invite(svc, "carol@example.com").status == 201
    assert _invite(svc, "carol@example.com", svc.other.admin).status == 201


def test_a_replayed_invitation_returns_the_same_bytes(svc: Service) -> None:
    """Idempotency-Key: the same key and body answer the original result, one invitation."""
    headers = {"Idempotency-Key": "invite-1"}
    first = svc.call("POST", INVITE, svc.member.admin, {"email": "d@example.com"},
                     headers=headers)
    again = svc.call("POST", INVITE, svc.member.admin, {"email": "d@example.com"},
                     headers=headers)
    assert (first.status, again.body) == (201, first.body)
    assert len(svc.api.store(TeamBook).invitations) == 1


def test_add_member_is_the_engine_level_way_in(svc: Service) -> None:
    book = svc.api.store(TeamBook)
    member = book.add_member(svc.other.participant.id, "eve@southbank.example", "Eve")
    assert book.member(svc.other.participant.id, "EVE@southbank.example") is member
    assert member.joined_at_ms == svc.world.now_ms
    assert svc.world.log.select("team.member_added")[-1]["email"] == "eve@southbank.example"
    with pytest.raises(AssertionError):
        book.add_member(svc.other.participant.id, "Eve@Southbank.example")


def test_invitations_are_served_in_production(prod: Service) -> None:
    """Not sandbox-only: production has the same API surface."""
    assert _invite(prod, "a@b.example", prod.member.admin).status == 201
