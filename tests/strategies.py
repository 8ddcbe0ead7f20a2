"""Shared Hypothesis strategies: money amounts, wire amounts and issuer profile bodies.

Public names: ``amounts``, ``wire_amounts``, ``urls``, ``profile_bodies``, ``BAD_PROFILE_VALUES``,
``hostile_texts``, ``hostile_json``, ``hostile_bodies``.

Profile bodies use the wire field names of the spec's "Issuer capability profile" table and are
always valid; tests that need an invalid body mutate one with ``BAD_PROFILE_VALUES``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

__all__ = ["BAD_PROFILE_VALUES", "amounts", "hostile_bodies", "hostile_json", "hostile_texts",
           "profile_bodies", "urls", "wire_amounts"]


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


# hostile input (issue 14) ----------------------------------------------------------------
_ODD_TEXTS = ["\ud800", "Evil\ud800", "\udfff\ud800", "e\u0301", "\u0000", "\ufeff",
              "\u202e", "é" * 300, "9" * 5000, "", " ", "\n", "💷", "a\udc80b"]


def hostile_texts(max_size: int = 30) -> st.SearchStrategy[str]:
    """Text with lone surrogates, unnormalised and control characters among ordinary ones."""
    chars = st.characters(codec=None) | st.characters(categories=["Cs"]) \
        | st.sampled_from(["\u0301", "\u0000", "é", "e"])
    return st.text(chars, max_size=max_size) | st.sampled_from(_ODD_TEXTS)


def hostile_json(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """JSON values of every type with hostile strings, keys and numbers."""
    scalars = (st.none() | st.booleans() | st.integers(-10**40, 10**40)
               | st.floats(allow_nan=False, allow_infinity=False) | hostile_texts())
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(hostile_texts(12), inner, max_size=5),
                        max_leaves=max_leaves)


HOSTILE_RAW = [b"{", b"\xff", b"[" * 3000, b'{"a":' * 3000, b'{"a":1,"a":2}',
        b'{"n":' + b"9" * 5000 + b"}", b'{"x":NaN}', b'{"x":1e999999}', b"\xed\xa0\x80",
        b'{"organisationName":"Evil\\ud800"}', b'{"paymentReference":"\\udfff"}',
        b'"just a string"', b"null", b"  ", b'{"a":"\\u0000"}']


def hostile_bodies(valid: st.SearchStrategy[dict[str, Any]] | None = None
                   ) -> st.SearchStrategy[bytes]:
    """Raw bodies: fixed hostile ones, arbitrary JSON (surrogates escaped, as an attacker
    sends them) and, given ``valid``, valid bodies with one field made hostile."""
    encoded = hostile_json().map(lambda v: json.dumps(v).encode())
    found = st.sampled_from(HOSTILE_RAW) | encoded
    if valid is not None:
        found = found | st.builds(_poison, valid, hostile_json(4), st.integers(0, 99))
    return found


def _poison(body: dict[str, Any], value: Any, choice: int) -> bytes:
    if body:
        names = sorted(body)
        body = {**body, names[choice % len(names)]: value}
    return json.dumps(body).encode()
