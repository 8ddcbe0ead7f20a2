"""JSON Schemas of every request and response body, for the OpenAPI document.

Public names: ``SCHEMAS``, ``ERROR_CODES``, ``SERVICE_VERSIONS``, ``ref``, ``array``.

One schema per wire shape, named as ``#/components/schemas/<name>``. Request bodies are
closed (``additionalProperties: false``) where the API refuses unknown fields; response
bodies list every field the API always sends as required and leave the rest open, so a
field added later does not break a client that validates. ``null`` is spelt as a type
(OpenAPI 3.1 is JSON Schema 2020-12).
"""

from __future__ import annotations

from typing import Any

from clearing_sim.domain.calendar import HOLIDAYS_MAX, WEEKDAYS
from clearing_sim.domain.errors import CATALOGUE
from clearing_sim.domain.instruction import InstructionStatus
from clearing_sim.domain.lifecycle import EventType
from clearing_sim.domain.profile import CommitPoint, CustodyModel, FeedbackChannel, FiatLeg, Ledger
from clearing_sim.domain.webhook_url import URL_LENGTH_MAX
from clearing_sim.http.clock import ADVANCE_MS_MAX
from clearing_sim.service.behaviour import HOLD_POINT_NAMES
from clearing_sim.service.versions import SUPPORTED_VERSIONS

__all__ = ["ERROR_CODES", "SCHEMAS", "SERVICE_VERSIONS", "Schema", "array", "ref"]

Schema = dict[str, Any]

ERROR_CODES: tuple[str, ...] = tuple(CATALOGUE)
SERVICE_VERSIONS: tuple[str, ...] = tuple(SUPPORTED_VERSIONS)

STR: Schema = {"type": "string"}
NSTR: Schema = {"type": ["string", "null"]}
INT: Schema = {"type": "integer"}
NUM: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
TS: Schema = {"type": "string", "format": "date-time"}
NTS: Schema = {"type": ["string", "null"], "format": "date-time"}
UUID: Schema = {"type": "string", "format": "uuid"}
NUUID: Schema = {"type": ["string", "null"], "format": "uuid"}
DECIMAL: Schema = {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?$",
                   "description": "a decimal string"}
ANY_OBJECT: Schema = {"type": "object"}
#: a request string the API refuses when empty or blank
TEXT: Schema = {"type": "string", "minLength": 1}
#: an email the API takes: one @ between a local part and a dotted domain (team.check_email)
_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
EMAIL: Schema = {"type": "string", "minLength": 3, "maxLength": 254,
                 "pattern": f"^{_ATOM}(\\.{_ATOM})*@{_LABEL}(\\.{_LABEL})+$"}


def text(length_max: int, **more: Any) -> Schema:
    """A request string of 1 to ``length_max`` characters (the API's own bounds)."""
    return {"type": "string", "minLength": 1, "maxLength": length_max, **more}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def enum(*values: str) -> Schema:
    return {"type": "string", "enum": list(values)}


def obj(required: dict[str, Schema], optional: dict[str, Schema] | None = None, *,
        closed: bool = False, description: str | None = None) -> Schema:
    schema: Schema = {"type": "object", "properties": {**required, **(optional or {})}}
    if required:
        schema["required"] = list(required)
    if closed:  # a request object: an optional member may also be null (read as absent)
        schema["properties"] = {**required, **{name: {"anyOf": [value, {"type": "null"}]}
                                               for name, value in (optional or {}).items()}}
        schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


def array(items: Schema, **more: Any) -> Schema:
    return {"type": "array", "items": items, **more}


def _values(kind: Any) -> list[str]:
    return [member.value for member in kind]


