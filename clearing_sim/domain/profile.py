"""The issuer capability profile, its validation and settlement-mode derivation.

Public names: ``CommitPoint``, ``CustodyModel``, ``FeedbackChannel``, ``FiatLeg``, ``Ledger``,
``SettlementMode``, ``IssuerProfile``, ``parse_profile``, ``derive_mode``.

Mode derivation (spec, "Settlement modes"; identifiers of Modes 2 and 3 are ours, see
docs/semantics.md):

    commitPoint     preBurnTransferRequired   mode                          needs
    ON_OBSERVATION  (ignored)                 MODE_1_DELEGATED_SIGNING      —
    ON_INSTRUCTION  false                     MODE_2_TWO_PHASE              apiBaseUrl
    ON_INSTRUCTION  true                      MODE_3_PRE_BURN_TRANSFER      apiBaseUrl + refund

``feedbackChannel`` decides how an ON_INSTRUCTION saga learns instruction outcomes
(``SIGNED_WEBHOOK`` also needs ``webhookUrl``); ``custodyModel`` decides which issuer wallet a
Mode 3 pre-burn transfer goes to.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from attrs import frozen

from clearing_sim.domain.errors import InvalidRequest, Problem

__all__ = [
    "APPROVAL_SLA_S_DEFAULT",
    "CommitPoint",
    "CustodyModel",
    "FeedbackChannel",
    "FiatLeg",
    "IssuerProfile",
    "Ledger",
    "SettlementMode",
    "derive_mode",
    "parse_profile",
]


class CommitPoint(StrEnum):
    ON_OBSERVATION = "ON_OBSERVATION"
    ON_INSTRUCTION = "ON_INSTRUCTION"


class CustodyModel(StrEnum):
    PER_MEMBER_ISSUER_WALLET = "PER_MEMBER_ISSUER_WALLET"
    POOLED_ISSUER_WALLET = "POOLED_ISSUER_WALLET"


class FeedbackChannel(StrEnum):
    SIGNED_WEBHOOK = "SIGNED_WEBHOOK"
    POLLABLE_RESOURCE = "POLLABLE_RESOURCE"


class FiatLeg(StrEnum):
    OPERATOR_SETTLES_RTGS = "NUVANTE_SETTLES_RTGS"  # the wire value, as the interface defines it
    ISSUER_SETTLES_RTGS = "ISSUER_SETTLES_RTGS"


class Ledger(StrEnum):
    STELLAR = "stellar"
    EVM = "evm"
    SOLANA = "solana"


class SettlementMode(StrEnum):
    MODE_1 = "MODE_1_DELEGATED_SIGNING"
    MODE_2 = "MODE_2_TWO_PHASE"
    MODE_3 = "MODE_3_PRE_BURN_TRANSFER"

    @property
    def number(self) -> int:
        return {"MODE_1_DELEGATED_SIGNING": 1, "MODE_2_TWO_PHASE": 2,
                "MODE_3_PRE_BURN_TRANSFER": 3}[self.value]

    @property
    def has_instructions(self) -> bool:
        """Modes 2 and 3 instruct the issuer; Mode 1 has no issuer instruction step."""
        return self is not SettlementMode.MODE_1


APPROVAL_SLA_S_DEFAULT = 900
APPROVAL_SLA_S_MAX = 7 * 24 * 3600
AMOUNT_PRECISION_DEFAULT = 2
AMOUNT_PRECISION_MIN = 2  # at least the fiat's pennies, so a par quote is exact
AMOUNT_PRECISION_MAX = 18
MINT_DELIVERY_TARGETS = ("REGISTERED_HANDLE",)
FINALITY_CLASSES = ("DETERMINISTIC",)
REFUND_PATH = "/treasury/refunds"

_URL = re.compile(r"https?://[^\s/?#]+[^\s]*")


@frozen
class IssuerProfile:
    """A validated issuer capability profile (spec, "Issuer capability profile")."""

    commit_point: CommitPoint
    custody_model: CustodyModel
    feedback_channel: tuple[FeedbackChannel, ...]
    fiat_leg: FiatLeg
    ledger: Ledger
    pre_burn_transfer_required: bool = False
    api_base_url: str | None = None
    mint_delivery_target: str | None = None
    finality_class: str | None = None
    amount_precision: int = AMOUNT_PRECISION_DEFAULT
    approval_sla_s: int = APPROVAL_SLA_S_DEFAULT
    webhook_url: str | None = None
    refund_url: str | None = None

    @property
    def mode(self) -> SettlementMode:
        return derive_mode(self.commit_point, self.pre_burn_transfer_required)

    @property
    def refund_endpoint(self) -> str | None:
        """Mode 3's refund endpoint: ``refundUrl``, else ``{apiBaseUrl}/treasury/refunds``."""
        if self.refund_url is not None:
            return self.refund_url
        if self.api_base_url is None:
            return None
        return self.api_base_url.rstrip("/") + REFUND_PATH

    @property
    def approval_sla_ms(self) -> int:
        return self.approval_sla_s * 1000


def derive_mode(commit_point: CommitPoint, pre_burn_transfer_required: bool) -> SettlementMode:
    if commit_point is CommitPoint.ON_OBSERVATION:
        return SettlementMode.MODE_1
    return SettlementMode.MODE_3 if pre_burn_transfer_required else SettlementMode.MODE_2


