"""Onboarding: one application gives sandbox access at once and production access after review.

Public names: ``ROUTES``, ``Application``, ``ApplicationBook``, ``ApplicationTerms``,
``REVIEW_ETA``, ``APPLICATION_STATUS``.

``POST /api/v1/onboarding/applications`` is public: an applicant has no credential yet, and
the application is what issues the first one (spec, Authentication 5). The body is the spec's
table; choices where it is silent are in docs/semantics.md:

- ``commitPoint`` is required for issuers; ``preBurnTransferRequired`` for issuers whose
  ``commitPoint`` is ON_INSTRUCTION. Sent by a participant (or the flag with another commit
  point) they are 400 ``field_not_applicable``. ``custodyModel`` accepts ``self_custody`` and
  normalises it to ``self-custody``. ``chains`` is a non-empty list of distinct known chains.
  ``intendedUseCase`` (free text, 1–500 characters) and ``expectedMonthlyVolumeGbp`` (a
  positive decimal string, at most 2 places) are optional.
- The derived result is the integration path (``clearing_sim.domain.integration``) of the
  application's role, custody model, first chain (its primary chain) and commit point, so a
  dry run's answer equals ``POST /api/v1/tools/integration-path`` for the same inputs.
- ``organisationName`` must not name an existing participant or application (compared
  case-insensitively, spaces collapsed): 409 ``organisation_name_taken``.
- ``dryRun: true``: the same validation, conflict check and derivation; nothing is saved;
  200 ``{dryRun: true, derivedMode, custodyCompatible, chainStatus, steps}``.
- Otherwise 201, the Onboarding application result, ``status`` ``under_review`` (the
  production review). In a sandbox world the participant is created, its first sandbox API
  key issued (shown once here) and the primary contact made an active team member. A
  production world has no sandbox to provision: the application is recorded for review only
  and ``sandbox`` says ``accessGranted: false`` with null ids.
- ``production.reviewEta`` is an ISO 8601 duration, ``REVIEW_ETA`` (14 days).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from attrs import define, frozen

from clearing_sim.domain.errors import NotAllowed
from clearing_sim.domain.integration import (
    Chain,
    IntegrationPath,
    IntegratorRole,
    ParticipantCustody,
    integration_path,
)
from clearing_sim.domain.profile import CommitPoint
from clearing_sim.service.body import Fields
from clearing_sim.service.context import Context, Reply, Route
from clearing_sim.service.system import path_wire, read_custody, read_issuer_terms
from clearing_sim.service.team import TeamBook, check_email
from clearing_sim.sim.world import Environment

if TYPE_CHECKING:
    from clearing_sim.sim.world import World

__all__ = ["APPLICATION_STATUS", "REVIEW_ETA", "ROUTES", "Application", "ApplicationBook",
           "ApplicationTerms"]

APPLICATION_STATUS = "under_review"
REVIEW_ETA = "P14D"
ROLES = (IntegratorRole.PARTICIPANT.value, IntegratorRole.ISSUER.value)
NAME_LENGTH_MAX = 200
USE_CASE_LENGTH_MAX = 500
_VOLUME_PLACES = 2


def _name_key(name: str) -> str:
    return " ".join(name.split()).casefold()


@frozen
class ApplicationTerms:
    """A valid application body."""

    organisation_name: str
    role: IntegratorRole
    contact_name: str
    contact_email: str
    custody: ParticipantCustody
    chains: tuple[Chain, ...]
    commit_point: CommitPoint | None
    pre_burn_transfer_required: bool
    intended_use_case: str | None
    expected_monthly_volume_gbp: Decimal | None
    dry_run: bool

    def path(self) -> IntegrationPath:
        return integration_path(self.role, self.custody, self.chains[0], self.commit_point,
                                self.pre_burn_transfer_required)


@define
class Application:
    application_id: str
    submitted_at_ms: int
    terms: ApplicationTerms
    path: IntegrationPath
    participant_id: str | None  # None in a production world: nothing provisioned yet
    api_key_id: str | None
    status: str = APPLICATION_STATUS


class ApplicationBook:
    def __init__(self, world: World) -> None:
        self.world = world
        self.applications: dict[str, Application] = {}

    def name_taken(self, name: str) -> bool:
        key = _name_key(name)
        return (any(_name_key(p.name) == key for p in self.world.participants)
                or any(_name_key(a.terms.organisation_name) == key
                       for a in self.applications.values()))


# reading ----------------------------------------------------------------------------------
def _chains(f: Fields) -> tuple[Chain, ...] | None:
    chosen = f.choices("chains", [c.value for c in Chain], what="chain")
    return None if chosen is None else tuple(Chain(c) for c in chosen)


def _volume(f: Fields) -> Decimal | None:
    text = f.text("expectedMonthlyVolumeGbp", required=False, length_max=40)
    if text is None:
        return None
    try:
        value = Decimal(text) if text.strip() == text and "e" not in text.lower() else None
    except InvalidOperation:
        value = None
    if (value is None or not value.is_finite() or value <= 0
            or -int(value.as_tuple().exponent) > _VOLUME_PLACES):
        f.problem("expectedMonthlyVolumeGbp", "invalid_amount",
                  "expectedMonthlyVolumeGbp must be a positive decimal string with at most "
                  f"{_VOLUME_PLACES} places")
        return None
    return value


def _read(f: Fields) -> ApplicationTerms:
    name = f.text("organisationName", length_max=NAME_LENGTH_MAX)
    role_text = f.text("role", choices=ROLES)
    role = None if role_text is None else IntegratorRole(role_text)
    contact = f.object("primaryContact")
    contact_name = contact_email = None
    if contact is not None:
        contact_name = contact.text("name", length_max=NAME_LENGTH_MAX)
        contact_email = check_email(contact, "email")
        contact.check_unknown()
    custody = read_custody(f)
    chains = _chains(f)
    commit_point, pre_burn, not_applicable = read_issuer_terms(
        f, role, commit_point_required=role is IntegratorRole.ISSUER)
    dry_run = f.flag("dryRun", required=False)
    use_case = f.text("intendedUseCase", required=False, length_max=USE_CASE_LENGTH_MAX)
    volume = _volume(f)
    f.done(*not_applicable)
    assert name is not None and role is not None and contact_name is not None
    assert contact_email is not None and custody is not None and chains is not None
    return ApplicationTerms(name, role, contact_name, contact_email, custody, chains, commit_point,
                  pre_burn, use_case, volume, bool(dry_run))


# provisioning -----------------------------------------------------------------------------
def _sandbox_block(participant_id: str | None, key: tuple[str, str] | None) -> dict[str, Any]:
    return {"accessGranted": key is not None,
            "apiKeyId": None if key is None else key[0],
            "apiKeySecret": None if key is None else key[1],
            "participantId": participant_id}


def _provision(ctx: Context, terms: ApplicationTerms, path: IntegrationPath) -> dict[str, Any]:
    """Record the application; in a sandbox world also the participant, key and contact."""
    world = ctx.world
    application_id = world.ids.uuid("application")
    participant_id: str | None = None
    key: tuple[str, str] | None = None
    if world.config.environment is Environment.SANDBOX:
        add = world.add_issuer if terms.role is IntegratorRole.ISSUER else world.add_member
        participant_id = add(terms.organisation_name).id
        key = ctx.credentials.issue_api_key(participant_id)
        ctx.store(TeamBook).add_member(participant_id, terms.contact_email, terms.contact_name)
    application = Application(application_id, ctx.now_ms, terms, path, participant_id,
                              None if key is None else key[0])
    ctx.store(ApplicationBook).applications[application_id] = application
    world.log.append("onboarding.application", applicationId=application_id,
                     organisationName=terms.organisation_name, role=terms.role.value,
                     participantId=participant_id, apiKeyId=application.api_key_id,
                     derivedMode=path.derived_mode.value,
                     custodyCompatible=path.custody_compatible, status=application.status)
    return {
        "applicationId": application_id,
        "status": application.status,
        "derivedMode": path.derived_mode.value,
        "custodyCompatible": path.custody_compatible,
        "sandbox": _sandbox_block(participant_id, key),
        "production": {"accessGranted": False, "reviewEta": REVIEW_ETA},
    }


def apply(ctx: Context) -> Reply:
    terms = _read(ctx.fields())
    if ctx.store(ApplicationBook).name_taken(terms.organisation_name):
        raise NotAllowed.one("organisationName", "organisation_name_taken",
                             f"an organisation named {terms.organisation_name!r} is already "
                             "registered or applying")
    path = terms.path()
    if terms.dry_run:
        return Reply(200, {"dryRun": True, **path_wire(path)})
    return Reply(201, _provision(ctx, terms, path))


ROUTES: tuple[Route, ...] = (
    Route("POST", "/api/v1/onboarding/applications", apply,
          "apply: sandbox access and the first API key now, production after review",
          public=True),
)
