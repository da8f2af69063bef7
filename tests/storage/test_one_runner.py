"""One runner per store (issue #38 item 4): while a ``thread prune`` runs in a second, real process,
another prune or erase on the same store refuses to start (exit 10) naming the holder (its pid and
host), touching nothing; ``--wait`` waits for it and then runs; a dry run is not held up. SQLite: a
lock file beside the store; PostgreSQL: a session advisory lock; MongoDB: a lock document with an
expiry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import backend_for
from tests.support.backends import KINDS
from tests.support.cli import run, wait_for_receipt_record

FREE = "globex:_:s-101"


def _start_prune(url: str, receipt: Path) -> subprocess.Popen:
    env = {**os.environ, "SYMFONIC_FAULT_SLOW_THREAD": "0.6"}  # a slow night job: 0.6 s after each thread
    return subprocess.Popen([sys.executable, "-m", "symfonic_cli", "thread", "prune", "-s", url, "--all", "--yes", "-f", "json",
                             "--receipt", str(receipt)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.parametrize("kind", KINDS)
def test_a_second_run_refuses_naming_the_holder_and_wait_waits(kind, request, tmp_path):
    backend = backend_for(kind, request)
    url = backend.new_store()
    before = run("transcript", "show", "-s", url, "-t", FREE, "-f", "json").out
    first = _start_prune(url, tmp_path / "first.jsonl")
    try:
        wait_for_receipt_record(first, tmp_path / "first.jsonl")
        for args in (("thread", "prune", "-s", url, "--all", "--yes"), ("thread", "erase", "-s", url, "-t", FREE, "--yes")):
            res = run(*args)
            assert res.code == 10, (args, res.err)
            assert f"pid {first.pid}" in res.err and "thread prune" in res.err and "--wait" in res.err
            assert "Traceback" not in res.err and res.err.count("\n") == 1
        assert run("transcript", "show", "-s", url, "-t", FREE, "-f", "json").out == before  # nothing done
        # A dry run changes nothing and takes no lock.
        assert run("thread", "prune", "-s", url, "--all", "--dry-run", "-f", "json").code == 0
        # --wait: runs once the first has finished.
        waited = run("thread", "erase", "-s", url, "-t", FREE, "--yes", "-f", "json", "--wait")
        # The first had done every thread it planned before the waiting run started.
        records = [json.loads(line) for line in (tmp_path / "first.jsonl").read_text().splitlines()]
        assert len([r for r in records if r["record"] == "thread"]) == records[0]["threads_planned"]
    finally:
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert json.loads(out)["summary"]["failed"] == 0
    assert waited.code == 0, waited.err
    assert "waiting for" in waited.err and f"pid {first.pid}" in waited.err
    assert json.loads(waited.out)["summary"]["erased"] == 1
    # The lock is let go with the run: the next one starts at once.
    assert run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json").code == 0
    if kind == "sqlite":
        lock = Path(url + ".symfonic-lock")
        assert lock.exists() and lock.read_text() == "" and oct(lock.stat().st_mode & 0o777) == "0o600"


def test_a_dead_runners_mongodb_lock_expires(request):
    """A runner killed without letting go: its lock document expires and the next run takes it over."""
    from datetime import datetime, timedelta, timezone

    from tests.support.mongo_server import database_of

    backend = backend_for("mongodb", request)
    url = backend.new_store()
    locks = backend.client[database_of(url)]["symfonic_run_locks"]
    holder = {"operation": "prune", "host": "elsewhere", "pid": 4242, "started": "2026-01-01T00:00:00Z"}
    lock_id = {"checkpoints": "checkpoints", "writes": "checkpoint_writes"}
    locks.insert_one({"_id": lock_id, "token": "t", "holder": holder, "expires": datetime.now(timezone.utc) + timedelta(minutes=5)})
    res = run("thread", "prune", "-s", url, "--all", "--yes")
    assert res.code == 10 and "pid 4242 on host elsewhere" in res.err, res.err
    locks.update_one({"_id": lock_id}, {"$set": {"expires": datetime.now(timezone.utc) - timedelta(seconds=1)}})
    res = run("thread", "prune", "-s", url, "--all", "--yes", "-f", "json")
    assert res.code == 0, res.err
    assert locks.count_documents({}) == 0  # let go at the end of the run


def test_a_hostile_sqlite_lock_file_is_shown_escaped(tmp_path, request):
    backend = backend_for("sqlite", request)
    url = backend.new_store()
    import fcntl

    fd = os.open(url + ".symfonic-lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, json.dumps({"operation": "prune\x1b]0;pwned\x07", "pid": 7, "host": "h\x1b[31m"}).encode())
        res = run("thread", "erase", "-s", url, "-t", FREE, "--yes")
        assert res.code == 10
        assert "\x1b" not in res.err and "\x07" not in res.err and "pid 7" in res.err
    finally:
        os.close(fd)


@pytest.mark.postgres
def test_a_closed_postgres_run_has_let_go_of_its_lock_when_close_returns(request):
    """A script's second prune right after the first is not refused: the run lock is unlocked in
    the session before it ends (the server ends a closed session's locks after close() returns)."""
    import psycopg

    from symfonic_cli.location import parse_location
    from symfonic_cli.stores import open_store

    url = backend_for("postgres", request).new_store()
    for _ in range(5):
        store = open_store(parse_location(url), writable=True)
        assert store.take_run_lock("prune") is None
        pid = store.conn.info.backend_pid
        store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            held = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = %s", (pid,)).fetchone()[0]
        assert held == 0
        again = open_store(parse_location(url), writable=True)
        try:
            assert again.take_run_lock("prune") is None
        finally:
            again.close()
