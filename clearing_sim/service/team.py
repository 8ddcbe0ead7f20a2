"""Team: a participant's members and the invitations its tenant admins send.

Public names: ``ROUTES``, ``TeamBook``, ``TeamMember``, ``Invitation``, ``invitation_wire``,
``check_email``, ``INVITATION_TTL_MS``, ``EMAIL_LENGTH_MAX``.

``POST /api/v1/team/invitations`` (``manageOwnTeam``, tenant-admin JWT) invites one email into
the caller's own participant as a ``member``; ``email`` is the only field accepted. The
checks, in order (docs/semantics.md): the email is well formed (≤ 254 characters, one ``@``,
a dotted domain), else 400 ``invalid_email``; it is not an active member of the caller's
participant (409 ``already_member``); it has no pending invitation there that is still
unexpired (409 ``invitation_pending``). Emails are compared case-insensitively and kept as
sent. An invitation stays pending for ``INVITATION_TTL_MS`` (7 days); after that a new one
may be sent. ``TeamBook.add_member`` is the engine-level way a member joins (onboarding's
primary contact, scenario files).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from attrs import define

from clearing_sim.domain.errors import NotAllowed
from clearing_sim.domain.parties import Capability, CredentialKind
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Context, Reply, Route

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["EMAIL_LENGTH_MAX", "INVITATION_TTL_MS", "ROUTES", "Invitation", "TeamBook",
           "TeamMember", "check_email", "invitation_wire"]

EMAIL_LENGTH_MAX = 254  # RFC 5321's path limit less the angle brackets
INVITATION_TTL_MS = 7 * 86_400_000
MEMBER_ROLE = "member"

_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _email_fault(email: str) -> str | None:
    if len(email) > EMAIL_LENGTH_MAX:
        return f"at most {EMAIL_LENGTH_MAX} characters"
    if email.count("@") != 1:
        return "exactly one @"
    local, domain = email.split("@")
    if not 1 <= len(local) <= 64 or not _LOCAL.fullmatch(local):
        return "a local part of 1 to 64 characters without spaces or consecutive dots"
    labels = domain.split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        return "a dotted domain such as example.com"
    return None


def check_email(f: Fields, name: str) -> str | None:
    """Read an email field; a malformed one is ``invalid_email`` (problem collected in ``f``)."""
    email = f.text(name, length_max=10_000, nonblank=False)
    if email is None:
        return None
    fault = _email_fault(email)
    if fault is not None:
        f.problem(name, "invalid_email", f"{f.path(name)} must be an email address: {fault}")
        return None
    return email


def _key(email: str) -> str:
    return email.lower()


@define
class TeamMember:
    participant_id: str
    email: str
    name: str | None
    joined_at_ms: int
    role: str = MEMBER_ROLE


@define
class Invitation:
    invitation_id: str
    participant_id: str
    email: str
    created_at_ms: int
    expires_at_ms: int
    role: str = MEMBER_ROLE

    def pending_at(self, now_ms: int) -> bool:
        return now_ms < self.expires_at_ms


class TeamBook:
    """Members (per participant, by case-folded email) and invitations, in creation order."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.members: dict[str, dict[str, TeamMember]] = {}
        self.invitations: dict[str, Invitation] = {}

    def member(self, participant_id: str, email: str) -> TeamMember | None:
        return self.members.get(participant_id, {}).get(_key(email))

    def pending(self, participant_id: str, email: str, now_ms: int) -> Invitation | None:
        key = _key(email)
        return next((i for i in self.invitations.values() if i.participant_id == participant_id
                     and _key(i.email) == key and i.pending_at(now_ms)), None)

    def add_member(self, participant_id: str, email: str, name: str | None = None) -> TeamMember:
        """An active member joins the participant's team now (engine level, no API check)."""
        world = self.world
        assert world.participants.get(participant_id) is not None, participant_id
        assert self.member(participant_id, email) is None, f"{email} is already a member"
        member = TeamMember(participant_id, email, name, world.now_ms)
        self.members.setdefault(participant_id, {})[_key(email)] = member
        world.log.append("team.member_added", participantId=participant_id, email=email)
        return member

    def invite(self, participant_id: str, email: str) -> Invitation:
        world = self.world
        now = world.now_ms
        invitation = Invitation(world.ids.prefixed("inv"), participant_id, email, now,
                                now + INVITATION_TTL_MS)
        self.invitations[invitation.invitation_id] = invitation
        world.log.append("team.invited", invitationId=invitation.invitation_id,
                         participantId=participant_id, email=email,
                         expiresAtMs=invitation.expires_at_ms)
        return invitation


def invitation_wire(ctx: Context, invitation: Invitation) -> dict[str, Any]:
    return {
        "invitationId": invitation.invitation_id,
        "email": invitation.email,
        "participantId": invitation.participant_id,
        "role": invitation.role,
        "status": "pending" if invitation.pending_at(ctx.now_ms) else "expired",
        "createdAt": ctx.world.iso(invitation.created_at_ms),
        "expiresAt": ctx.world.iso(invitation.expires_at_ms),
    }


def invite(ctx: Context) -> Reply:
    f = ctx.fields()
    email = check_email(f, "email")
    f.done()
    assert email is not None
    book = ctx.store(TeamBook)
    participant_id = ctx.caller.id
    if book.member(participant_id, email) is not None:
        raise NotAllowed.one("email", "already_member",
                             f"{email} is already an active member of this participant")
    pending = book.pending(participant_id, email, ctx.now_ms)
    if pending is not None:
        raise NotAllowed.one("email", "invitation_pending",
                             f"{email} has a pending invitation ({pending.invitation_id}) "
                             f"until {ctx.world.iso(pending.expires_at_ms)}")
    return Reply(201, invitation_wire(ctx, book.invite(participant_id, email)))


ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/team/invitations", invite, "invite a member into your own team",
          (Capability.MANAGE_OWN_TEAM,), (CredentialKind.TENANT_ADMIN,)),
)