class _Reader:
    """Collects every problem of one body, so a refusal names them all, first field first."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        self.body = body
        self.problems: list[Problem] = []

    def bad(self, param: str, code: str, message: str) -> None:
        self.problems.append(Problem(param, code, message))

    def reported(self, param: str) -> bool:
        return any(p.param == param for p in self.problems)

    def enum(self, name: str, kind: type[StrEnum], required: bool = True) -> Any:
        value = self.body.get(name)
        if value is None:
            if required:
                self.bad(name, "required", f"{name} is required")
            return None
        allowed = [m.value for m in kind]
        if not isinstance(value, str) or value not in allowed:
            self.bad(name, "invalid_value", f"{name} must be one of {', '.join(allowed)}")
            return None
        return kind(value)

    def boolean(self, name: str) -> bool | None:
        value = self.body.get(name)
        if value is not None and not isinstance(value, bool):
            self.bad(name, "invalid_type", f"{name} must be a boolean")
            return None
        return value

    def integer(self, name: str, low: int, high: int) -> int | None:
        value = self.body.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.bad(name, "invalid_value", f"{name} must be an integer from {low} to {high}")
            return None
        return value

    def url(self, name: str) -> str | None:
        value = self.body.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or len(value) > 2048 or not _URL.fullmatch(value):
            self.bad(name, "invalid_url", f"{name} must be an absolute http(s) URL")
            return None
        return value

    def choice(self, name: str, allowed: tuple[str, ...]) -> str | None:
        value = self.body.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or value not in allowed:
            self.bad(name, "invalid_value", f"{name} must be one of {', '.join(allowed)}")
            return None
        return value

    def channels(self) -> tuple[FeedbackChannel, ...]:
        value = self.body.get("feedbackChannel")
        allowed = [m.value for m in FeedbackChannel]
        if value is None:
            self.bad("feedbackChannel", "required", "feedbackChannel is required")
            return ()
        if (not isinstance(value, list) or not value
                or not all(isinstance(v, str) and v in allowed for v in value)
                or len(set(value)) != len(value)):
            self.bad("feedbackChannel", "invalid_value",
                     f"feedbackChannel must be a non-empty list of distinct {', '.join(allowed)}")
            return ()
        return tuple(FeedbackChannel(v) for v in value)


_FIELDS = ("commitPoint", "preBurnTransferRequired", "custodyModel", "feedbackChannel",
           "fiatLeg", "ledger", "apiBaseUrl", "mintDeliveryTarget", "finalityClass",
           "amountPrecision", "approvalSlaSeconds", "webhookUrl", "refundUrl")


def parse_profile(body: object) -> IssuerProfile:
    """Validate a profile body (wire field names); raise ``InvalidRequest`` naming every problem."""
    if not isinstance(body, Mapping):
        raise InvalidRequest.one(None, "invalid_body", "the profile must be a JSON object")
    r = _Reader(body)
    for name in body:
        if name not in _FIELDS:
            r.bad(str(name), "unknown_field", f"{name} is not a capability profile field")
    commit_point = r.enum("commitPoint", CommitPoint)
    pre_burn = r.boolean("preBurnTransferRequired")
    custody = r.enum("custodyModel", CustodyModel)
    channels = r.channels()
    fiat_leg = r.enum("fiatLeg", FiatLeg)
    ledger = r.enum("ledger", Ledger)
    api_base_url = r.url("apiBaseUrl")
    mint_target = r.choice("mintDeliveryTarget", MINT_DELIVERY_TARGETS)
    finality = r.choice("finalityClass", FINALITY_CLASSES)
    precision = r.integer("amountPrecision", AMOUNT_PRECISION_MIN, AMOUNT_PRECISION_MAX)
    sla = r.integer("approvalSlaSeconds", 1, APPROVAL_SLA_S_MAX)
    webhook_url = r.url("webhookUrl")
    refund_url = r.url("refundUrl")
    if commit_point is CommitPoint.ON_INSTRUCTION:
        if pre_burn is None and not r.reported("preBurnTransferRequired"):
            r.bad("preBurnTransferRequired", "required",
                  "preBurnTransferRequired is required when commitPoint is ON_INSTRUCTION")
        if api_base_url is None and not r.reported("apiBaseUrl"):
            r.bad("apiBaseUrl", "required",
                  "apiBaseUrl is required for Modes 2 and 3 (commitPoint ON_INSTRUCTION)")
        if FeedbackChannel.SIGNED_WEBHOOK in channels and webhook_url is None \
                and not r.reported("webhookUrl"):
            r.bad("webhookUrl", "required", "webhookUrl is required with SIGNED_WEBHOOK feedback")
    if r.problems:
        raise InvalidRequest(*r.problems)
    assert commit_point is not None and custody is not None and fiat_leg is not None
    assert ledger is not None
    return IssuerProfile(
        commit_point=commit_point,
        custody_model=custody,
        feedback_channel=channels,
        fiat_leg=fiat_leg,
        ledger=ledger,
        pre_burn_transfer_required=bool(pre_burn)
        if commit_point is CommitPoint.ON_INSTRUCTION else False,
        api_base_url=api_base_url,
        mint_delivery_target=mint_target,
        finality_class=finality,
        amount_precision=AMOUNT_PRECISION_DEFAULT if precision is None else precision,
        approval_sla_s=APPROVAL_SLA_S_DEFAULT if sla is None else sla,
        webhook_url=webhook_url,
        refund_url=refund_url,
    )
