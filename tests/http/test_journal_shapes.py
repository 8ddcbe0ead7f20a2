"""A journal line whose CRC holds but whose shape the shim never writes (a CRC is no seal).

Every command path (restart by replay, ``journal show``, ``verify``, ``export``) either
succeeds or refuses the journal with ``JournalError`` naming the line, and the file's bytes
are never changed by a failed start. The Hypothesis test takes real journals, replaces one
field of one entry (the header included), anywhere inside it, with a hostile JSON value as
written text (``NaN``, ``1e400``, huge numbers, lone surrogates, nested values...), and
gives the line a valid CRC.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st

from clearing_sim.cli import main
from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.cli import load_world
from clearing_sim.http.export import ExportError, export_scenario
from clearing_sim.http.journal import (
    JournalError,
    JournalFile,
    decode_line,
    encode_line,
    read_journal,
)
from clearing_sim.http.journal_cli import read_existing, show_lines, start_journal
from clearing_sim.http.replay import open_journal, replay_copy
from clearing_sim.sim.world import Environment
from clearing_sim.webhooks import signature_header
from tests.http.conftest import ETHER_POUND_YAML, TOKEN, Client, held_receiver, redeem_body
from tests.strategies import hostile_json, hostile_texts

WORLD = """\
world: {seed: 7}
members:
  northbank: {name: Northbank, wallets: {GBPE: "1000.00"}}
