"""Workload files: typed values from a valid file, every problem of a bad one at its line."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.analysis import load_workload
from clearing_sim.analysis.loader import parse_workload
from clearing_sim.analysis.model import Amount, Outage
from clearing_sim.analysis.sweepfile import load_sweep
from clearing_sim.domain.latency import LogNormal
from clearing_sim.domain.money import GBP, parse_amount
from clearing_sim.domain.profile import SettlementMode
from clearing_sim.scenario.errors import ScenarioInvalid, ScenarioNotFound, ScenarioUnreadable
from tests.analysis.conftest import INPUTS, TINY
from tests.analysis.kit import TINY_TEXT, variant, workload_problems


def test_a_valid_file_becomes_typed_values() -> None:
    workload = load_workload(TINY)
    assert workload.name == "tiny" and workload.horizon_ms == 3_600_000
    assert workload.drain_ms is None and workload.epoch == "2026-01-01T00:00:00.000Z"
    stellar, ether = workload.issuers
    assert stellar.profile is not None and stellar.profile.mode is SettlementMode.MODE_1
    assert ether.profile is not None and ether.profile.mode is SettlementMode.MODE_2
    assert ether.behaviour.p_silence == 0.1
    assert ether.behaviour.approval_latency == LogNormal(30_000, 0.5, 600_000)
    (member,) = workload.members
    assert member.arrivals.rate_per_hour == 24 and member.arrivals.intraday is None
    assert member.assets == (("GBPS", 1.0), ("GBPE", 1.0))  # the wallets, equal weights
    assert member.mix == (("redeem", 3.0), ("swap", 1.0))
    assert member.amount == Amount("uniform", low=Decimal("10.00"), high=Decimal("500.00"))
    (hook,) = workload.webhooks
    assert hook.receiver.loss == 0.05 and hook.receiver.outages == (Outage(0, 1_200_000),)
    assert hook.site.endswith("tiny.yaml:34:5: webhooks.treasury")


ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted([*ROOT.joinpath("notebooks", "inputs").glob("*.yaml"),
                  *ROOT.joinpath("reports", "baseline").glob("*.yaml"), *INPUTS.glob("*.yaml")])


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_workload_and_sweep_files_load(path: Path) -> None:
    if "sweep" in yaml.safe_load(path.read_text(encoding="utf-8")):
        assert load_sweep(path).params
    else:
        load_workload(path)


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("horizon: 1h", "horizon: 1x",
     ':4:10: horizon: expected a duration like 250ms, 90s, 15m, 72h or 2d, got the string "1x"'),
    ("    arrivals: {rate_per_hour: 24}", "    arrivals: {rate_per_hour: 24, burst: 3}",
     ":29:35: members.northbank.arrivals.burst: unknown field 'burst'; expected one of: "
     "intraday, rate_per_hour"),
    ('GBPE: "1000000.00"}', 'GBPX: "1000000.00"}',
     ":28:35: members.northbank.wallets.GBPX: no issuer in this file issues 'GBPX'"),
    ("outcomes: {rejected: 0.1, failed: 0.1, silence: 0.1}",
     "outcomes: {rejected: 0.5, failed: 0.5, silence: 0.1}",
     ":24:17: issuers.etherpound.behaviour.outcomes: expected outcome probabilities that add "
     "up to 1 at most"),
    ("outages: [{from: 0s, until: 20m}]", "outages: [{from: 30m, until: 20m}]",
     ":39:36: webhooks.treasury.receiver.outages[0].until: expected an outage to end after "
     "it starts (30m)"),
    ("    participant: northbank", "    participant: southbank",
     ":34:18: webhooks.treasury.participant: 'southbank' is not a participant of this file"),
    ("preBurnTransferRequired: false,", "",
     ":17:14: issuers.etherpound.profile.preBurnTransferRequired: invalid profile (required)"),
    ('{uniform: ["10.00", "500.00"]}', '{uniform: ["500.00", "10.00"]}',
     ":31:23: members.northbank.amount.uniform: expected the lower amount first"),
    ('{uniform: ["10.00", "500.00"]}', '{uniform: [10.00, "10.00"]}',
     ':31:24: members.northbank.amount.uniform[0]: expected a decimal amount written as a '
     'string, like "100.00", got the number 10.0'),
    ("    mix: {redeem: 3, swap: 1}", "    mix: {redeem: 0, swap: 0}",
     ":30:10: members.northbank.mix: expected a weight above 0 for redeem or swap"),
    ("    mix: {redeem: 3, swap: 1}", "    mix: {swap: 1}\n    assets: {GBPS: 1}",
     ":30:17: members.northbank.mix.swap: a swap needs a second asset to swap into"),
    ("    arrivals: {rate_per_hour: 24}", "    arrivals: {rate_per_hour: 24, intraday: [1, 2]}",
     ":29:45: members.northbank.arrivals.intraday: expected 24 multipliers of the rate, one "
     "per hour of the day (UTC); [1, 2] is too short"),
    ("workload: tiny", "workload: tiny\nworkload: again",
     ":4:1: workload: duplicate key 'workload' (first at line 3)"),
    ("horizon: 1h", "horizon: [1h", ":5:8: YAML syntax: while parsing a flow sequence"),
    ("silence: 0.1}", "silense: 0.1}",
     ":24:46: issuers.etherpound.behaviour.outcomes.silense: unknown field 'silense' (did you "
     "mean silence?); expected one of: failed, rejected, silence"),
    ("latency: {approval:", "latency: {aproval:",
     ":23:17: issuers.etherpound.behaviour.latency.aproval: unknown field 'aproval' (did you "
     "mean approval?)"),
    ("    name: Northbank", "    name: Ether Pound",
     ":27:11: members.northbank.name: participantName 'Ether Pound' is also etherpound's"),
])
def test_each_problem_is_reported_at_its_line(tmp_path: Path, old: str, new: str,
                                              expected: str) -> None:
    found = workload_problems(variant(tmp_path, old, new))
    assert len(found) == 1, found
    assert found[0].startswith(str(tmp_path / "w.yaml") + expected), found[0]


def test_every_problem_of_a_file_is_reported_together_in_line_order(tmp_path: Path) -> None:
    path = variant(tmp_path, "horizon: 1h", "horizon: 1x")
    path.write_text(path.read_text().replace("participant: northbank", "participant: nobody"))
    found = workload_problems(path)
    assert [line.split(":")[1] for line in found] == ["4", "34"], found


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioNotFound):
        load_workload(tmp_path / "nope.yaml")
    with pytest.raises(ScenarioUnreadable):
        load_workload(tmp_path)
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe")
    with pytest.raises(ScenarioUnreadable, match="not UTF-8"):
        load_workload(tmp_path / "bin.yaml")


TINY_AMOUNT = 'amount: {uniform: ["10.00", "500.00"]}'


def test_a_lognormal_amount_with_a_median_of_zero_is_refused_at_its_line(
        tmp_path: Path) -> None:
    """A log-normal amount's median is above 0 (its log is the distribution's mean): a
    median of 0 is refused when the file is read, at the median's line, not by a math
    domain error in the middle of a run."""
    path = variant(tmp_path, TINY_AMOUNT,
                   'amount: {lognormal: {median: "0.00", sigma: 1, max: "250000.00"}}')
    assert workload_problems(path) == [
        f"{path}:31:34: members.northbank.amount.lognormal.median: expected a median above "
        "0, got 0.00"]


_EDGE_AMOUNTS = ["0", "0.00", "0.01", "0.001", "1", "100.00", "0." + "0" * 17 + "1",
                 "0." + "0" * 18 + "1", "0." + "0" * 400 + "1", "9" * 18 + ".99",
                 "1" + "0" * 18, "9" * 30, "1" + "0" * 400]
_AMOUNT_TEXTS = st.sampled_from(_EDGE_AMOUNTS) | st.builds(
    lambda whole, part: whole if part is None else f"{whole}.{part}",
    st.text("0123456789", min_size=1, max_size=24),
    st.none() | st.text("0123456789", min_size=1, max_size=24))
_NUMBERS = (st.integers(-1, 10**6) | st.floats(-1.0, 12.0)
            | st.floats(-1.0, 1.7e308, allow_nan=False))


def _number(value: float) -> str:
    """A YAML number (a float with a point and a signed exponent, as YAML 1.1 reads one)."""
    return str(value) if isinstance(value, int) else f"{value:.17e}"


@st.composite
def amount_specs(draw: st.DrawFn) -> str:
    """An amount distribution as a workload file writes it, any of its parameters any
    decimal string or number."""
    def amount() -> str:
        return json.dumps(draw(_AMOUNT_TEXTS))

    kind = draw(st.sampled_from(["plain", "fixed", "uniform", "lognormal", "choice"]))
    if kind == "plain":
        return amount()
    if kind == "fixed":
        return f"{{fixed: {amount()}}}"
    if kind == "uniform":
        return f"{{uniform: [{amount()}, {amount()}]}}"
    if kind == "lognormal":
        fields = [f"median: {amount()}"]
        if draw(st.booleans()):
            fields.append(f"sigma: {_number(draw(_NUMBERS))}")
        fields += [f"{name}: {amount()}" for name in ("min", "max") if draw(st.booleans())]
        return f"{{lognormal: {{{', '.join(fields)}}}}}"
    weights = draw(st.lists(_NUMBERS, min_size=1, max_size=4))
    choices = ", ".join(f"{amount()}: {_number(weight)}" for weight in weights)
    return f"{{choice: {{{choices}}}}}"


@settings(max_examples=300, deadline=None)
@given(spec=amount_specs(), seed=st.integers(0, 2**32))
def test_every_amount_distribution_is_refused_at_load_or_sampled_without_error(
        spec: str, seed: int) -> None:
    """Any amount distribution a workload file may write is either refused when the file is
    read (every problem at the amount's own field) or sampled without error, each draw an
    amount the API takes (a positive decimal of 2 places, at most 18 digits before the
    point)."""
    text = TINY_TEXT.replace(TINY_AMOUNT, f"amount: {spec}")
    try:
        workload = parse_workload(text, "w.yaml")
    except ScenarioInvalid as error:
        assert all(": members.northbank.amount" in line for line in error.lines()), \
            error.lines()
        return
    rng = random.Random(seed)
    for _ in range(100):
        value = workload.members[0].amount.sample(rng)
        assert parse_amount(f"{value:f}", GBP).amount == value