_EVENTS = enum(*_values(EventType))
_LEDGERS = enum(*_values(Ledger))
_HOLD_AT = enum(*HOLD_POINT_NAMES)  # where a simulated Mode 2 issuer waits for execute
_LOCAL_TIME: Schema = {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"}
# self_custody is the spec's accepted alias of self-custody: generators name enum members by
# their value, so both would be SELF_CUSTODY; x-enum-varnames (read by openapi-python-client
# and openapi-generator) names them apart.
_CUSTODY = {**enum("self-custody", "self_custody", "mpc", "caas"),
            "x-enum-varnames": ["SELF_CUSTODY", "SELF_CUSTODY_ALIAS", "MPC", "CAAS"]}
_STEPS = array(obj({"order": INT, "title": STR, "url": STR}))
_PARTY = ref("Party")
_ASSET = obj({"code": STR}, {"issuer": STR})

_API: dict[str, Schema] = {
    "Meta": obj({"commandId": UUID}, {"nextCursor": NSTR}),
    "Error": obj({"type": STR, "code": enum(*ERROR_CODES), "message": STR}, {"param": STR}),
    "ErrorEnvelope": obj({"errors": array(ref("Error"), minItems=1), "meta": ref("Meta")}),
    "Asset": _ASSET,
    "Money": obj({"amount": DECIMAL, "asset": ref("Asset")}),
    "Party": obj({"participantId": UUID,
                  "participantKind": enum("clearing_member", "stablecoin_issuer"),
                  "participantName": STR}),
    "SystemStatus": obj({"checkedAt": TS, "engineStatus": STR, "engineStalledJobs": INT,
                         "onChainStatus": STR, "onChainLatencyMs": {"type": ["number", "null"]},
                         "rtgsConnection": STR, "rtgsLatencyMs": {"type": ["number", "null"]}}),
    "IntegrationPathRequest": obj(
        {"role": enum("participant", "issuer", "administrator"), "custodyModel": _CUSTODY,
         "chain": enum("stellar", "evm", "solana", "canton")},
        {"commitPoint": enum(*_values(CommitPoint)), "preBurnTransferRequired": BOOL},
        closed=True),
    "IntegrationPath": obj({"derivedMode": STR, "custodyCompatible": BOOL, "chainStatus": STR,
                            "steps": _STEPS}),
    "OnboardingRequest": obj(
        {"organisationName": TEXT, "role": enum("participant", "issuer"),
         "primaryContact": obj({"name": TEXT, "email": EMAIL}, closed=True),
         "custodyModel": _CUSTODY,
         "chains": array(enum("stellar", "evm", "solana", "canton"), minItems=1,
                         uniqueItems=True)},
        {"commitPoint": enum(*_values(CommitPoint)), "preBurnTransferRequired": BOOL,
         "dryRun": BOOL, "intendedUseCase": TEXT, "expectedMonthlyVolumeGbp": DECIMAL},
        closed=True),
    "OnboardingApplication": obj({
        "applicationId": UUID, "status": STR, "derivedMode": NSTR,
        "custodyCompatible": {"type": ["boolean", "null"]},
        "sandbox": obj({"accessGranted": BOOL, "apiKeyId": NUUID, "apiKeySecret": NSTR,
                        "participantId": NUUID}),
        "production": obj({"accessGranted": BOOL, "reviewEta": STR})}),
    "OnboardingDryRun": obj({"dryRun": BOOL, "derivedMode": STR, "custodyCompatible": BOOL,
                             "chainStatus": STR, "steps": _STEPS}),
    "Leg": obj({"amount": TEXT, "asset": obj({"code": TEXT}, {"issuer": TEXT}, closed=True)},
               closed=True),
    "AgentRef": obj({"agentId": TEXT, "mandateProof": TEXT}, closed=True),
    "InitiateRequest": obj(
        {"useCase": enum("redeem", "swap"), "paymentReference": TEXT, "source": ref("Leg"),
         "target": ref("Leg")}, {"agent": ref("AgentRef")}, closed=True),
    "CancelRequest": obj({}, {"agent": ref("AgentRef")}, closed=True),
    "Empty": obj({}, closed=True, description="no fields; the body may be left out"),
    "Transaction": obj({
        "id": UUID, "paymentReference": STR, "useCase": enum("redeem", "swap"),
        "lifecycleStatus": enum("received", "in-flight", "settled", "cancelled", "failed"),
        "parked": BOOL, "terminal": BOOL, "initiatedAt": TS, "updatedAt": TS,
        "source": obj({"amount": ref("Money"), "party": _PARTY}),
        "target": obj({"amount": ref("Money"), "party": _PARTY}),
        "actions": obj({"cancel": obj({"allowed": BOOL}, {"reason": STR}),
                        "override": obj({"cancel": obj({"allowed": BOOL}),
                                         "settle": obj({"allowed": BOOL})})}),
        "details": obj({"chain": STR, "rtgs": STR,
                        "sagaStep": obj({"current": INT, "name": STR, "total": INT})},
                       {"reason": obj({"code": STR})}),
        "saga": obj({"currentStepIndex": INT,
                     "steps": array(obj({"name": STR, "status": enum(
                         "done", "current", "pending", "cancelled")}, {"happenedAt": TS}))}),
        "debitAmount": DECIMAL, "platformFeeAmount": DECIMAL, "receiveAmount": DECIMAL,
        "feeStatus": STR, "settlement": obj({"creditor": _PARTY, "debtor": _PARTY})}),
    "TransactionItem": obj({"id": UUID, "lifecycleStatus": STR, "parked": BOOL,
                            "paymentReference": STR, "terminal": BOOL,
                            "useCase": enum("redeem", "swap")}),
    "RecoveryStatus": obj({
        "transactionId": UUID, "lifecycleStatus": STR, "parked": BOOL, "terminal": BOOL,
        "recoverable": BOOL, "awaiting": enum("operator", "service", "none"),
        "reason": {"type": ["object", "null"], "properties": {"code": STR}},
        "parkedAt": NTS, "operatorFixes": INT, "lastOperatorFixAt": NTS,
        "history": array(obj({"at": TS, "event": STR, "lifecycleStatus": STR,
                              "parked": BOOL}))}),
    "ReserveArtifact": obj({
        "artifactId": UUID, "issuerId": UUID, "keyId": text(200), "generatedAt": TS,
        "pass": BOOL, "snapshot": obj({"reservesGbp": DECIMAL, "supplyIssued": DECIMAL,
                                       "centralBankDepositRatio": NUM}),
        "proofSystem": enum("simulated-hmac-sha256"), "proof": text(200)}),
    "VerifyRequest": obj({"artifact": ref("ReserveArtifact")}, closed=True),
    "VerifyResult": obj({"pass": BOOL, "keyId": STR},
                        {"proofVerified": BOOL, "policySatisfied": BOOL}),
    "AgentCapabilities": obj({}, {"initiateTransaction": BOOL, "cancelOwnTransaction": BOOL},
                             closed=True),
    "AgentCreate": obj({"capabilities": ref("AgentCapabilities"),
                        "expiresAt": text(64, format="date-time")},
                       {"amountCapGbp": NSTR}, closed=True),
    # named apart from AgentCapabilities (the closed request shape): a generator would
    # otherwise name this inline object AgentCapabilities too, and drop Agent
    "AgentCapabilitiesGranted": obj({}, {"initiateTransaction": BOOL,
                                         "cancelOwnTransaction": BOOL}),
    "Agent": obj({"agentId": STR, "participantId": UUID,
                  "capabilities": ref("AgentCapabilitiesGranted"),
                  "amountCapGbp": NSTR, "expiresAt": TS, "revokedAt": NTS, "createdAt": TS},
                 {"mandateProof": STR}),
    "AgentList": obj({"agents": array(obj({"agentId": STR, "participantId": UUID,
                                           "expiresAt": TS, "revokedAt": NTS})),
                      "total": INT}),
    "WebhookCreate": obj({"url": text(URL_LENGTH_MAX, description=(
        "https:// to a public address (spec, Limits: Webhook URL); the shim started with "
        "--allow-private-webhook-urls also takes http:// and private addresses")),
        "events": array(_EVENTS, minItems=1, uniqueItems=True)},
                         {"description": STR}, closed=True),
    "WebhookSubscription": obj(
        {"id": STR, "url": STR, "events": array(_EVENTS), "description": NSTR,
         "status": enum("active", "disabled"), "createdAt": TS, "lastDeliveryAt": NTS,
         "lastSuccessAt": NTS, "failingSince": NTS, "disableAt": NTS, "disabledAt": NTS,
         "pendingDeliveries": INT}, {"signingSecret": STR}),
    "IssuerProfile": obj(
        {"commitPoint": enum(*_values(CommitPoint)), "custodyModel": enum(*_values(CustodyModel)),
         "feedbackChannel": array(enum(*_values(FeedbackChannel)), uniqueItems=True),
         "fiatLeg": enum(*_values(FiatLeg)), "ledger": _LEDGERS},
        {"preBurnTransferRequired": BOOL, "apiBaseUrl": TEXT, "mintDeliveryTarget": TEXT,
         "finalityClass": TEXT, "amountPrecision": INT, "approvalSlaSeconds": INT,
         "webhookUrl": TEXT, "refundUrl": TEXT}, closed=True),
    "SavedProfile": obj({"issuerId": UUID, "profileVersion": INT, "commitPoint": STR,
                         "custodyModel": STR, "feedbackChannel": array(STR), "fiatLeg": STR,
                         "ledger": STR, "effectiveFrom": TS}),
    "DelegationRequest": obj({"chain": _LEDGERS, "accountId": TEXT}, closed=True),
    "DelegationResult": obj({"verified": BOOL,
                             "signers": array(obj({"key": STR, "weight": INT})),
                             "thresholds": obj({"low": INT, "medium": INT, "high": INT}),
                             "serviceOperatorKey": STR, "meetsPolicyRequirement": BOOL}),
    "IssuerConformanceRun": obj({
        "runId": UUID, "issuerId": UUID, "profileVersion": INT, "derivedMode": STR,
        "apiBaseUrl": NSTR, "status": STR, "passed": {"type": ["boolean", "null"]},
        "startedAt": NTS, "completedAt": NTS,
        "scenarios": array(obj({"name": STR, "mandatory": BOOL, "status": STR,
                                "transactionId": NUUID, "startedAt": NTS, "concludedAt": NTS,
                                "detail": ANY_OBJECT}))}),
    "ArmRequest": obj({"scenario": enum("rejected", "failed", "silence"),
                       "transactionId": text(64, format="uuid")}, closed=True),
    "ArmResult": obj({"transactionId": UUID, "scenario": STR, "armed": BOOL}),
    "InvitationRequest": obj({"email": EMAIL}, closed=True),
    "Invitation": obj({"invitationId": STR, "email": STR, "participantId": UUID,
                       "role": STR, "status": STR, "createdAt": TS, "expiresAt": TS}),
}

_LATENCY: Schema = {
    "description": "whole milliseconds, a duration string (250ms, 5s, 15m), or one of "
                   "{fixed: D}, {uniform: [D, D]}, {exponential: D}, "
                   "{lognormal: {median: D, sigma: X, max: D}}",
    "anyOf": [{"type": "integer", "minimum": 0}, STR, ANY_OBJECT]}
_PROBABILITY: Schema = {"type": "number", "minimum": 0, "maximum": 1}
_CHECKPOINT_NAME = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_LATENCY_NAMES = ("request", "ack", "approval", "execution", "webhook", "refund")
_OUTCOME_NAMES = ("rejected", "failed", "silence")

_CLOCK: dict[str, Schema] = {
    "now": TS, "nowMs": INT, "mode": enum("manual", "realtime"), "epoch": TS,
    "unixSeconds": INT, "speed": {"type": ["number", "null"]}, "advancingTo": NTS}
#: seconds of virtual time, whole milliseconds, at most ``ADVANCE_MS_MAX`` (366 days)
_ADVANCE_SECONDS: Schema = {"type": "number", "minimum": 0, "maximum": ADVANCE_MS_MAX // 1000}
_ADVANCE_FORMS = ("AdvanceBySeconds", "AdvanceUntil", "AdvanceUntilTerminal",
                  "AdvanceUntilIdle")

_OPERATOR: dict[str, Schema] = {
    "Health": obj({"alive": {"type": "boolean", "const": True}, "ready": {"type": "boolean"}},
                  closed=True),
    "Clock": obj(_CLOCK),
    "AdvanceRequest": {"oneOf": [ref(name) for name in _ADVANCE_FORMS],
                       "description": "exactly one form: by seconds, until an instant, until "
                                      "a transaction is terminal, or until the world is idle"},
    "AdvanceBySeconds": obj({"seconds": _ADVANCE_SECONDS}, closed=True),
    "AdvanceUntil": obj({"until": TS}, closed=True),
    "AdvanceUntilTerminal": obj({"untilTerminal": text(64, description="a transaction id")},
                                {"maxSeconds": _ADVANCE_SECONDS}, closed=True),
    "AdvanceUntilIdle": obj({"untilIdle": {"type": "boolean", "const": True}},
                            {"maxSeconds": _ADVANCE_SECONDS}, closed=True),
    "AdvanceResult": obj({**_CLOCK, "stoppedAt": TS, "stoppedAtMs": INT, "met": BOOL,
                          "reason": enum("reached", "terminal", "idle", "max_seconds")}),
    "ResetRequest": obj({}, {"seed": INT}, closed=True),
    "ResetResult": obj({"seed": INT, "environment": enum("sandbox", "production"),
                        "clock": ref("Clock"),
                        "participants": array(obj({"key": STR, "participantId": UUID,
                                                   "participantName": STR, "apiKey": STR}))}),
    "NewAsset": obj({"code": STR, "ledger": _LEDGERS}, {"currency": STR}, closed=True),
    "IssuerBehaviour": obj({}, {
        "latency": obj({}, {name: _LATENCY for name in _LATENCY_NAMES}, closed=True),
        "outcomes": obj({}, {name: _PROBABILITY for name in _OUTCOME_NAMES}, closed=True),
        "holdAt": _HOLD_AT}, closed=True),
    "IssuerBehaviourResult": obj({"issuerId": UUID,
                                  "latency": obj({name: _LATENCY for name in _LATENCY_NAMES}),
                                  "outcomes": obj({name: _PROBABILITY
                                                   for name in _OUTCOME_NAMES}),
                                  "holdAt": _HOLD_AT}),
    "IssuerGatewayRequest": obj({"apiBaseUrl": STR}, {
        name: STR for name in ("refundUrl", "caFile", "clientCert", "clientKey", "bearer",
                               "tokenUrl", "clientId", "clientSecret", "providerStatesUrl",
                               "webhookSecret")} | {"timeoutSeconds": INT, "patienceMs": INT},
        closed=True),
    "IssuerStatusWebhook": obj(
        {"instructionId": STR, "status": enum(*_values(InstructionStatus))},
        {"onchain": obj({"txHash": STR, "ledgerSequence": INT}), "finalizedAt": TS},
        description="the spec's status webhook from the issuer (Issuer-side contract), "
                    "signed over its raw bytes"),
    "IssuerWebhookAccepted": obj({"accepted": BOOL}),
    "IssuerWebhookRefused": obj({"error": STR}),
    "IssuerGatewayResult": obj({"issuerId": UUID, "apiBaseUrl": STR, "webhookSecret": STR,
                                "webhookPath": STR}),
    "ParticipantCreate": obj(
        {"kind": enum("clearing_member", "stablecoin_issuer"), "name": text(200)},
        {"wallets": {"type": "object", "additionalProperties": DECIMAL,
                     "description": "members: asset code → amount to fund"},
         "rtgsBalanceGbp": DECIMAL, "assets": array(ref("NewAsset")),
         "profile": ref("IssuerProfile"), "behaviour": ref("IssuerBehaviour")}, closed=True),
    "ParticipantCreated": obj({"participantId": UUID, "participantKind": STR,
                               "participantName": STR, "apiKey": STR, "apiKeyId": UUID,
                               "adminToken": STR, "assets": array(ref("Asset"))}),
    "Participant": obj({"participantId": UUID, "participantKind": STR, "participantName": STR,
                        "assets": array(ref("Asset"))}),
    "ParticipantRef": obj({"participantId": text(64)}, closed=True),
    "Session": obj({"token": STR, "participantId": UUID, "expiresAt": TS}),
    "ApiKey": obj({"apiKey": STR, "apiKeyId": UUID, "participantId": UUID}),
    "RtgsCalendar": obj(
        {"timeZone": text(64), "opens": _LOCAL_TIME,
         "cutOff": _LOCAL_TIME, "closes": _LOCAL_TIME},
        {"closedWeekdays": array(enum(*WEEKDAYS), maxItems=7),
         "holidays": array({"type": "string", "format": "date"}, maxItems=HOLIDAYS_MAX)},
        closed=True, description="the RTGS's business hours (beyond the spec): an earmark "
        "in [opens, cutOff), a settlement in [opens, closes) of an operating day, local "
        "times of timeZone (IANA)"),
    "RtgsCalendarRequest": obj({"calendar": {"anyOf": [ref("RtgsCalendar"),
                                                       {"type": "null"}]}}, closed=True),
    "RtgsCalendarState": obj({"calendar": {"anyOf": [ref("RtgsCalendar"), {"type": "null"}]},
                              "rtgsConnection": enum("connected", "closed"),
                              "nextOpeningAt": NTS}),
    "ReceiverRequest": obj(
        {"url": text(2048), "status": {"type": "integer", "minimum": 100, "maximum": 599}},
        {"until": TS, "latencyMs": {"type": "integer", "minimum": 0, "maximum": 3_600_000},
         "lossRate": _PROBABILITY, "duplicateRate": _PROBABILITY}, closed=True),
    "Receiver": obj({"url": STR, "status": INT, "until": NTS,
                     "latencyMs": {"type": ["integer", "null"]}, "lossRate": NUM,
                     "duplicateRate": NUM}),
    "DeliveryAttempt": obj({
        "eventId": STR, "eventType": _EVENTS, "transactionId": UUID, "subscriptionId": STR,
        "url": STR, "attempt": INT, "at": TS,
        "request": obj({"headers": {"type": "object", "additionalProperties": STR},
                        "body": STR}),
        "response": {"type": ["object", "null"], "properties": {"status": INT}},
        "outcome": enum("delivered", "failed", "lost"), "fault": NSTR,
        "nextAttemptAt": NTS}),
    "Balances": obj({"participantId": UUID,
                     "wallets": {"type": "object", "additionalProperties": DECIMAL},
                     "rtgsBalanceGbp": DECIMAL, "rtgsEarmarkedGbp": DECIMAL}),
    "LogRecord": obj({"seq": INT, "at": TS, "atMs": INT, "kind": STR, "fields": ANY_OBJECT}),
    "Digest": obj({"digest": {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "records": INT,
                   "seed": INT}),
    "CheckpointRequest": obj({}, {"name": {"type": "string", "pattern": _CHECKPOINT_NAME}},
                             closed=True),
    "Checkpoint": obj({"name": STR, "at": TS, "atMs": INT,
                       "digest": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                       "entry": INT}),
    "RewindRequest": obj({"checkpoint": text(64)}, closed=True),
    "Rewound": obj({"name": STR, "at": TS, "atMs": INT, "digest": STR, "entry": INT,
                    "clock": ref("Clock")}),
    "OperatorSubscription": obj({"id": STR, "participantId": UUID, "url": STR,
                                 "events": array(_EVENTS), "status": enum("active", "disabled"),
                                 "deleted": BOOL, "signingSecret": STR}),
    "ReceiverConformanceRequest": obj({"url": text(2048, format="uri"), "secret": text(1000),
                                       "apiKey": text(200)},
                                      {"probeUrl": text(2048, format="uri")}, closed=True),
    "ConformanceReport": obj({
        "kit": STR, "target": STR, "passed": BOOL, "exitCode": INT,
        "counts": obj({"pass": INT, "fail": INT, "skip": INT}), "notes": array(STR),
        "score": obj({"passed": INT, "applicable": INT, "percent": {"type": ["number", "null"]},
                      "notApplied": array(obj({"id": STR, "reason": STR}))}),
        "durationMs": NUM, "virtualMs": {"type": ["number", "null"]},
        "checks": array(obj({"id": STR, "title": STR, "rule": STR,
                             "verdict": enum("pass", "fail", "skip"), "reason": STR,
                             "durationMs": NUM, "virtualMs": {"type": ["number", "null"]},
                             "evidence": ANY_OBJECT}))}),
}

_INSTANT = obj({"at": TS, "atMs": INT, "offsetMs": INT, "offset": STR},
               description="a virtual instant and its offset from the transaction's start")
_NINSTANT: Schema = {"anyOf": [_INSTANT, {"type": "null"}]}
_LEGS = array(obj({"leg": enum("burn", "mint"), "issuerId": UUID, "settlementMode": STR}))
#: the console's quiet reads (``http/stories.py``, ``clearing_sim/stories/story.py``)
_CONSOLE: dict[str, Schema] = {
    "TransactionRow": obj({
        "id": UUID, "paymentReference": STR, "useCase": STR, "lifecycleStatus": STR,
        "parked": BOOL, "terminal": BOOL, "reasonCode": NSTR, "initiatorId": UUID,
        "initiatedAt": TS, "updatedAt": TS,
        "sagaStep": obj({"current": INT, "name": STR, "total": INT}), "legs": _LEGS}),
    "StoryEntry": obj({"seq": INT, **_INSTANT["properties"], "lane": STR, "kind": STR,
                       "text": STR, "fields": ANY_OBJECT}),
    "StoryDelivery": obj({
        "eventId": STR, "eventType": _EVENTS, "subscriptionId": STR,
        **_INSTANT["properties"],
        "outcome": enum("delivered", "failed", "dropped", "pending"),
        "attempts": array(obj({**_OPERATOR["DeliveryAttempt"]["properties"],
                               **_INSTANT["properties"]})),
        "retriesToCome": array(obj({"attempt": INT, **_INSTANT["properties"],
                                    "onTheWire": BOOL, "afterDisableAt": BOOL})),
        "ending": {"anyOf": [obj({"kind": STR, **_INSTANT["properties"]}),
                             {"type": "null"}]}}),
    "Story": obj({
        "transactionId": STR, "start": _INSTANT, "now": _INSTANT,
        "transaction": {"type": ["object", "null"]},
        "entries": array(ref("StoryEntry")),
        "instructions": array(obj({"instructionId": STR, "issuerId": UUID, "leg": STR,
                                   "statuses": array(obj({"status": STR,
                                                          **_INSTANT["properties"]}))})),
        "deliveries": array(ref("StoryDelivery")),
        "subscriptions": array(obj({
            "id": STR, "participantId": UUID, "url": STR,
            "status": enum("active", "disabled"), "deleted": BOOL, "lastSuccess": _NINSTANT,
            "failingSince": _NINSTANT, "disableAt": _NINSTANT, "disabledAt": _NINSTANT,
            "pendingDeliveries": INT}))}),
    "Overview": obj({
        "clock": ref("Clock"), "seed": INT,
        "digest": {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "records": INT,
        "journal": BOOL, "checkpoints": array(ref("Checkpoint")),
        "participants": array(obj({
            "participantId": UUID, "participantKind": STR, "participantName": STR,
            "assets": array(ref("Asset")),
            "wallets": {"type": "object", "additionalProperties": DECIMAL},
            "rtgsBalanceGbp": DECIMAL, "rtgsEarmarkedGbp": DECIMAL}))}),
}

SCHEMAS: dict[str, Schema] = {**_API, **_OPERATOR, **_CONSOLE}
