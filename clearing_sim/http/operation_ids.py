"""Every operation's ``operationId`` in the OpenAPI document, in the spec's words.

Public names: ``OPERATION_IDS``, ``operation_id``.

A generated client names its functions after these (``initiate_transaction``,
``get_transaction``, ``arm_conformance_scenario``), so they follow the spec's verbs: initiate,
cancel, generate, verify, revoke, arm. A route missing here falls back to a name built from
its method and path (``getApiV1Things``); a test checks that no route of the three tables
(``/api/v1``, ``/sim/v1``, the inbound ``/issuer-webhooks``) does.
"""

from __future__ import annotations

import re

__all__ = ["OPERATION_IDS", "operation_id"]

OPERATION_IDS: dict[tuple[str, str], str] = {
    # /api/v1: the service's public API
    ("GET", "/api/v1/system/status"): "getSystemStatus",
    ("POST", "/api/v1/tools/integration-path"): "getIntegrationPath",
    ("POST", "/api/v1/onboarding/applications"): "submitOnboardingApplication",
    ("POST", "/api/v1/transactions"): "initiateTransaction",
    ("GET", "/api/v1/transactions"): "listTransactions",
    ("GET", "/api/v1/transactions/{id}"): "getTransaction",
    ("POST", "/api/v1/transactions/{id}/cancel"): "cancelTransaction",
    ("GET", "/api/v1/transactions/{id}/recovery-status"): "getRecoveryStatus",
    ("POST", "/api/v1/reserves/{issuerId}/proof/generate"): "generateReserveProof",
    ("GET", "/api/v1/reserves/{issuerId}/proof"): "getReserveProof",
    ("POST", "/api/v1/reserves/proof/verify"): "verifyReserveProof",
    ("POST", "/api/v1/sandbox/agents"): "mintAgent",
    ("GET", "/api/v1/sandbox/agents"): "listAgents",
    ("GET", "/api/v1/sandbox/agents/{agentId}"): "getAgent",
    ("POST", "/api/v1/sandbox/agents/{agentId}/revoke"): "revokeAgent",
    ("POST", "/api/v1/webhooks"): "createWebhookSubscription",
    ("GET", "/api/v1/webhooks"): "listWebhookSubscriptions",
    ("GET", "/api/v1/webhooks/{id}"): "getWebhookSubscription",
    ("DELETE", "/api/v1/webhooks/{id}"): "deleteWebhookSubscription",
    ("PUT", "/api/v1/issuers/{issuerId}/capabilities"): "putIssuerCapabilityProfile",
    ("POST", "/api/v1/issuers/{issuerId}/custody/verify-delegation"): "verifyCustodyDelegation",
    ("POST", "/api/v1/issuers/{issuerId}/conformance/run"): "runIssuerConformance",
    ("GET", "/api/v1/issuers/{issuerId}/conformance/results"): "getIssuerConformanceResults",
    ("POST", "/api/v1/conformance/run"): "armConformanceScenario",
    ("POST", "/api/v1/team/invitations"): "inviteTeamMember",
    # /sim/v1: the simulator's operator surface
    ("GET", "/sim/v1/health"): "getHealth",
    ("GET", "/sim/v1/clock"): "getClock",
    ("POST", "/sim/v1/clock/advance"): "advanceClock",
    ("POST", "/sim/v1/reset"): "resetWorld",
    ("POST", "/sim/v1/operator/transactions/{id}/resolve"): "resolveParkedTransaction",
    ("GET", "/sim/v1/operator/issuers/{issuerId}/behaviour"): "getIssuerBehaviour",
    ("PUT", "/sim/v1/operator/issuers/{issuerId}/behaviour"): "setIssuerBehaviour",
    ("PUT", "/sim/v1/operator/issuers/{issuerId}/gateway"): "putIssuerOnRealGateway",
    ("PUT", "/sim/v1/receivers"): "setReceiver",
    ("POST", "/sim/v1/participants"): "addParticipant",
    ("GET", "/sim/v1/participants"): "listParticipants",
    ("POST", "/sim/v1/sessions"): "createPortalSession",
    ("POST", "/sim/v1/api-keys"): "issueApiKey",
    ("GET", "/sim/v1/deliveries"): "listDeliveries",
    ("GET", "/sim/v1/balances"): "getBalances",
    ("GET", "/sim/v1/log"): "readEventLog",
    ("GET", "/sim/v1/digest"): "getDigest",
    ("GET", "/sim/v1/webhooks"): "listSubscriptionSecrets",
    ("POST", "/sim/v1/conformance/receivers"): "runReceiverConformance",
    ("POST", "/sim/v1/checkpoints"): "createCheckpoint",
    ("GET", "/sim/v1/checkpoints"): "listCheckpoints",
    ("POST", "/sim/v1/rewind"): "rewindToCheckpoint",
    ("GET", "/sim/v1/rtgs/calendar"): "getRtgsCalendar",
    ("PUT", "/sim/v1/rtgs/calendar"): "setRtgsCalendar",
    ("GET", "/sim/v1/transactions"): "listTransactionsQuietly",
    ("GET", "/sim/v1/transactions/{id}/story"): "getTransactionStory",
    ("GET", "/sim/v1/overview"): "getOverview",
    ("GET", "/sim/v1/tail"): "readEventLogTail",
    # the shim's inbound door for real issuers
    ("POST", "/issuer-webhooks/{issuerId}"): "receiveIssuerStatusWebhook",
}


def operation_id(method: str, template: str) -> str:
    """The route's name from ``OPERATION_IDS``, else one built from its method and path."""
    known = OPERATION_IDS.get((method, template))
    if known is not None:
        return known
    words = re.findall(r"[A-Za-z0-9]+", template)
    return method.lower() + "".join(w[:1].upper() + w[1:] for w in words)
