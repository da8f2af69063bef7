"""Where ``thread export`` (and a ``--receipt``) may write (issue 33 items 5 and 7): never at the
SQLite store or the files SQLite keeps beside it, however the name is spelled (relative, through
``..``, a symbolic link to the folder or to the store); and an output that cannot be written is
a documented exit code, never exit 1, with nothing partial left."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import run

KEY = "acme:_:s-001"


def _opens(path: str) -> None:
    """LangGraph's own saver still reads the store."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path)
    try:
        assert SqliteSaver(conn).get_tuple({"configurable": {"thread_id": KEY}}) is not None
    finally:
        conn.close()


@pytest.fixture
def wal_store(sqlite_store, tmp_path) -> Path:
    conn = sqlite3.connect(sqlite_store)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # as SqliteSaver sets it
    conn.close()
    return sqlite_store


def _spellings(store: Path, tmp_path: Path) -> list[tuple[str, str]]:
    """(store argument, --output) pairs naming the store or a file beside it."""
    alias = tmp_path / "alias"
    alias.symlink_to(store.parent, target_is_directory=True)
    link = tmp_path / "link.db"
    link.symlink_to(store)
    name = store.name
    out = []
    for suffix in ("-wal", "-shm", "-journal"):
        out += [
            (str(store), str(store) + suffix),
            (str(store), str(store.parent / "x" / ".." / (name + suffix))),
            (str(store), str(alias / (name + suffix))),
            (str(link), str(store) + suffix),  # the store given through a link: SQLite's files are the target's
        ]
    out += [(str(store), str(alias / name)), (str(link), str(store))]
    return out


def test_export_never_writes_the_store_or_its_files(wal_store, tmp_path, monkeypatch):
    monkeypatch.chdir(wal_store.parent)
    before = wal_store.read_bytes()
    spellings = _spellings(wal_store, tmp_path) + [(str(wal_store), wal_store.name + "-wal")]  # relative
    for store_arg, output in spellings:
        for extra in ((), ("--force",)):
            r = run("thread", "export", "-s", store_arg, "-t", KEY, "-o", output, *extra)
            assert r.code == 2, (output, extra, r.code, r.err)
            assert "refusing to write there" in r.err and r.err.count("\n") == 1, r.err
    for suffix in ("-shm", "-journal"):
        assert not os.path.lexists(str(wal_store) + suffix)
    assert wal_store.read_bytes() == before
    assert run("threads", "list", "-s", str(wal_store)).code == 0
    _opens(str(wal_store))
    # The same names with more to them are ordinary outputs.
    ok = run("thread", "export", "-s", str(wal_store), "-t", KEY, "-o", str(wal_store) + "-wal.zip")
    assert ok.code == 0, ok.err


def test_a_receipt_is_never_the_store_or_its_files(wal_store, tmp_path):
    before = wal_store.read_bytes()
    for verb in (("thread", "erase"), ("thread", "prune")):
        for suffix in ("-wal", "-shm", "-journal"):
            r = run(*verb, "-s", str(wal_store), "-t", KEY, "--yes", "--receipt", str(wal_store) + suffix)
            assert r.code == 2 and "--receipt" in r.err, (verb, suffix, r.err)
    assert wal_store.read_bytes() == before
    _opens(str(wal_store))
