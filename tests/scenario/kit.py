"""Helpers for the scenario tests: a small valid scenario and ways to load variants of it."""

from __future__ import annotations

import pytest

from clearing_sim.scenario.errors import ScenarioInvalid
from clearing_sim.scenario.loader import parse_scenario
from clearing_sim.scenario.model import Scenario

#: A valid scenario: one member, one Mode 2 issuer, a redeem that settles.
BASE = """\
scenario: base
world: {seed: 1}
members:
  northbank:
    name: Northbank
    wallets: {GBPE: "1000.00"}
issuers:
  etherpound:
    name: Ether Pound
    rtgs: "1000000.00"
    assets: [GBPE]
    profile:
      commitPoint: ON_INSTRUCTION
      preBurnTransferRequired: false
      custodyModel: POOLED_ISSUER_WALLET
      feedbackChannel: [POLLABLE_RESOURCE]
      fiatLeg: NUVANTE_SETTLES_RTGS
      ledger: evm
      apiBaseUrl: https://issuer.example/api
      approvalSlaSeconds: 600
steps:
  - name: initiate
    call:
      as: northbank
      method: POST
      path: /api/v1/transactions
      body:
        useCase: redeem
        paymentReference: INV-1
        source: {amount: "100.00", asset: "${GBPE}"}
        target: {amount: "100.00", asset: {code: GBP}}
    save: {tx: data.id}
    expect: {status: 201}
"""


def with_steps(steps: str, head: str = BASE) -> str:
    """``head`` followed by more steps (YAML text indented as list items under steps)."""
    return head + steps


def load(text: str, path: str = "s.yaml") -> Scenario:
    return parse_scenario(text, path)


def problems(text: str, path: str = "s.yaml") -> list[str]:
    """The rendered problems of ``text`` (``path:line:col: field: message``)."""
    with pytest.raises(ScenarioInvalid) as caught:
        parse_scenario(text, path)
    return caught.value.lines()
