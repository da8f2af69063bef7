"""Where ``thread export`` (and a ``--receipt``) may write (issue 33 items 5 and 7): never at the
SQLite store or the files SQLite keeps beside it, however the name is spelled (relative, through
``..``, a symbolic link to the folder or to the store); and an output that cannot be written is
a documented exit code, never exit 1, with nothing partial left."""

from __future__ import annotations

import os
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


# -- outputs that cannot be written (item 5) ------------------------------------------------------

FORMS = (".zip", ".tar.gz", "-dir")


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".partial" in p.name)


@pytest.mark.parametrize("form", FORMS)
def test_a_250_byte_name_is_written_and_a_256_byte_one_is_exit_2(sqlite_store, tmp_path, form):
    out = tmp_path / "out"
    out.mkdir()
    name = "b" * (250 - len(form)) + form
    r = run("thread", "export", "-s", str(sqlite_store), "-t", KEY, "-o", str(out / name))
    assert r.code == 0, r.err
    assert (out / name).exists() and _leftovers(out) == []
    again = run("thread", "export", "-s", str(sqlite_store), "-t", KEY, "-o", str(out / name), "--force")
    assert again.code == 0, again.err  # replacing it takes a temporary name too
    assert _leftovers(out) == []
    long = "c" * (256 - len(form)) + form
    r = run("thread", "export", "-s", str(sqlite_store), "-t", KEY, "-o", str(out / long))
    assert r.code == 2 and r.err.count("\n") == 1 and "255" in r.err, r.err
    assert sorted(p.name for p in out.iterdir()) == [name]


@pytest.mark.parametrize("output", ["x.zip/.", "x.tar.gz/..", "x-dir/.", "./", "."])
def test_a_name_ending_in_a_dot_folder_is_exit_2(sqlite_store, tmp_path, monkeypatch, output):
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    r = run("thread", "export", "-s", str(sqlite_store), "-t", KEY, "-o", output)
    assert r.code == 2 and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("form", FORMS)
def test_a_disk_that_fails_is_exit_4_with_nothing_left(sqlite_store, tmp_path, form):
    """Files may not grow past 1 KB (RLIMIT_FSIZE, with SIGXFSZ ignored: EFBIG, as a full disk's
    ENOSPC): the export stops with exit 4, one line, nothing at the target and no partial bundle."""
    import resource
    import signal
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    proc = subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "export", "-s", str(sqlite_store), "-t", KEY,
                             "--tools", "--with-state", "-o", str(out / f"b{form}")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limited)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 4, err
    assert err.count("\n") == 1 and "cannot be written" in err and "Traceback" not in err, err
    assert list(out.iterdir()) == []


def test_migrate_never_writes_a_store_at_the_sources_files(wal_store, tmp_path):
    """Found beyond the issue: ``migrate --to w.db-wal --init-target`` created a database at the
    source's write-ahead log, after which the source would not open (exit 4)."""
    before = wal_store.read_bytes()
    for suffix in ("-wal", "-shm", "-journal"):
        r = run("migrate", "--from", str(wal_store), "--to", str(wal_store) + suffix, "--init-target", "--all")
        assert r.code == 2 and "--to" in r.err, (suffix, r.code, r.err)
        assert not os.path.lexists(str(wal_store) + suffix) or suffix == "-wal"
    target = tmp_path / "t.db"
    r = run("migrate", "--from", str(target) + "-wal", "--to", str(target), "--init-target", "--all")
    assert r.code == 2 and "--from" in r.err, r.err
    assert wal_store.read_bytes() == before
    assert run("threads", "list", "-s", str(wal_store)).code == 0
    _opens(str(wal_store))
