"""Loading is made cheaper (issue 30, section 3) without changing what it answers: every
shipped scenario file and test input loads to the very ``Scenario`` it loaded to before (a
fingerprint of its ``repr``, pinned from cec943b before the loader changed), and every YAML
file the project ships parses to the same ``Document`` (data, and the line and column of each
value and key). A loader that moves one mark or reads one value otherwise is shown failing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from clearing_sim.scenario import source
from clearing_sim.scenario.loader import load_scenario
from clearing_sim.scenario.source import Document, parse_yaml

ROOT = Path(__file__).resolve().parents[2]

#: sha256 of repr(load_scenario(path)), first 16 hex digits, from cec943b
SCENARIOS = {
    "scenarios/agent-expired.yaml": "20ff329332adb790",
    "scenarios/agent-outside-mandate.yaml": "0ea32a0dba498b65",
    "scenarios/agent-over-cap.yaml": "11c74912cb3db309",
    "scenarios/agent-revoked.yaml": "4e4daa5b93b7d50b",
    "scenarios/cancel-after-settlement-is-409.yaml": "93ebfacf580e1ca2",
    "scenarios/cancel-right-after-initiation-is-the-spec-cancelled-path.yaml": "b0ed668588f0f95a",
    "scenarios/cancelled-path.yaml": "1feb655fd2ff53b7",
    "scenarios/failed-parks-and-is-never-retried.yaml": "7088f5a7ba51237c",
    "scenarios/forged-issuer-webhooks-are-ignored.yaml": "7c75aeede03cbeba",
    "scenarios/idempotent-replay.yaml": "5a7df2248cfef5db",
    "scenarios/journal-walkthrough-redeem-park-fix.yaml": "70a633d78b458fa8",
    "scenarios/list-cursors-cannot-be-forged.yaml": "a9c78fc142b42cf9",
    "scenarios/mode-1-cannot-be-armed.yaml": "7b3016bcc9c22bf8",
    "scenarios/mode-2-issuers-settle-wherever-they-hold.yaml": "0b2a0413d2d4bf6e",
    "scenarios/mode-3-refund-keeps-details-true.yaml": "03df1d49b0a44c1e",
    "scenarios/operator-fix-re-enters-in-flight.yaml": "7ed007227194d81a",
    "scenarios/participant-scoping-is-404.yaml": "0c7df60df94ea024",
    "scenarios/production-sandbox-routes-are-503.yaml": "f29cf5d5b3be1708",
    "scenarios/profile-change-does-not-affect-in-flight.yaml": "f1011e08c6cf48d7",
    "scenarios/redeem-happy-path-mode-1.yaml": "7843782fa11b8efa",
    "scenarios/redeem-happy-path-mode-2.yaml": "d3a2d91ed5547d7c",
    "scenarios/redeem-happy-path-mode-3.yaml": "bc1cbc2b7a986605",
    "scenarios/rejected-redeem-unwinds.yaml": "e9ca293d85c9f80e",
    "scenarios/rejected-swap-mint-unwinds.yaml": "ae2505ccb9a31544",
    "scenarios/rtgs-calendar-friday-evening-redeem-settles-monday.yaml": "09d7ba76beb41f8f",
    "scenarios/silence-parks-exactly-at-sla.yaml": "c62ae566aefba58c",
    "scenarios/swap-happy-path-mode-1.yaml": "b8138b3d498f3fd7",
    "scenarios/swap-happy-path-mode-2.yaml": "9d1df1f5b533a4a7",
    "scenarios/swap-happy-path-mode-3.yaml": "70ed543921e2c2e5",
    "scenarios/webhook-deletion-keeps-queued-deliveries.yaml": "db6967093b0320e9",
    "scenarios/webhook-disabled-after-72h-of-failure.yaml": "082bf521aebd9484",
    "scenarios/webhook-duplicates-and-reordering-reference-receiver.yaml": "1e737d5c6da84ce7",
    "scenarios/webhook-retry-schedule.yaml": "bb7bd0736b984ae0",
    "scenarios/webhooks-reach-only-the-transactions-parties.yaml": "2827846505435eb5",
    "tests/scenario/inputs/every-expectation-kind.yaml": "b4ccf6026f5dc0c1",
    "tests/scenario/inputs/new-user-reversed-timing.yaml": "d4b562991f31bb25",
}

#: sha256 of the parsed Document (data in order; where ``locate`` places each value and key,
#: sorted), from cec943b
DOCUMENTS = {
    "scenarios/agent-expired.yaml": "8c5ed06140ce0404",
    "scenarios/agent-outside-mandate.yaml": "3705a1288789092d",
    "scenarios/agent-over-cap.yaml": "84f035f572ff4787",
    "scenarios/agent-revoked.yaml": "e6f0b6c69c0e2706",
    "scenarios/cancel-after-settlement-is-409.yaml": "9e5f2761c7b12b8f",
    "scenarios/cancel-right-after-initiation-is-the-spec-cancelled-path.yaml": "7c104b8575b9a609",
    "scenarios/cancelled-path.yaml": "740b31e2b2952e57",
    "scenarios/failed-parks-and-is-never-retried.yaml": "be41cbd75092a666",
    "scenarios/forged-issuer-webhooks-are-ignored.yaml": "99aa59b752153ba9",
    "scenarios/idempotent-replay.yaml": "37b8fdfbe3ba97f8",
    "scenarios/journal-walkthrough-redeem-park-fix.yaml": "15dbe596166dbcdc",
    "scenarios/list-cursors-cannot-be-forged.yaml": "3ef39c31fd64fe8e",
    "scenarios/mode-1-cannot-be-armed.yaml": "e41a4e47636fba78",
    "scenarios/mode-2-issuers-settle-wherever-they-hold.yaml": "b8ddbe925315f952",
    "scenarios/mode-3-refund-keeps-details-true.yaml": "3529585d1b7d9590",
    "scenarios/operator-fix-re-enters-in-flight.yaml": "d2f463c3dbd90a47",
    "scenarios/participant-scoping-is-404.yaml": "d887b9890b47e42d",
    "scenarios/production-sandbox-routes-are-503.yaml": "8112ed2f03ad1631",
    "scenarios/profile-change-does-not-affect-in-flight.yaml": "676e7313de277b73",
    "scenarios/redeem-happy-path-mode-1.yaml": "e350f4095a9d1699",
    "scenarios/redeem-happy-path-mode-2.yaml": "882b4695ca6cf152",
    "scenarios/redeem-happy-path-mode-3.yaml": "8aaab1201e7d92e1",
    "scenarios/rejected-redeem-unwinds.yaml": "d9918db1cfe55e1e",
    "scenarios/rejected-swap-mint-unwinds.yaml": "6ba60d227e16c9d9",
    "scenarios/rtgs-calendar-friday-evening-redeem-settles-monday.yaml": "07c15d941f23720a",
    "scenarios/silence-parks-exactly-at-sla.yaml": "7b26defb292fec27",
    "scenarios/swap-happy-path-mode-1.yaml": "d9fdcf3dad72f540",
    "scenarios/swap-happy-path-mode-2.yaml": "b673ba697447c0a0",
    "scenarios/swap-happy-path-mode-3.yaml": "fa1a944917a3663d",
    "scenarios/webhook-deletion-keeps-queued-deliveries.yaml": "a25ded731d4add13",
    "scenarios/webhook-disabled-after-72h-of-failure.yaml": "fc338139d858beb4",
    "scenarios/webhook-duplicates-and-reordering-reference-receiver.yaml": "91d8b13c11971e56",
    "scenarios/webhook-retry-schedule.yaml": "e7be9b8ca21b2a55",
    "scenarios/webhooks-reach-only-the-transactions-parties.yaml": "6a97ea919192c305",
    "tests/scenario/inputs/every-expectation-kind.yaml": "bbbbc1a5285d6d65",
    "tests/scenario/inputs/new-user-reversed-timing.yaml": "e3f4cdadc87b11a6",
    "tests/analysis/inputs/disable.yaml": "b68fe42b0e762d0d",
    "tests/analysis/inputs/gates_sweep.yaml": "edf67903d6a975fc",
    "tests/analysis/inputs/nine_series.yaml": "24d55a4e229f9ab7",
    "tests/analysis/inputs/sweep.yaml": "2ee24f255853096b",
    "tests/analysis/inputs/tiny.yaml": "f761752c598242c4",
    "tests/analysis/inputs/two_cases.yaml": "9514527c21a5149b",
    "tests/analysis/inputs/webhook_sweep.yaml": "18ab1e14a1ee7458",
    "notebooks/inputs/latency_sweep.yaml": "a2d0e420866df998",
    "notebooks/inputs/mixed.yaml": "75d5b0e63f4c8bb4",
    "notebooks/inputs/rtgs_hours.yaml": "1ed1784ee81926fa",
    "notebooks/inputs/rtgs_hours_sweep.yaml": "0cfd18fa46439cf0",
    "notebooks/inputs/webhook_sweep.yaml": "c8413181b610f822",
    "notebooks/inputs/webhooks.yaml": "00cd264a014d3f86",
    "reports/baseline/sweep.yaml": "c2396d808e94c1c3",
    "reports/baseline/workload.yaml": "1adb3251397353b1",
    "docs/examples/journal-world.yaml": "804cb0b2859d9258",
}


def _scenario_print(path: str) -> str:
    """The fingerprint of the scenario loaded as ``clearing-sim run`` names it (relative)."""
    return hashlib.sha256(repr(load_scenario(path)).encode()).hexdigest()[:16]


def _document_print(document: Document) -> str:
    """The data, and where ``locate`` places each value and each key (whatever form the
    document keeps its marks in)."""
    values = sorted((path, document.locate(path)) for path in document.values)
    keys = sorted(((path, document.locate(path, key=True)) for path in document.keys), key=repr)
    text = repr((document.path, document.data, values, keys))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _document(path: str) -> Document:
    return parse_yaml((ROOT / path).read_text("utf-8"), path)


def test_every_yaml_file_shipped_is_pinned() -> None:
    found = {str(p.relative_to(ROOT)) for folder in ("scenarios", "tests/scenario/inputs",
                                                     "tests/analysis/inputs", "notebooks/inputs",
                                                     "reports/baseline", "docs/examples")
             for p in (ROOT / folder).glob("*.yaml")}
    assert found == set(DOCUMENTS)


@pytest.mark.parametrize("path", sorted(SCENARIOS))
def test_each_scenario_loads_as_it_did(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert _scenario_print(path) == SCENARIOS[path]


@pytest.mark.parametrize("path", sorted(DOCUMENTS))
def test_each_file_parses_as_it_did(path: str) -> None:
    assert _document_print(_document(path)) == DOCUMENTS[path]


def test_a_loader_that_moves_one_mark_breaks_the_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant: one value's column one further right; the fingerprint sees it."""
    path = "scenarios/agent-expired.yaml"
    parse = source.parse_yaml

    def shifted(text: str, name: str) -> Document:
        document = parse(text, name)
        moved = dict(document.values)
        at = moved[("steps", 0)]
        moved[("steps", 0)] = SimpleNamespace(line=at.line, column=at.column + 1)
        return Document(document.path, document.data, moved, document.keys)

    monkeypatch.setattr(source, "parse_yaml", shifted)
    assert _document_print(source.parse_yaml((ROOT / path).read_text("utf-8"), path)) \
        != DOCUMENTS[path]