""" + ETHER_POUND_YAML


class Recorded:
    """A journal as recorded, its lines as entries (crc dropped), and how it was served."""

    def __init__(self, path: Path, world: Path | None, options: dict[str, Any]) -> None:
        self.entries = [_entry(line) for line in path.read_bytes().splitlines()]
        self.world = world
        self.options = options
        self.cast = None if world is None else (
            world.name, hashlib.sha256(world.read_bytes()).hexdigest(),
            load_world(str(world)), yaml.safe_load(world.read_text()))


def _entry(line: bytes) -> dict[str, Any]:
    entry = decode_line(line)
    assert entry is not None
    return entry


def _session(folder: Path) -> Recorded:
    """A session against ``serve --world``: every entry kind but ``learned`` (API
    requests, one with an Idempotency-Key, one with a query, one refused; an operator
    request, an issuer webhook dropped, clock moves, a checkpoint and a rewind
    to it), most of it in the lineage."""
    world = folder / "world.yaml"
    world.write_text(WORLD)
    journal = folder / "session.jsonl"
    app = create_app(ServeOptions(operator_token=TOKEN), scenario=load_world(str(world)))
    open_journal(app, journal, (world.name, hashlib.sha256(world.read_bytes()).hexdigest()),
                 None)
    client = Client(app)
    staged = {s.key: s for s in client.sim.staged}
    member = {"Authorization": f"Bearer {staged['northbank'].api_key}"}
    cast = client.op("GET", "/sim/v1/participants").json()["data"]
    issuer = next(p for p in cast if p["participantName"] == "Ether Pound")
    first = client.post("/api/v1/transactions", headers={**member, "Idempotency-Key": "r-1"},
                        json=redeem_body(issuer["assets"][0], reference="INV-1"))
    assert first.status_code == 201, first.text
    client.advance(120)
    client.op("POST", "/sim/v1/checkpoints", {"name": "settled"})
    client.get("/api/v1/transactions", headers=member)  # a branch the rewind abandons
    client.op("POST", "/sim/v1/rewind", {"checkpoint": "settled"})
    client.op("POST", "/sim/v1/sessions", {"participantId": staged["northbank"].participant.id})
    assert client.post(f"/issuer-webhooks/{issuer['participantId']}", content=b"{}",
                       headers={"Service-Signature": "t=1,v1=00"}).status_code == 401
    assert client.post("/api/v1/transactions", content=b"x" * 5000, headers={
        **member, "Content-Type": "application/json"}).status_code == 400  # ``refused``
    assert client.get("/api/v1/transactions?limit=3", headers=member).status_code == 200
    client.advance(60)
    client.close()
    return Recorded(journal, world, {})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Recorded]]:
    folder = tmp_path_factory.mktemp("recorded")
    yield [_session(folder), _delivered(folder)]


_REAL: dict[str, Any] = {"deliver_webhooks": True, "allow_private_webhook_urls": True}


def _delivered(folder: Path) -> Recorded:
    """A session whose webhooks went to a real receiver: ``learned`` entries."""
    journal = folder / "delivered.jsonl"
    with held_receiver(held=False) as receiver:
        app = create_app(ServeOptions(operator_token=TOKEN, seed=3, **_REAL))
        open_journal(app, journal, None, None)
        client = Client(app)
        party = client.op("POST", "/sim/v1/participants", {
            "kind": "stablecoin_issuer", "name": "Ether Pound", "rtgsBalanceGbp": "1000.00",
            "assets": [{"code": "GBPE", "ledger": "evm"}]}).json()["data"]
        member = client.op("POST", "/sim/v1/participants", {
            "kind": "clearing_member", "name": "Northbank",
            "wallets": {"GBPE": "1000.00"}}).json()["data"]
        auth = {"Authorization": f"Bearer {member['apiKey']}"}
        hooked = client.post("/api/v1/webhooks", headers=auth, json={
            "url": receiver.url, "events": ["transaction.received", "transaction.settled"]})
        assert hooked.status_code == 201, hooked.text
        client.post("/api/v1/transactions", headers=auth,
                    json=redeem_body(party["assets"][0]))
        world = client.sim.world  # an issuer webhook taken (202): an ``issuer`` entry
        signed = b'{"instructionId":"00000000-0000-4000-8000-000000000000"}'
        header = signature_header(world.issuers[party["participantId"]].webhook_secret,
                                  signed, (world.epoch_ms + world.now_ms) // 1000)
        assert client.post(f"/issuer-webhooks/{party['participantId']}", content=signed,
                           headers={"Service-Signature": header}).status_code == 202
        client.advance(120)
        client.close()
    recorded = Recorded(journal, None, _REAL)
    assert any(e.get("k") == "learned" for e in recorded.entries)
    return recorded


#: numbers and values as written text (json.dumps writes neither 1e400 nor a lone surrogate)
_RAW = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1E400", "-0.0", "0.5", "1.0",
        "-1", "0", "1" + "0" * 30, str(1 << 63), str((1 << 63) - 1), "1000000000000", "true",
        "false", "null", "[]", "{}", '""', '" "', '"\\ud800"', '"a\\u0000b"', "[[]]",
        "[null,null]", '[["a","b","c"]]', "[[1,2]]", '[["a",1]]', '{"sealed":"AAAA"}',
        '{"sealed":"***"}', '[["Authorization",{"sealed":"' + "A" * 40 + '"}]]',
        '[[200,null],[200,null]]', '[[99,null]]', '[[200,5]]', '"/sim/v1/rewind"',
        '"/sim/v1/conformance/receivers"', '"/api/v1/../sim/v1/reset"', '"GET"', '"cp-1"',
        '"' + "f" * 64 + '"', '"' + "0" * 32 + '"', '"zz"', '{"file":null,"sha256":null}']
_HOSTILE = (st.sampled_from(_RAW)
            | hostile_json(6).map(lambda value: json.dumps(value, ensure_ascii=True))
            | st.integers().map(str)
            | st.floats().map(lambda value: json.dumps(value)))
_SPLICE = "\u0000splice\u0000"


def _line(entry: dict[str, Any], raw: str) -> bytes:
    """The entry as a checked line (as ``encode_line`` writes one), the spliced value's
    JSON replaced by ``raw`` first."""
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    body = text.replace(json.dumps(_SPLICE), raw).encode()
    return body[:-1] + b',"crc":"%08x"}\n' % zlib.crc32(body)


def _splice(value: Any, path: list[int]) -> tuple[Any, Any]:
    """``value`` with the element ``path`` leads to (an index into a list's items or a
    dict's keys at each level, modulo their number) made ``_SPLICE``; and that element."""
    if not path or not isinstance(value, list | dict) or not value:
        return _SPLICE, value
    if isinstance(value, list):
        at = path[0] % len(value)
        spliced, leaf = _splice(value[at], path[1:])
        return [spliced if i == at else item for i, item in enumerate(value)], leaf
    key = sorted(value)[path[0] % len(value)]
    spliced, leaf = _splice(value[key], path[1:])
    return {**value, key: spliced}, leaf


_TEXTS = ["/api/v1/transactions", "/sim/v1/reset", "/sim/v1/participants",
          "/issuer-webhooks/x", "GET", "POST", "DELETE", "Authorization", "content-type",
          "cp-1", "start", "0" * 16, "f" * 64, "limit", "-1", "{}", '{"seconds": 1}']


@st.composite
def _hostile(draw: st.DrawFn, leaf: Any) -> str | None:
    """JSON text to put in place of ``leaf``: often a value of its own type (so the line
    passes its shape check and the hostility reaches replay), else anything at all, or
    ``None``: the field removed."""
    if draw(st.integers(0, 3)):
        if isinstance(leaf, bool):
            return json.dumps(not leaf)
        if isinstance(leaf, int):
            return str(draw(st.integers(-1, 10**7) | st.integers() | st.just(leaf + 1)))
        if isinstance(leaf, str):
            return json.dumps(draw(hostile_texts() | st.sampled_from(_TEXTS)
                                   | st.text(alphabet=leaf or "x")), ensure_ascii=True)
    return draw(_HOSTILE | st.none())


@st.composite
def poisoned(draw: st.DrawFn, recorded: Recorded) -> bytes:
    """The recorded journal's lines with one field of one line (anywhere inside it) made
    hostile, that line's CRC valid."""
    entries = recorded.entries
    at = draw(st.integers(0, len(entries) - 1))
    entry = entries[at]
    name = draw(st.sampled_from(sorted(entry)))
    spliced, leaf = _splice(entry[name], draw(st.lists(st.integers(0, 99), max_size=3)))
    raw = draw(_hostile(leaf))
    if raw is None:  # the field removed
        line = encode_line({k: v for k, v in entry.items() if k != name})
    else:
        line = _line({**entry, name: spliced}, raw)
    return b"".join(line if i == at else encode_line(e) for i, e in enumerate(entries))


def _said(what: str) -> None:
    """What a path did, in the Hypothesis statistics (--hypothesis-show-statistics)."""
    if currently_in_test_context():
        event(what)


def every_path(recorded: Recorded, path: Path) -> None:
    """Each command's function on the journal at ``path``: it succeeds or raises
    ``JournalError`` (``ExportError`` for export's own refusals), and the bytes stay."""
    before = path.read_bytes()
    try:
        read = read_journal(path)
    except JournalError:
        _said("refused as it is read")
        assert path.read_bytes() == before
        return
    assert list(show_lines(read))  # journal show: never a refusal once read
    world = None if recorded.cast is None else recorded.cast[:3]
    for name, command in (
            ("verify", lambda: replay_copy(read, TOKEN, world)),
            ("export", lambda: export_scenario(read, TOKEN, recorded.cast, "poisoned"))):
        try:
            command()
            _said(f"{name}: done")
        except (JournalError, ExportError) as error:
            _said(f"{name}: refused, {type(error).__name__}")
        assert path.read_bytes() == before
    _restart(recorded, read, path, before)


def _start(recorded: Recorded, read: JournalFile, path: Path) -> None:
    """``serve --journal`` on the journal: the options it takes from the journal's header
    when the command line leaves them out (``cli.serve``), then ``open_journal``; the
    journal closed again when it started."""
    world = None if recorded.world is None else load_world(str(recorded.world))
    environment = None if world is not None else Environment(read.header.environment)
    app = create_app(ServeOptions(operator_token=TOKEN, seed=read.header.seed,
                                  environment=environment, **recorded.options),
                     scenario=world)
    open_journal(app, path, None if recorded.cast is None else recorded.cast[:2], read)
    app.state.sim.journal.writer.close()


def _restart(recorded: Recorded, read: JournalFile, path: Path, before: bytes) -> None:
    try:
        _start(recorded, read, path)
    except JournalError:
        _said("restart: refused")
        assert path.read_bytes() == before, "a failed start changed the journal"
        return
    _said("restart: done")
    assert path.read_bytes().startswith(before)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_field_of_any_entry_made_hostile_is_replayed_or_refused(
        recorded: list[Recorded], data: st.DataObject) -> None:
    chosen = data.draw(st.sampled_from(recorded))
    with tempfile.TemporaryDirectory() as folder:
        journal = Path(folder) / "poisoned.jsonl"
        journal.write_bytes(data.draw(poisoned(chosen)))
        every_path(chosen, journal)


def test_the_recorded_journals_replay_unpoisoned(recorded: list[Recorded],
                                                 tmp_path: Path) -> None:
    """The base of the Hypothesis test: each journal, as recorded, passes every path."""
    for n, base in enumerate(recorded):
        path = tmp_path / f"{n}.jsonl"
        path.write_bytes(b"".join(encode_line(e) for e in base.entries))
        read = read_journal(path)
        world = None if base.cast is None else base.cast[:3]
        replay_copy(read, TOKEN, world)
        if base.cast is not None:
            export_scenario(read, TOKEN, base.cast, "base")
        _restart(base, read, path, path.read_bytes())


# The instances the Hypothesis test generalises, through the command line -----------------
def _kind(entries: list[dict[str, Any]], kind: str) -> int:
    return next(i for i, e in enumerate(entries) if e.get("k") == kind)


def _changed(which: str, **fields: Any) -> Any:
    """A journal with the first entry of kind ``which`` (``header``: line 1) changed."""
    def make(entries: list[dict[str, Any]]) -> tuple[bytes, int]:
        i = 0 if which == "header" else _kind(entries, which)
        changed = [*entries]
        changed[i] = {k: v for k, v in {**entries[i], **fields}.items() if v is not _GONE}
        return b"".join(encode_line(e) for e in changed), i + 1
    return make


def _raw(which: str, field: str, raw: str) -> Any:
    """A journal with a field of the first entry of kind ``which`` written as ``raw``."""
    def make(entries: list[dict[str, Any]]) -> tuple[bytes, int]:
        i = 0 if which == "header" else _kind(entries, which)
        lines = [encode_line(e) for e in entries]
        lines[i] = _line({**entries[i], field: _SPLICE}, raw)
        return b"".join(lines), i + 1
    return make


def _appended(**entry: Any) -> Any:
    def make(entries: list[dict[str, Any]]) -> tuple[bytes, int]:
        last = entries[-1]
        added = {"n": last["n"] + 1, **entry, "at": last["at"]}
        return b"".join(encode_line(e) for e in [*entries, added]), len(entries) + 1
    return make


_GONE = object()
_FORGED = "QUJD" * 12  # well formed (48 bytes), sealed under no key of ours
#: (what is wrong, how the journal is made, the field the refusal names; None: the shape
#: is right and replay refuses it)
INSTANCES = [
    ("headers a string", _changed("api", headers="x"), "headers"),
    ("headers of three", _changed("api", headers=[[1, 2, 3]]), "headers"),
    ("query a string", _changed("api", query="x"), "query"),
    ("sealed not base64", _changed("api", headers=[["authorization", {"sealed": "***"}]]),
     "headers"),
    ("sealed too short", _changed("api", headers=[["authorization", {"sealed": "AAAA"}]]),
     "headers"),
    ("sealed under another key", _changed("api", headers=[["authorization",
                                                            {"sealed": _FORGED}]]), None),
    ("steps 10**12", _changed("clock", steps=10**12), "steps"),
    ("steps a string", _changed("clock", steps="a"), "steps"),
    ("steps past the world's events", _changed("clock", steps=10**6), None),
    ("n a string", _changed("api", n="x"), "n"),
    ("rewind naming no checkpoint", _changed("rewind", to=_GONE, checkpoint="nope"), "to"),
    ("rewind to an unknown checkpoint", _changed("rewind", to="nope"), None),
    ("dropped without its issuer", _changed("dropped", issuerId=_GONE), "issuerId"),
    ("refused with a 2xx status", _changed("refused", status=201), "status"),
    ("seed 1e400", _raw("header", "seed", "1e400"), "seed"),
    ("salt not hex", lambda entries: _changed(
        "header", keyMaterial={**entries[0]["keyMaterial"], "salt": "zz"})(entries), "salt"),
    ("environment moon", _changed("header", environment="moon"), "environment"),
    ("clock sundial", _changed("header", clock="sundial"), "clock"),
    ("speed NaN", _raw("header", "speed", "NaN"), "speed"),
    ("speed -1", _changed("header", speed=-1), "speed"),
    ("at a string", _changed("api", at="x"), "at"),
    ("path null", _changed("api", path=None), "path"),
    ("outcomes a string", _appended(k="deliveries", outcomes="x"), "outcomes"),
    ("learned outcomes a string", _appended(k="learned", outcomes="x"), "outcomes"),
    ("learned without its seq", _appended(k="learned", outcomes=[[200, None]]), "outcomes"),
    ("learned seq negative", _appended(k="learned", outcomes=[[-1, 200, None]]), "outcomes"),
]


def _serve_exit(path: Path, world: Path) -> int:
    """What ``serve --world W --journal J`` does before it listens (``cli.serve``:
    ``read_existing``, the app, ``start_journal``): its exit code, 0 when it would listen."""
    try:
        existing = read_existing(str(path))
        app = create_app(ServeOptions(operator_token=TOKEN, seed=None if existing is None
                                      else existing.header.seed),
                         scenario=load_world(str(world)))
        start_journal(app, path, str(world), existing, token_given=True)
    except click.exceptions.Exit as exit_:
        return int(exit_.exit_code)
    app.state.sim.journal.writer.close()
    return 0


@pytest.mark.parametrize(("problem", "make", "field"), INSTANCES,
                         ids=[problem for problem, _, _ in INSTANCES])
def test_each_command_refuses_a_hand_made_line_with_exit_2(
        recorded: list[Recorded], tmp_path: Path, problem: str, make: Any,
        field: str | None) -> None:
    """Each was a traceback (exit 1) from at least one of show, verify, export and a
    restart; a malformed line is now refused as it is read, naming its line and field."""
    base = recorded[0]
    assert base.world is not None
    data, line = make(base.entries)
    path = tmp_path / "hand-made.jsonl"
    path.write_bytes(data)
    world = str(base.world)
    runner = CliRunner()
    shown = runner.invoke(main, ["journal", "show", str(path)])
    results = [runner.invoke(main, ["journal", *command, str(path), "--operator-token", TOKEN,
                                    "--world", world])
               for command in (["verify"], ["export", "--scenario", str(tmp_path / "o.yaml")])]
    for result in (shown, *results):
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            result.exc_info
        assert "Traceback" not in result.output
    assert [r.exit_code for r in results] == [2, 2], [r.output for r in results]
    assert _serve_exit(path, base.world) == 2
    if field is not None:
        assert shown.exit_code == 2
        assert f"{path}:{line}:" in shown.output and field in shown.output, shown.output
    assert path.read_bytes() == data


def test_a_failed_start_leaves_a_torn_tail_where_it_was(recorded: list[Recorded],
                                                       tmp_path: Path) -> None:
    """A journal whose replay is refused is not touched, not even to cut its torn tail
    (which a start that goes on to serve does)."""
    base = recorded[0]
    entries = [*base.entries]
    api = _kind(entries, "api")
    entries[api] = {**entries[api], "status": 500}  # it was answered 201: replay diverges
    data = b"".join(encode_line(e) for e in entries) + b'{"n":99,"k":"api","at":5000,"me'
    path = tmp_path / "torn.jsonl"
    path.write_bytes(data)
    read = read_journal(path)
    assert read.torn_bytes
    with pytest.raises(JournalError, match="answered 500 then, 201"):
        _start(base, read, path)
    assert path.read_bytes() == data


@pytest.mark.parametrize("seed", [-1, None], ids=["a negative seed (serve --seed -1)",
                                                   "no entries"])
def test_export_of_a_well_formed_journal_no_scenario_expresses_is_refused(
        tmp_path: Path, seed: int | None) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    path = tmp_path / "j.jsonl"
    sha = hashlib.sha256(world.read_bytes()).hexdigest()
    app = create_app(ServeOptions(operator_token=TOKEN, seed=seed),
                     scenario=load_world(str(world)))
    open_journal(app, path, (world.name, sha), None)
    client = Client(app)
    if seed is not None:
        client.advance(60)
    client.close()
    app.state.sim.journal.writer.close()
    cast = (world.name, sha, load_world(str(world)), yaml.safe_load(WORLD))
    with pytest.raises(ExportError, match="cannot be a scenario file"):
        export_scenario(read_journal(path), TOKEN, cast, "x")


@pytest.mark.parametrize("status", [100, 200, 599, 799, 999])
def test_a_real_receivers_status_of_any_three_digits_is_journaled_as_read_back(
        tmp_path: Path, status: int) -> None:
    """A receiver may answer any status from 100 to 999 (h11 takes them; httpx reports
    them): the reader took 100-599 only, so one receiver answering 799 locked the served
    world out of its restart, show, verify and export (found by review)."""
    path = tmp_path / "j.jsonl"
    app = create_app(ServeOptions(operator_token=TOKEN, seed=3))
    open_journal(app, path, None, None)
    app.state.sim.journal.learned(0, [(0, status, None), (1, status, "a reason")])
    app.state.sim.journal.writer.close()
    [(_, entry)] = read_journal(path).entries
    assert entry["outcomes"] == [[0, status, None], [1, status, "a reason"]]
