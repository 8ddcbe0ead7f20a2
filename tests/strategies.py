"""Shared Hypothesis strategies: money amounts, wire amounts and issuer profile bodies.

Public names: ``amounts``, ``wire_amounts``, ``urls``, ``profile_bodies``, ``BAD_PROFILE_VALUES``.

Profile bodies use the wire field names of the spec's "Issuer capability profile" table and are
always valid; tests that need an invalid body mutate one with ``BAD_PROFILE_VALUES``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

__all__ = ["BAD_PROFILE_VALUES", "amounts", "profile_bodies", "urls", "wire_amounts"]


def amounts(places: int = 2, min_value: str | None = None,
            max_value: str = "1000000000") -> st.SearchStrategy[Decimal]:
    """Positive Decimals with exactly ``places`` decimal places (never a float)."""
    low = Decimal(min_value) if min_value is not None else Decimal(1).scaleb(-places)
    return st.decimals(min_value=low, max_value=Decimal(max_value), places=places,
                       allow_nan=False, allow_infinity=False)


def wire_amounts(places: int = 2, max_value: str = "1000000000") -> st.SearchStrategy[str]:
    """Wire amounts in plain notation with ``places`` decimals (``"100.00"``)."""
    return amounts(places, max_value=max_value).map(lambda d: f"{d:.{places}f}")


_HOST = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)


def urls() -> st.SearchStrategy[str]:
    """Absolute http(s) URLs of the shape an issuer declares (``https://x.example/api``)."""
    return st.builds(lambda scheme, host, path: f"{scheme}://{host}.example{path}",
                     st.sampled_from(["https", "http"]), _HOST,
                     st.sampled_from(["", "/", "/api", "/v1/issuer", "/api/"]))


@st.composite
def profile_bodies(draw: st.DrawFn, commit_point: str | None = None) -> dict[str, Any]:
    """A valid issuer capability profile body; ``commit_point`` fixes ``commitPoint``."""
    commit = commit_point or draw(st.sampled_from(["ON_OBSERVATION", "ON_INSTRUCTION"]))
    channels = draw(st.lists(st.sampled_from(["SIGNED_WEBHOOK", "POLLABLE_RESOURCE"]),
                             min_size=1, max_size=2, unique=True))
    body: dict[str, Any] = {
        "commitPoint": commit,
        "custodyModel": draw(st.sampled_from(["PER_MEMBER_ISSUER_WALLET",
                                              "POOLED_ISSUER_WALLET"])),
        "feedbackChannel": channels,
        "fiatLeg": draw(st.sampled_from(["NUVANTE_SETTLES_RTGS", "ISSUER_SETTLES_RTGS"])),
        "ledger": draw(st.sampled_from(["stellar", "evm", "solana"])),
    }
    instructs = commit == "ON_INSTRUCTION"
    if instructs or draw(st.booleans()):
        body["preBurnTransferRequired"] = draw(st.booleans())
    if instructs or draw(st.booleans()):
        body["apiBaseUrl"] = draw(urls())
    if (instructs and "SIGNED_WEBHOOK" in channels) or draw(st.booleans()):
        body["webhookUrl"] = draw(urls())
    optional: dict[str, st.SearchStrategy[Any]] = {
        "mintDeliveryTarget": st.just("REGISTERED_HANDLE"),
        "finalityClass": st.just("DETERMINISTIC"),
        "amountPrecision": st.integers(2, 18),
        "approvalSlaSeconds": st.integers(1, 604_800),
        "refundUrl": urls(),
    }
    for name, values in optional.items():
        if draw(st.booleans()):
            body[name] = draw(values)
    return body


#: For each profile field, values that field refuses on its own (each yields one problem).
BAD_PROFILE_VALUES: dict[str, list[Any]] = {
    "commitPoint": ["on_instruction", "ON_SETTLEMENT", 1, ["ON_INSTRUCTION"]],
    "preBurnTransferRequired": [1, 0, "true", "false", []],
    "custodyModel": ["self-custody", "mpc", "caas", "POOLED", 3],
    "feedbackChannel": [[], ["EMAIL"], ["SIGNED_WEBHOOK", "SIGNED_WEBHOOK"], "SIGNED_WEBHOOK",
                        [1], {"SIGNED_WEBHOOK": True}],
    "fiatLeg": ["OPERATOR_SETTLES_RTGS", "nuvante_settles_rtgs", True],
    "ledger": ["canton", "Stellar", "ethereum", 0],
    "apiBaseUrl": ["issuer.example/api", "ftp://issuer.example", "https://", "https://a b.example",
                   "", 42],
    "mintDeliveryTarget": ["WALLET", "registered_handle", 1],
    "finalityClass": ["PROBABILISTIC", "deterministic", 1],
    "amountPrecision": [1, 0, -2, 19, 2.0, "6", True, False],
    "approvalSlaSeconds": [0, -1, 604_801, 900.0, "900", True],
    "webhookUrl": ["mailto:ops@issuer.example", "//issuer.example/hooks", "", 7],
    "refundUrl": ["/treasury/refunds", "https://", 0.5],
}
