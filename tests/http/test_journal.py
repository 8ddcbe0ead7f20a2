"""The journal file: checked lines, torn tails, damage, and any bytes at all (Hypothesis)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.http import ServeOptions, create_app
from clearing_sim.http.journal import (
    JournalError,
    JournalWriter,
    decode_line,
    encode_line,
    read_journal,
)
from clearing_sim.http.options import ClockMode
from tests.http.conftest import OP
from tests.http.test_replay import digest, journaled

_ENTRIES = st.dictionaries(st.text(max_size=8).filter(lambda key: key != "crc"),
                           st.one_of(st.integers(), st.text(max_size=20), st.none()),
                           min_size=1, max_size=5)


@given(_ENTRIES)
def test_a_line_decodes_to_its_entry(entry: dict[str, object]) -> None:
    line = encode_line(entry)
    assert line.endswith(b"\n") and decode_line(line) == entry


@given(_ENTRIES, st.integers(min_value=1, max_value=40))
def test_any_cut_of_a_line_is_torn(entry: dict[str, object], cut: int) -> None:
    line = encode_line(entry).rstrip(b"\n")
    assert decode_line(line[:-cut] if cut < len(line) else b"") is None


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=300), st.integers(min_value=0, max_value=400))
def test_any_bytes_are_read_or_refused_never_a_crash(tmp_path_factory: object, junk: bytes,
                                                     at: int) -> None:
    """Whatever is in the file: a journal, or JournalError with the reason."""
    folder = Path(tmp_path_factory.mktemp("j"))  # type: ignore[attr-defined]
    path = folder / "j.jsonl"
    client, _ = journaled(path)
    client.advance(1)
    client.close()
    good = path.read_bytes()
    path.write_bytes(good[:at] + junk + good[at:])
    try:
        read = read_journal(path)
    except JournalError:
        return
    assert read.end_offset <= len(good) + len(junk)


def test_the_writer_truncates_a_torn_tail_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(encode_line({"a": 1}) + b'{"half')
    writer = JournalWriter(path, truncate_at=len(encode_line({"a": 1})))
    writer.append({"b": 2})
    writer.close()
    assert path.read_bytes() == encode_line({"a": 1}) + encode_line({"b": 2})


def test_group_commit_shares_one_fsync_among_concurrent_waiters(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path / "j.jsonl")

    async def many() -> None:
        async def one(n: int) -> None:
            writer.append({"n": n})
            await writer.durable()
        await asyncio.gather(*(one(n) for n in range(50)))

    asyncio.run(many())
    assert 1 <= writer.fsyncs < 50
    writer.close()


def test_realtime_clock_moves_are_journaled_and_replayed(tmp_path: Path) -> None:
    """Every clock move, realtime ones included, is an entry; a restart gets there."""
    path = tmp_path / "j.jsonl"
    client, _ = journaled(path, clock=ClockMode.REALTIME, speed=1000.0)
    for _ in range(3):
        time.sleep(0.02)
        assert client.get("/sim/v1/clock", headers=OP).status_code == 200
    before, now_ms = digest(client), client.sim.world.now_ms
    assert now_ms > 0
    client.close()
    assert any(e["k"] == "clock" for _, e in read_journal(path).entries)
    again, _ = journaled(path, clock=ClockMode.REALTIME, speed=1000.0)
    assert (digest(again), again.sim.world.now_ms) == (before, now_ms)
    again.close()


def test_serve_options_round_trip_through_a_fresh_app() -> None:
    assert create_app(ServeOptions(operator_token="operator-token-1")).state.sim.journal is None


def test_only_a_regular_file_is_read_as_a_journal(tmp_path: Path) -> None:
    """A directory, a FIFO (opened without blocking: no writer ever comes) and a device are
    refused by what they are; a link to a journal is followed."""
    journal = tmp_path / "j.jsonl"
    client, _ = journaled(journal)
    client.close()
    (tmp_path / "link.jsonl").symlink_to(journal)
    assert read_journal(tmp_path / "link.jsonl").header == read_journal(journal).header
    os.mkfifo(tmp_path / "fifo")
    refused: dict[str, str] = {}

    def read_all() -> None:
        for name, path in (("directory", tmp_path), ("FIFO", tmp_path / "fifo"),
                           ("character device", Path("/dev/null"))):
            with pytest.raises(JournalError) as caught:
                read_journal(path)
            refused[name] = str(caught.value)

    reader = threading.Thread(target=read_all, daemon=True)  # a regression blocks: it fails
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert refused == {name: f"{path}: is a {name}; a journal is a regular file (a device "
                             "may never end, a FIFO never answer)"
                       for name, path in (("directory", tmp_path), ("FIFO", tmp_path / "fifo"),
                                          ("character device", "/dev/null"))}
