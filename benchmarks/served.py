"""What the HTTP benchmarks share: a server started as a subprocess, and the redeem cast.

Not a benchmark itself. ``start`` runs a command that prints ``serving on URL`` first (as
``clearing-sim serve`` does) and returns the process and that URL; ``redeem_cast`` gives a
served world an issuer and a member through the operator surface and returns the member's
credential and the body of a redeem it can post again and again.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

import httpx

__all__ = ["redeem_cast", "start"]


def start(command: list[str], env: dict[str, str] | None = None
          ) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "NO_COLOR": "1", **(env or {})})
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"serving on (http://\S+)", line)
    if match is None:
        process.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return process, match.group(1)


def redeem_cast(base: str, token: str) -> tuple[dict[str, str], dict[str, Any]]:
    """(the member's ``Authorization`` header, a redeem body) for a fresh served world."""
    op = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, timeout=30) as http:
        issuer = http.post("/sim/v1/participants", headers=op, json={
            "kind": "stablecoin_issuer", "name": "Ether Pound",
            "rtgsBalanceGbp": "1000000000.00", "assets": [{"code": "GBPE", "ledger": "evm"}]})
        asset = issuer.json()["data"]["assets"][0]
        member = http.post("/sim/v1/participants", headers=op, json={
            "kind": "clearing_member", "name": "Northbank",
            "wallets": {"GBPE": "1000000000.00"}}).json()["data"]
    body = {"useCase": "redeem", "paymentReference": "BENCH",
            "source": {"amount": "10.00", "asset": asset},
            "target": {"amount": "10.00", "asset": {"code": "GBP"}}}
    return {"Authorization": f"Bearer {member['apiKey']}"}, body
