"""Files a command creates or writes beside a store (issue #44 items 4 to 6).

- Creating a store never deletes a file it did not write: SQLite takes a -wal or -journal found
  beside a new, empty database for its own and deletes it, so ``symfonic demo q.db`` and ``migrate
  --to m.db --init-target`` refuse (exit 2, naming it) where one is there, and leave it as it was.
- A FIFO as ``--receipt`` of a dry run, or as the MCP server's ``--access-log`` (with ``--check``
  too), is refused at once (the real runs already refused it), never waited on: each command runs
  as a real process with a timeout.
- ``symfonic demo`` where the file cannot be created (under /proc and /sys, in a folder made
  immutable with chattr, a 255-byte name whose -journal name is too long): one line, exit 4 (2 for
  the name), and no file left behind that the next run would call "already exists"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run, run_process

SIDE = ("-wal", "-journal", "-shm")


@pytest.mark.parametrize("suffix", SIDE)
def test_demo_refuses_a_file_beside_the_new_store_and_keeps_it(tmp_path, suffix):
    stranger = tmp_path / f"q.db{suffix}"
    stranger.write_bytes(b"another store's log")
    res = run("demo", str(tmp_path / "q.db"))
    assert res.code == 2, res.err
    assert f"q.db{suffix} already exists" in res.err and res.err.count("\n") == 1 and "Traceback" not in res.err
    assert stranger.read_bytes() == b"another store's log"
    assert sorted(p.name for p in tmp_path.iterdir()) == [stranger.name]  # nothing written


def test_migrate_init_target_refuses_a_wal_beside_the_new_target(tmp_path, sqlite_store):
    stranger = tmp_path / "m.db-wal"
    stranger.write_bytes(b"another store's log")
    res = run("migrate", "--from", str(sqlite_store), "--to", str(tmp_path / "m.db"), "--all", "--init-target")
    assert res.code == 2, res.err
    assert "m.db-wal already exists" in res.err and "--to" in res.err and res.err.count("\n") == 1
    assert stranger.read_bytes() == b"another store's log"
    assert not (tmp_path / "m.db").exists()
    # Without the stranger the same command creates the target.
    stranger.unlink()
    assert run("migrate", "--from", str(sqlite_store), "--to", str(tmp_path / "m.db"), "--all", "--init-target").code == 0


def _fifo(tmp_path: Path) -> str:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize("args", [
    ("thread", "erase", "-t", "acme:_:s-001", "--dry-run"),
    ("thread", "erase", "-t", "acme:_:s-001", "--yes"),
    ("thread", "prune", "--all", "--dry-run"),
    ("thread", "prune", "--all", "--yes"),
    ("thread", "erase", "--inactive-for", "1d", "--dry-run"),
])
def test_a_fifo_receipt_is_refused_without_waiting(tmp_path, sqlite_store, args):
    fifo = _fifo(tmp_path)
    try:
        res = run_process(*args[:2], "-s", str(sqlite_store), *args[2:], "--receipt", fifo, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)} --receipt FIFO waited for a writer")
    assert res.code == 2, res.err
    assert "is not a regular file" in res.err and res.err.count("\n") == 1


@pytest.mark.parametrize("check", [True, False])
def test_a_fifo_access_log_is_refused_without_waiting(tmp_path, sqlite_store, check):
    fifo = _fifo(tmp_path)
    try:
        res = run_process("mcp", "-s", str(sqlite_store), "--tenant", "acme", "--access-log", fifo, *(["--check"] if check else []),
                          timeout=30, input="")
    except subprocess.TimeoutExpired:
        pytest.fail("mcp --access-log FIFO waited for a reader")
    assert res.code == 4, res.err
    assert "access log" in res.err and "not a regular file" in res.err and res.err.count("\n") == 1


def _immutable(folder: Path):
    subprocess.run(["chattr", "+i", str(folder)], check=True)


@pytest.mark.parametrize("where", ["proc", "sys", "immutable"])
def test_demo_where_the_file_cannot_be_created_is_one_line_exit_4(tmp_path, where):
    folder = {"proc": Path("/proc"), "sys": Path("/sys"), "immutable": tmp_path / "ro"}[where]
    if where == "immutable":
        folder.mkdir()
        _immutable(folder)  # read-only even for root (the suite runs as root)
    try:
        target = folder / "x.db"
        res = run("demo", str(target))
        assert res.code == 4, res.err
        assert res.err.startswith("symfonic: error: cannot create the demo store") and res.err.count("\n") == 1
        assert "Traceback" not in res.err and "unexpected" not in res.err
        assert not target.exists()
    finally:
        if where == "immutable":
            subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_demo_with_a_name_too_long_for_its_journal_leaves_nothing(tmp_path):
    name = "a" * 252 + ".db"  # 255 bytes: a valid name, but not with "-journal" after it
    res = run("demo", str(tmp_path / name))
    assert res.code == 2, res.err
    assert "too long" in res.err and "-journal" in res.err and res.err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
    # The next run is told the same, not that the store already exists.
    assert "too long" in run("demo", str(tmp_path / name)).err
    # A name with room for "-journal" is created.
    fits = "a" * 244 + ".db"
    assert run("demo", str(tmp_path / fits)).code == 0 and (tmp_path / fits).stat().st_size > 0


def test_a_fifo_where_the_run_lock_file_goes_is_refused(tmp_path, sqlite_store):
    """The lock file beside the store opens through the same rule: a FIFO there was exit 1."""
    os.mkfifo(f"{sqlite_store}.symfonic-lock")
    try:
        res = run_process("thread", "prune", "-s", str(sqlite_store), "--all", "--yes", timeout=30)
    finally:
        os.unlink(f"{sqlite_store}.symfonic-lock")
    assert res.code == 4, res.err
    assert "run lock file" in res.err and "not a regular file" in res.err and res.err.count("\n") == 1
