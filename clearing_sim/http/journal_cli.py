"""``clearing-sim journal show|export`` and what ``serve --journal`` does at start.

Public names: ``journal``, ``read_existing``, ``show_lines``, ``start_journal``.

A front door (STYLE.md): read the journal, call one function, print. A journal that cannot
be used (damaged, another version, seed, world file or operator token) exits 2 with the
reason, never a traceback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from starlette.applications import Starlette

from clearing_sim.http.journal import JournalError, JournalFile, read_journal
from clearing_sim.http.world_file import load_world_or_exit

__all__ = ["journal", "read_existing", "show_lines", "start_journal"]


def _fail(path: str | Path, message: str) -> click.exceptions.Exit:
    click.echo(f"journal {path}: {message}", err=True)
    return click.exceptions.Exit(2)


def read_existing(path: str | None) -> JournalFile | None:
    """The journal at ``path`` when there is one to replay (``None``: new or empty)."""
    if path is None:
        return None
    file = Path(path)
    if not file.exists() or (file.is_file() and file.stat().st_size == 0):
        return None
    try:
        return read_journal(file)
    except JournalError as error:
        raise _fail(path, str(error)) from None


def start_journal(app: Starlette, path: Path, world_file: str | None,
                  existing: JournalFile | None, *, token_given: bool) -> list[str]:
    """Journal the app's world to ``path`` (replaying it first when it exists); the lines
    to print; exit 2 when it cannot be used."""
    from clearing_sim.http.replay import open_journal

    if existing is not None and not token_given:
        raise _fail(path, "give --operator-token: the journal's key material needs the token "
                          "it was started with")
    world = None
    if world_file is not None:
        world = (Path(world_file).name, hashlib.sha256(Path(world_file).read_bytes())
                 .hexdigest())
    try:
        return open_journal(app, path, world, existing)
    except JournalError as error:
        raise _fail(path, str(error)) from None
    except OSError as error:
        raise _fail(path, f"cannot be written: {error.strerror or error}") from None


def _virtual(ms: int) -> str:
    seconds, milli = divmod(int(ms), 1000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    return f"+{hours:02d}:{minute:02d}:{second:02d}.{milli:03d}"


def _describe(entry: dict[str, Any]) -> str:
    kind = entry.get("k")
    if kind in ("api", "op", "issuer"):
        query = "&".join(f"{k}={v}" for k, v in entry.get("query", []))
        target = entry["path"] + (f"?{query}" if query else "")
        key = next((v for k, v in entry.get("headers", [])
                    if str(k).lower() == "idempotency-key"), None)
        extra = f" [Idempotency-Key: {key}]" if key else ""
        return f"{entry['method']} {target}{extra} -> {entry['status']}"
    if kind == "refused":
        codes = ", ".join(entry["codes"] or [])
        return f"{entry['method']} {entry['path']} -> {entry['status']} refused ({codes})"
    if kind == "dropped":
        return f"issuer webhook for {entry['issuerId']} -> 401 dropped"
    if kind == "clock":
        to = entry.get("to")
        where = f", clock to {_virtual(to)}" if to is not None else \
            ", stopped for real receivers"
        return f"clock: {entry['steps']} engine events{where}"
    if kind == "deliveries":
        statuses = ", ".join(str(s) for s, _ in entry["outcomes"])
        return f"real webhook deliveries answered: {statuses} (an older format)"
    if kind == "learned":
        statuses = ", ".join(f"#{n} {s}" for n, s, _ in entry["outcomes"])
        return f"real webhook outcomes learned: {statuses}"
    if kind == "checkpoint":
        return f"checkpoint {entry['name']} (digest {str(entry['digest'])[:16]}...)"
    if kind == "rewind":
        return f"rewind to {entry['to']}"
    return f"? {kind}"


def show_lines(file: JournalFile) -> Iterator[str]:
    """The journal, one readable line per entry, after a line about its header."""
    h = file.header
    world = "no world file" if h.world_sha256 is None else \
        f"world file {h.world_name} (sha256 {h.world_sha256[:16]}...)"
    yield (f"journal {file.path}: clearing-sim {h.version}, seed {h.seed}, {h.environment}, "
           f"{world}, {h.clock} clock"
           + (", real webhook deliveries" if h.deliver_webhooks else "")
           + "; key material needs the operator token (a check value is held, credentials "
             "are sealed)")
    yield f"{'n':>6}  {'virtual':<14}  entry"
    for _, entry in file.entries:
        yield f"{entry.get('n', '?'):>6}  {_virtual(entry.get('at', 0)):<14}  {_describe(entry)}"
    if file.torn_bytes:
        yield (f"torn last line: {file.torn_bytes} bytes (a crash mid-write; dropped when the "
               "server restarts)")


@click.group()
def journal() -> None:
    """Read a request journal written by clearing-sim serve --journal."""


@journal.command()
@click.argument("file", type=click.Path(dir_okay=False))
def show(file: str) -> None:
    """Print a journal readably: its header, then one line per entry.

    \b
    Example:
      clearing-sim journal show session.jsonl
    """
    try:
        read = read_journal(Path(file))
    except JournalError as error:
        raise _fail(file, str(error)) from None
    for line in show_lines(read):
        click.echo(line)


@journal.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--operator-token", required=True, metavar="TOKEN",
              help="The token the journal was written with (its key material needs it).")
@click.option("--world", "world_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE.yaml", help="The world file the journal was written with.")
def verify(file: str, operator_token: str, world_file: str | None) -> None:
    """Replay a journal into a fresh world, checking every answer; print the digest.

    Changes nothing: the journal is read, not appended to.

    \b
    Example:
      clearing-sim journal verify session.jsonl --operator-token devtoken1
    """
    from clearing_sim.http.replay import replay_copy

    try:
        read = read_journal(Path(file))
        sim = replay_copy(read, operator_token, _world(world_file))
    except JournalError as error:
        raise _fail(file, str(error)) from None
    click.echo(f"replayed {len(read.entries)} entries to virtual {sim.world.iso()}: digest "
               f"{sim.world.log.digest()} ({len(sim.world.log)} records)")


def _world(world_file: str | None) -> tuple[str, str, Any] | None:
    """(name, sha256, parsed world) of a world file; exit 2 when it cannot be used."""
    if world_file is None:
        return None
    parsed = load_world_or_exit(world_file)
    path = Path(world_file)
    return path.name, hashlib.sha256(path.read_bytes()).hexdigest(), parsed


@journal.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--scenario", "out", type=click.Path(dir_okay=False), required=True,
              metavar="OUT.yaml", help="Where to write the scenario file.")
@click.option("--operator-token", required=True, metavar="TOKEN",
              help="The token the journal was written with (its credentials are sealed).")
@click.option("--world", "world_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE.yaml", help="The world file the session was served with.")
@click.option("--name", default=None, help="The scenario's name.  [default: OUT's stem]")
def export(file: str, out: str, operator_token: str, world_file: str | None,
           name: str | None) -> None:
    """Write a scenario file that replays the journal's session and checks what it saw.

    Each request becomes a call expecting the status it got, each clock move an advance;
    the file ends with the session's digest, transaction states and balances. Run it with
    clearing-sim run; commit it under scenarios/ as a regression test.

    \b
    Example:
      clearing-sim journal export session.jsonl --world world.yaml \\
          --operator-token devtoken1 --scenario scenarios/found-by-hand.yaml
    """
    import yaml

    from clearing_sim.http.export import ExportError, export_scenario

    world = _world(world_file)
    try:
        read = read_journal(Path(file))
        cast = None
        if world is not None:
            assert world_file is not None
            cast = (*world, yaml.safe_load(Path(world_file).read_text(encoding="utf-8")))
        text, unsure = export_scenario(read, operator_token, cast, name or Path(out).stem)
    except (JournalError, ExportError) as error:
        raise _fail(file, str(error)) from None
    Path(out).write_text(text, encoding="utf-8")
    steps = len(yaml.safe_load(text)["steps"])
    click.echo(f"wrote {out}: {steps} steps; run it with clearing-sim run {out}")
    if unsure is not None:
        click.echo(f"note: the session's digest is not expected: {unsure}")
